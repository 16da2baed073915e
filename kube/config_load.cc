// See config.h: the parts that read files and the environment.
#include <cctype>
#include <cstdlib>
#include <sstream>
#include <utility>

#include "base/env.h"
#include "kube/config.h"

namespace dljob::kube {
namespace {

// The file's content; an error names `what` it was for: `kubeconfig: cannot open "/x": …`.
Result<std::string> ReadFile(const std::string& path, const std::string& what) {
  Result<std::string> text = DefaultEnv().ReadFile(path);
  if (!text.ok()) return text.status().WithContext(what);
  return text;
}

}  // namespace

Status ReadReferencedFiles(Config& config) {
  struct Ref {
    std::string* file;
    std::string* data;
    const char* what;
  };
  for (Ref ref : {Ref{&config.ca_file, &config.ca_data, "certificate-authority"},
                  Ref{&config.client_cert_file, &config.client_cert_data, "client-certificate"},
                  Ref{&config.client_key_file, &config.client_key_data, "client-key"}}) {
    if (!ref.file->empty()) {
      Result<std::string> text = ReadFile(*ref.file, ref.what);
      if (!text.ok()) return text.status().WithContext(config.source);
      *ref.data = std::move(text).value();
      ref.file->clear();
    }
    if (!ref.data->empty() && ref.data->find("-----BEGIN ") == std::string::npos) {
      return Status::InvalidArgument(config.source + ": " + ref.what + " is not PEM data");
    }
  }
  if (config.client_cert_data.empty() != config.client_key_data.empty()) {
    return Status::InvalidArgument(config.source +
                                   ": a client certificate needs a client key and vice versa");
  }
  return Status::Ok();
}

Result<Config> LoadKubeconfig(const std::string& paths, const std::string& context) {
  std::vector<std::string> list;
  std::stringstream ss(paths);
  for (std::string p; std::getline(ss, p, ':');) {
    if (!p.empty()) list.push_back(p);
  }
  if (list.empty()) return Status::InvalidArgument("no kubeconfig path given");
  std::vector<KubeconfigFile> files;
  for (const std::string& p : list) {
    Result<std::string> text = ReadFile(p, "kubeconfig");
    if (text.ok()) {
      files.push_back({p, std::move(text).value()});
    } else if (list.size() == 1) {
      return text.status();
    }
  }
  if (files.empty()) return Status::NotFound("none of the kubeconfig files exist: " + paths);
  Result<Config> config = ParseKubeconfig(files, context);
  if (!config.ok()) return config;
  if (Status s = ReadReferencedFiles(*config); !s.ok()) return s;
  return config;
}

Result<Config> InClusterConfig(std::string_view host, std::string_view port,
                               const std::string& dir) {
  if (host.empty() || port.empty()) {
    return Status::FailedPrecondition(
        "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset");
  }
  Config config;
  config.source = "in-cluster (" + dir + ")";
  std::string h(host);
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6
  config.server = "https://" + h + ":" + std::string(port);
  config.token_file = dir + "/token";
  Result<std::string> token = ReadFile(config.token_file, "service account token");
  if (!token.ok()) return token.status().WithContext("in-cluster config");
  config.token = *token;
  while (!config.token.empty() && std::isspace(static_cast<unsigned char>(config.token.back()))) {
    config.token.pop_back();
  }
  config.ca_file = dir + "/ca.crt";
  if (Result<std::string> ns = ReadFile(dir + "/namespace", "namespace"); ns.ok()) {
    std::string n = *ns;
    while (!n.empty() && std::isspace(static_cast<unsigned char>(n.back()))) n.pop_back();
    if (!n.empty()) config.default_namespace = n;
  }
  if (Status s = ReadReferencedFiles(config); !s.ok()) return s;
  return config;
}

Result<Config> LoadInClusterConfig(const std::string& dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  return InClusterConfig(host ? host : "", port ? port : "", dir);
}

Result<Config> LoadConfig(const ConfigSource& source) {
  if (!source.kubeconfig.empty()) return LoadKubeconfig(source.kubeconfig, source.context);
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    return LoadKubeconfig(env, source.context);
  }
  if (const char* host = std::getenv("KUBERNETES_SERVICE_HOST"); host && *host) {
    return LoadInClusterConfig(source.service_account_dir);
  }
  std::string path = DefaultKubeconfigPath();
  if (path.empty()) {
    return Status::NotFound(
        "no cluster configured: no --kubeconfig, $KUBECONFIG, in-cluster "
        "environment or $HOME");
  }
  return LoadKubeconfig(path, source.context);
}

std::string DefaultKubeconfigPath() {
  const char* home = std::getenv("HOME");
  return home && *home ? std::string(home) + "/.kube/config" : "";
}

}  // namespace dljob::kube
