// See config.h: kubeconfig parsing (pure); config_load.cc reads files.
#include "kube/config.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "base/base64.h"
#include "http/proxy.h"

namespace dljob::kube {
namespace {

struct Doc {
  std::string path;
  YAML::Node root;
};

// A named entry (clusters[name].cluster, …) and the file it came from.
struct Entry {
  const Doc* doc = nullptr;
  YAML::Node node;
};

std::string Dirname(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string HomeDir() {
  const char* home = std::getenv("HOME");
  return home ? home : "";
}

std::string ResolvePath(const std::string& file, const std::string& kubeconfig_path) {
  if (file.empty() || file[0] == '/') return file;
  if (file.rfind("~/", 0) == 0) return HomeDir() + file.substr(1);
  return Dirname(kubeconfig_path) + "/" + file;
}

// An exec command: a bare name stays one (looked up on PATH when run); a path is resolved like a
// file reference, without "." and ".." steps, and stays a path (it keeps a '/').
std::string ResolveCommand(const std::string& command, const std::string& kubeconfig_path) {
  if (command.find('/') == std::string::npos) return command;
  std::string resolved =
      std::filesystem::path(ResolvePath(command, kubeconfig_path)).lexically_normal().string();
  return resolved.find('/') == std::string::npos ? "./" + resolved : resolved;
}

std::string Scalar(const YAML::Node& node, const char* key) {
  YAML::Node v = node[key];
  return v && v.IsScalar() ? v.Scalar() : "";
}

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

std::string Paths(const std::vector<Doc>& docs) {
  std::string out;
  for (const Doc& d : docs) out += (out.empty() ? "" : ":") + d.path;
  return out;
}

// `list_key` is "clusters", "users" or "contexts"; `inner_key` "cluster", "user", "context".
Result<std::optional<Entry>> FindNamed(const std::vector<Doc>& docs, const char* list_key,
                                       const char* inner_key, const std::string& name) {
  for (const Doc& doc : docs) {
    YAML::Node list = doc.root[list_key];
    if (!list || list.IsNull()) continue;
    if (!list.IsSequence()) {
      return Status::InvalidArgument(doc.path + ": " + list_key + ": must be a list");
    }
    for (const YAML::Node& item : list) {
      if (!item.IsMap() || Scalar(item, "name") != name) continue;
      YAML::Node inner = item[inner_key];
      if (inner && !inner.IsMap()) {
        return Status::InvalidArgument(doc.path + ": " + list_key + "[" + name + "]." + inner_key +
                                       ": must be a mapping");
      }
      return std::optional<Entry>(Entry{&doc, inner ? inner : YAML::Node(YAML::NodeType::Map)});
    }
  }
  return std::optional<Entry>();
}

std::vector<std::string> Names(const std::vector<Doc>& docs, const char* list_key) {
  std::vector<std::string> names;
  for (const Doc& doc : docs) {
    YAML::Node list = doc.root[list_key];
    if (!list || !list.IsSequence()) continue;
    for (const YAML::Node& item : list) {
      if (item.IsMap()) names.push_back(Scalar(item, "name"));
    }
  }
  return names;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "none" : out;
}

// Sets *data from `<key>-data` (base64) or *file from `<key>` (a path).
Status DataOrFile(const Entry& e, const std::string& where, const std::string& key,
                  std::string* data, std::string* file) {
  std::string encoded = Scalar(e.node, (key + "-data").c_str());
  if (!encoded.empty()) {
    std::optional<std::string> decoded = Base64Decode(encoded);
    if (!decoded) return Status::InvalidArgument(where + "." + key + "-data: not valid base64");
    *data = std::move(*decoded);
    return Status::Ok();
  }
  *file = ResolvePath(Scalar(e.node, key.c_str()), e.doc->path);
  return Status::Ok();
}

// Sets *out from `key` when present: it must be true or false.
Status ReadBool(const YAML::Node& node, const char* key, const std::string& where, bool* out) {
  YAML::Node v = node[key];
  if (!v || v.IsNull()) return Status::Ok();
  try {
    *out = v.as<bool>();
  } catch (const YAML::Exception&) {
    return Status::InvalidArgument(where + "." + key + ": must be true or false");
  }
  return Status::Ok();
}

// The strings of the list at `key` (absent = none).
Result<std::vector<std::string>> ReadStrings(const YAML::Node& node, const char* key,
                                             const std::string& where) {
  std::vector<std::string> out;
  YAML::Node list = node[key];
  if (!list || list.IsNull()) return out;
  if (!list.IsSequence()) return Status::InvalidArgument(where + "." + key + ": must be a list");
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].IsScalar()) {
      return Status::InvalidArgument(where + "." + key + "[" + std::to_string(i) +
                                     "]: must be a string");
    }
    out.push_back(list[i].Scalar());
  }
  return out;
}

