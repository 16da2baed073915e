// See config.h: kubeconfig parsing (pure) and base64; config_load.cc reads files.
#include "kube/config.h"

#include <cctype>
#include <cstdlib>
#include <sstream>
#include <utility>

#include <yaml-cpp/yaml.h>

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

Status ReadCluster(const Entry& e, const std::string& name, Config& config) {
  std::string where = e.doc->path + ": clusters[" + name + "].cluster";
  config.server = Scalar(e.node, "server");
  if (config.server.empty()) return Status::InvalidArgument(where + ".server: missing");
  if (config.server.rfind("https://", 0) != 0 && config.server.rfind("http://", 0) != 0) {
    return Status::InvalidArgument(where + ".server: must start with https:// or http://, got " +
                                   Quote(config.server));
  }
  if (YAML::Node insecure = e.node["insecure-skip-tls-verify"]) {
    try {
      config.insecure_skip_tls_verify = insecure.as<bool>();
    } catch (const YAML::Exception&) {
      return Status::InvalidArgument(where + ".insecure-skip-tls-verify: must be true or false");
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
  for (const char* plugin : {"exec", "auth-provider"}) {
    if (!has_auth && e.node[plugin]) {
      return Status::InvalidArgument(where + "." + plugin +
                                     ": credential plugins are not supported; use a token, "
                                     "tokenFile or a client certificate");
    }
  }
  return Status::Ok();
}

}  // namespace

std::optional<std::string> Base64Decode(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  bool padding = false;
  for (char c : in) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    int v = value(c);
    if (v < 0 || padding) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  if (bits >= 6) return std::nullopt;  // a lone trailing character cannot be a whole byte
  return out;
}

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
