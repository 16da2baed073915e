// Config: where the Kubernetes API server is and how to authenticate to it, loaded from a
// kubeconfig file (what kubectl uses) or from a pod's service account (in-cluster).
//
// Parsing is pure: ParseKubeconfig() turns kubeconfig text into a Config whose file references
// (certificate-authority, client-certificate, client-key, tokenFile, and an exec command given as
// a relative path) are absolute paths, resolved against the kubeconfig's own directory, and whose
// base64 *-data fields are decoded. The Load
// functions read files and the environment, and finish with ReadReferencedFiles(), which reads
// the certificate and key files into the *_data fields — so a loaded Config needs no more file
// access, except the bearer token file (token_file): service-account tokens are rotated, so
// HttpApi re-reads it periodically (FileTokenSource in token_source.h), and a credential plugin
// (exec), which HttpApi runs when it needs a token (kube/exec_plugin.h). Every error names the
// file, the entry and the key that is wrong or missing. Thread-safe (no shared state).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace dljob::kube {

// The ExecCredential versions dljob speaks with credential plugins.
inline constexpr const char* kExecApiV1 = "client.authentication.k8s.io/v1";
inline constexpr const char* kExecApiV1beta1 = "client.authentication.k8s.io/v1beta1";

// A kubeconfig user's credential plugin (users[].user.exec, client.authentication.k8s.io v1 or
// v1beta1): a program that prints an ExecCredential with a bearer token (or a client certificate)
// on stdout, as kubectl runs it for EKS (aws eks get-token), GKE (gke-gcloud-auth-plugin) and AKS
// (kubelogin). Parsed here; run by kube/exec_plugin.h.
struct ExecConfig {
  enum class InteractiveMode { kNever, kIfAvailable, kAlways };

  std::string api_version;  // "client.authentication.k8s.io/v1" or ".../v1beta1"
  // The program: a name looked up on PATH, or a path (a relative one containing '/' is resolved
  // against the directory of the kubeconfig that names it, as client-go does). "" = no plugin.
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to this process's environment
  InteractiveMode interactive_mode = InteractiveMode::kIfAvailable;  // v1 requires it be given
  bool provide_cluster_info = false;  // pass the cluster (KUBERNETES_EXEC_INFO spec.cluster)
  std::string install_hint;           // shown when the command is not found
  std::string where;                  // "/home/u/.kube/config: users[eks].user.exec", for messages

  bool enabled() const { return !command.empty(); }
};

struct Config {
  std::string server;   // "https://10.96.0.1:443", or "http://127.0.0.1:8080" for a test server
  std::string ca_data;  // PEM bundle trusted for the server; "" = the system's roots
  std::string client_cert_data;  // PEM client certificate (chain) for mTLS; "" = none
  std::string client_key_data;   // PEM private key matching client_cert_data
  std::string ca_file;           // file references not yet read (see ReadReferencedFiles)
  std::string client_cert_file;
  std::string client_key_file;
  bool insecure_skip_tls_verify = false;
  // The cluster's tls-server-name: the name the server's certificate must carry, and the SNI,
  // when `server` is an address the certificate does not name; "" = the host of `server`.
  std::string tls_server_name;
  // The cluster's proxy-url ("http://[user:password@]host:port"); "" = HTTPS_PROXY, HTTP_PROXY
  // and NO_PROXY decide, as for kubectl (http/proxy.h).
  std::string proxy_url;
  std::string token;  // bearer token; "" = none
  std::string
      token_file;  // bearer token read from this file (re-read periodically); wins over token
  // The user's credential plugin. Only set for a user with no token, tokenFile or client
  // certificate: those win when given (as an explicit token wins in kubectl), and the exec
  // section is then only checked.
  ExecConfig exec;
  std::string default_namespace = "default";  // the context's namespace (or the pod's)
  std::string
      source;  // where this came from, for messages: "kubeconfig /x (context y)", "in-cluster"
};

// The path of the service account files mounted into every pod.
inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

// Parses kubeconfig documents. `files` are (path, text) pairs in KUBECONFIG order: entries with the
// same name are taken from the first file that has them, as kubectl merges. `context` "" means the
// first current-context set. Referenced files are not read (see ReadReferencedFiles()).
struct KubeconfigFile {
  std::string path;
  std::string text;
};
Result<Config> ParseKubeconfig(const std::vector<KubeconfigFile>& files,
                               const std::string& context = "");

// Reads ca_file, client_cert_file and client_key_file (those set) into the *_data fields and
// clears them. Checks that each looks like PEM and that a certificate comes with a key.
Status ReadReferencedFiles(Config& config);

// Reads the kubeconfig at `paths` (a KUBECONFIG-style list, ':'-separated; missing files in a list
// are skipped as kubectl does, a single missing file is an error) and parses it.
Result<Config> LoadKubeconfig(const std::string& paths, const std::string& context = "");

// The in-cluster config from KUBERNETES_SERVICE_HOST / _PORT and the service account directory
// (token, ca.crt, namespace). `host`/`port` are the variables' values; `dir` is overridable for
// tests.
Result<Config> InClusterConfig(std::string_view host, std::string_view port,
                               const std::string& dir = kServiceAccountDir);
// The same, reading the two variables from the environment.
Result<Config> LoadInClusterConfig(const std::string& dir = kServiceAccountDir);

// How a program finds its cluster, in controller-runtime's order: an explicit kubeconfig path
// (--kubeconfig), else $KUBECONFIG, else in-cluster when KUBERNETES_SERVICE_HOST is set, else
// ~/.kube/config.
struct ConfigSource {
  std::string kubeconfig;  // explicit path (or ':'-list); "" = look further
  std::string context;     // kubeconfig context; "" = current-context
  std::string service_account_dir = kServiceAccountDir;
};
Result<Config> LoadConfig(const ConfigSource& source = {});

// kubectl's default kubeconfig, $HOME/.kube/config; "" when HOME is unset or empty.
std::string DefaultKubeconfigPath();

}  // namespace dljob::kube