Status ReadExecApiVersion(const YAML::Node& node, const std::string& where, ExecConfig& exec) {
  exec.api_version = Scalar(node, "apiVersion");
  if (exec.api_version == kExecApiV1 || exec.api_version == kExecApiV1beta1) return Status::Ok();
  std::string use = std::string("; use ") + kExecApiV1 + " or " + kExecApiV1beta1;
  if (exec.api_version.empty())
    return Status::InvalidArgument(where + ".apiVersion: missing" + use);
  if (exec.api_version == "client.authentication.k8s.io/v1alpha1") {
    return Status::InvalidArgument(where + ".apiVersion: " + exec.api_version +
                                   " is no longer supported (Kubernetes 1.24 removed it)" + use +
                                   ", which current versions of the plugin speak");
  }
  return Status::InvalidArgument(where + ".apiVersion: unknown version " + Quote(exec.api_version) +
                                 use);
}

Status ReadExecInteractiveMode(const YAML::Node& node, const std::string& where, ExecConfig& exec) {
  using Mode = ExecConfig::InteractiveMode;
  YAML::Node v = node["interactiveMode"];
  if (!v || v.IsNull()) {
    if (exec.api_version == kExecApiV1) {
      return Status::InvalidArgument(where + ".interactiveMode: missing; " + kExecApiV1 +
                                     " requires Never, IfAvailable or Always");
    }
    exec.interactive_mode = Mode::kIfAvailable;
    return Status::Ok();
  }
  std::string mode = v.IsScalar() ? v.Scalar() : "";
  if (mode == "Never") {
    exec.interactive_mode = Mode::kNever;
  } else if (mode == "IfAvailable") {
    exec.interactive_mode = Mode::kIfAvailable;
  } else if (mode == "Always") {
    exec.interactive_mode = Mode::kAlways;
  } else {
    return Status::InvalidArgument(where + ".interactiveMode: must be Never, IfAvailable or " +
                                   "Always, got " + Quote(mode));
  }
  return Status::Ok();
}

Status ReadExecEnv(const YAML::Node& node, const std::string& where, ExecConfig& exec) {
  YAML::Node list = node["env"];
  if (!list || list.IsNull()) return Status::Ok();
  if (!list.IsSequence()) return Status::InvalidArgument(where + ".env: must be a list");
  for (size_t i = 0; i < list.size(); ++i) {
    std::string at = where + ".env[" + std::to_string(i) + "]";
    if (!list[i].IsMap()) {
      return Status::InvalidArgument(at + ": must be a mapping with name and value");
    }
    std::string name = Scalar(list[i], "name");
    if (name.empty()) return Status::InvalidArgument(at + ".name: missing");
    if (name.find('=') != std::string::npos) {
      return Status::InvalidArgument(at + ".name: must not contain '=', got " + Quote(name));
    }
    YAML::Node value = list[i]["value"];
    if (value && !value.IsNull() && !value.IsScalar()) {
      return Status::InvalidArgument(at + ".value: must be a string");
    }
    exec.env.emplace_back(name, Scalar(list[i], "value"));
  }
  return Status::Ok();
}

// users[].user.exec; `where` names it ("/k: users[u].user.exec").
Status ReadExec(const YAML::Node& node, const std::string& where, const std::string& path,
                ExecConfig& exec) {
  if (!node.IsMap()) return Status::InvalidArgument(where + ": must be a mapping");
  exec.where = where;
  if (Status s = ReadExecApiVersion(node, where, exec); !s.ok()) return s;
  std::string command = Scalar(node, "command");
  if (command.empty()) return Status::InvalidArgument(where + ".command: missing");
  exec.command = ResolveCommand(command, path);
  Result<std::vector<std::string>> args = ReadStrings(node, "args", where);
  if (!args.ok()) return args.status();
  exec.args = std::move(args).value();
  if (Status s = ReadExecEnv(node, where, exec); !s.ok()) return s;
  if (Status s = ReadExecInteractiveMode(node, where, exec); !s.ok()) return s;
  if (Status s = ReadBool(node, "provideClusterInfo", where, &exec.provide_cluster_info); !s.ok()) {
    return s;
  }
  exec.install_hint = Scalar(node, "installHint");
  return Status::Ok();
}

Status ReadCluster(const Entry& e, const std::string& name, Config& config) {
  std::string where = e.doc->path + ": clusters[" + name + "].cluster";
  config.server = Scalar(e.node, "server");
  if (config.server.empty()) return Status::InvalidArgument(where + ".server: missing");
  if (config.server.rfind("https://", 0) != 0 && config.server.rfind("http://", 0) != 0) {
    return Status::InvalidArgument(where + ".server: must start with https:// or http://, got " +
                                   Quote(config.server));
  }
  if (Status s =
          ReadBool(e.node, "insecure-skip-tls-verify", where, &config.insecure_skip_tls_verify);
      !s.ok()) {
    return s;
  }
  config.tls_server_name = Scalar(e.node, "tls-server-name");
  config.proxy_url = Scalar(e.node, "proxy-url");
  if (!config.proxy_url.empty()) {
    if (Result<http::ProxyUrl> proxy = http::ParseProxyUrl(config.proxy_url); !proxy.ok()) {
      return Status::InvalidArgument(where + ".proxy-url: " + proxy.status().message());
    }
  }
  return DataOrFile(e, where, "certificate-authority", &config.ca_data, &config.ca_file);
}

Status ReadUser(const Entry& e, const std::string& name, Config& config) {
  std::string where = e.doc->path + ": users[" + name + "].user";
  Status s = DataOrFile(e, where, "client-certificate", &config.client_cert_data,
                        &config.client_cert_file);
  if (s.ok())
    s = DataOrFile(e, where, "client-key", &config.client_key_data, &config.client_key_file);
  if (!s.ok()) return s;
  config.token = Scalar(e.node, "token");
  config.token_file = ResolvePath(Scalar(e.node, "tokenFile"), e.doc->path);
  bool has_cert = !config.client_cert_data.empty() || !config.client_cert_file.empty();
  bool has_key = !config.client_key_data.empty() || !config.client_key_file.empty();
  if (has_cert != has_key) {
    return Status::InvalidArgument(where + ": " +
                                   (has_cert ? "client-certificate without client-key"
                                             : "client-key without client-certificate"));
  }
  bool has_auth = has_cert || !config.token.empty() || !config.token_file.empty();
  if (YAML::Node exec = e.node["exec"]; exec && !exec.IsNull()) {
    ExecConfig parsed;
    if (Status s = ReadExec(exec, where + ".exec", e.doc->path, parsed); !s.ok()) return s;
    if (!has_auth) config.exec = std::move(parsed);  // else checked, but the static ones win
  }
  if (e.node["auth-provider"] && !has_auth) {
    return Status::InvalidArgument(
        where + ".auth-provider: " +
        (config.exec.enabled()
             ? std::string("cannot be combined with exec; remove one of them")
             : std::string("auth-provider plugins are not supported (client-go removed its "
                           "gcp, azure and oidc providers); use an exec credential plugin "
                           "(users[].user.exec), such as gke-gcloud-auth-plugin or kubelogin")));
  }
  return Status::Ok();
}

}  // namespace

Result<Config> ParseKubeconfig(const std::vector<KubeconfigFile>& files,
                               const std::string& context) {
  std::vector<Doc> docs;
  for (const KubeconfigFile& f : files) {
    try {
      YAML::Node root = YAML::Load(f.text);
      if (root.IsNull()) continue;
      if (!root.IsMap()) return Status::InvalidArgument(f.path + ": not a kubeconfig (a mapping)");
      docs.push_back({f.path, root});
    } catch (const YAML::Exception& e) {
      return Status::InvalidArgument(f.path + ": not valid YAML: " + e.what());
    }
  }
  if (docs.empty()) {
    std::string paths;
    for (const KubeconfigFile& f : files) paths += (paths.empty() ? "" : ":") + f.path;
    return Status::NotFound("no kubeconfig content in " + (paths.empty() ? "(no files)" : paths));
  }
  std::string name = context;
  for (size_t i = 0; name.empty() && i < docs.size(); ++i) {
    name = Scalar(docs[i].root, "current-context");
  }
  if (name.empty()) {
    return Status::InvalidArgument("no current-context in " + Paths(docs) +
                                   "; pass a context (known: " + Join(Names(docs, "contexts")) +
                                   ")");
  }
  Result<std::optional<Entry>> ctx = FindNamed(docs, "contexts", "context", name);
  if (!ctx.ok()) return ctx.status();
  if (!*ctx) {
    return Status::NotFound("context " + Quote(name) + " not found in " + Paths(docs) +
                            " (known: " + Join(Names(docs, "contexts")) + ")");
  }
  Config config;
  config.source = "kubeconfig " + Paths(docs) + " (context " + name + ")";
  std::string ctx_where = (*ctx)->doc->path + ": contexts[" + name + "].context";
  std::string cluster = Scalar((*ctx)->node, "cluster");
  if (cluster.empty()) return Status::InvalidArgument(ctx_where + ".cluster: missing");
  Result<std::optional<Entry>> c = FindNamed(docs, "clusters", "cluster", cluster);
  if (!c.ok()) return c.status();
  if (!*c) {
    return Status::NotFound("cluster " + Quote(cluster) + " (of context " + Quote(name) +
                            ") not found in " + Paths(docs));
  }
  if (Status s = ReadCluster(**c, cluster, config); !s.ok()) return s;
  if (std::string user = Scalar((*ctx)->node, "user"); !user.empty()) {
    Result<std::optional<Entry>> u = FindNamed(docs, "users", "user", user);
    if (!u.ok()) return u.status();
    if (!*u) {
      return Status::NotFound("user " + Quote(user) + " (of context " + Quote(name) +
                              ") not found in " + Paths(docs));
    }
    if (Status s = ReadUser(**u, user, config); !s.ok()) return s;
  }
  std::string ns = Scalar((*ctx)->node, "namespace");
  if (!ns.empty()) config.default_namespace = ns;
  return config;
}

}  // namespace dljob::kube
