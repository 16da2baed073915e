#include "kube/config.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace dljob::kube {
namespace {

namespace fs = std::filesystem;

const char kPem[] = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const char kKeyPem[] = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";

// A temporary directory, removed with everything in it when the test ends (pass or fail).
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "kube_config_test.XXXXXX").string();
    path_ = mkdtemp(tmpl.data()) ? tmpl : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  std::string Write(const std::string& name, const std::string& text) const {
    std::string p = path_ + "/" + name;
    fs::create_directories(fs::path(p).parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

const char kTwoContexts[] = R"(
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://dev.example:6443
    certificate-authority: certs/ca.pem
- name: prod-cluster
  cluster:
    server: https://prod.example:6443
    insecure-skip-tls-verify: true
contexts:
- name: dev
  context: {cluster: dev-cluster, user: dev-user, namespace: team-a}
- name: prod
  context: {cluster: prod-cluster, user: prod-user}
users:
- name: dev-user
  user:
    client-certificate: certs/client.pem
    client-key: /abs/client.key
- name: prod-user
  user:
    token: s3cret
)";

TEST(ParseKubeconfig, CurrentContextWithRelativeFileRefs) {
  auto c = ParseKubeconfig({{"/home/u/.kube/config", kTwoContexts}});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->server, "https://dev.example:6443");
  EXPECT_EQ(c->ca_file, "/home/u/.kube/certs/ca.pem");
  EXPECT_EQ(c->client_cert_file, "/home/u/.kube/certs/client.pem");
  EXPECT_EQ(c->client_key_file, "/abs/client.key");
  EXPECT_EQ(c->default_namespace, "team-a");
  EXPECT_FALSE(c->insecure_skip_tls_verify);
  EXPECT_EQ(c->token, "");
  EXPECT_NE(c->source.find("context dev"), std::string::npos);
}

TEST(ParseKubeconfig, ExplicitContext) {
  auto c = ParseKubeconfig({{"/k", kTwoContexts}}, "prod");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->server, "https://prod.example:6443");
  EXPECT_TRUE(c->insecure_skip_tls_verify);
  EXPECT_EQ(c->token, "s3cret");
  EXPECT_EQ(c->default_namespace, "default");
  EXPECT_EQ(c->ca_file, "");
}

TEST(ParseKubeconfig, DataFieldsAreBase64Decoded) {
  const char text[] = R"(
current-context: c
clusters: [{name: k, cluster: {server: "http://127.0.0.1:8080", certificate-authority-data: "aGVsbG8=",
            certificate-authority: ignored.pem}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {client-certificate-data: "Y2VydA==", client-key-data: "a2V5", tokenFile: tok}}]
)";
  auto c = ParseKubeconfig({{"/etc/k/config", text}});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->ca_data, "hello");
  EXPECT_EQ(c->ca_file, "");  // data wins over the file
  EXPECT_EQ(c->client_cert_data, "cert");
  EXPECT_EQ(c->client_key_data, "key");
  EXPECT_EQ(c->token_file, "/etc/k/tok");
}

TEST(ParseKubeconfig, MergesFilesFirstOneWins) {
  const char first[] = R"(
current-context: b
clusters: [{name: shared, cluster: {server: "https://first:1"}}]
contexts: [{name: a, context: {cluster: shared}}]
)";
  const char second[] = R"(
current-context: a
clusters: [{name: shared, cluster: {server: "https://second:2"}}, {name: other, cluster: {server: "https://other:3"}}]
contexts: [{name: b, context: {cluster: other, user: u}}]
users: [{name: u, user: {token: t}}]
)";
  auto c = ParseKubeconfig({{"/one", first}, {"/two", second}});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->server,
            "https://other:3");  // current-context "b" from the first file, defined in the second
  EXPECT_EQ(c->token, "t");
  c = ParseKubeconfig({{"/one", first}, {"/two", second}}, "a");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->server, "https://first:1");  // "shared" from the first file
  EXPECT_NE(c->source.find("/one:/two"), std::string::npos);
}

void ExpectError(const Result<Config>& c, std::initializer_list<std::string> parts) {
  ASSERT_FALSE(c.ok());
  for (const std::string& part : parts) {
    EXPECT_NE(c.status().message().find(part), std::string::npos)
        << "\"" << part << "\" not in: " << c.status().message();
  }
}

TEST(ParseKubeconfig, ErrorsNameFileAndKey) {
  ExpectError(ParseKubeconfig({{"/k", kTwoContexts}}, "nope"),
              {"context \"nope\" not found", "/k", "known: dev, prod"});
  ExpectError(ParseKubeconfig({{"/k", "clusters: []\ncontexts: [{name: x}]\n"}}),
              {"no current-context in /k", "known: x"});
  ExpectError(ParseKubeconfig({{"/k", "current-context: x\ncontexts: [{name: x, context: {}}]\n"}}),
              {"/k: contexts[x].context.cluster: missing"});
  ExpectError(ParseKubeconfig({{"/k",
                                "current-context: x\ncontexts: [{name: x, context: "
                                "{cluster: c}}]\nclusters: [{name: c, cluster: {}}]\n"}}),
              {"/k: clusters[c].cluster.server: missing"});
  ExpectError(ParseKubeconfig({{"/k",
                                "current-context: x\ncontexts: [{name: x, context: "
                                "{cluster: c}}]\nclusters: [{name: c, cluster: "
                                "{server: ftp://x}}]\n"}}),
              {"/k: clusters[c].cluster.server: must start with https://"});
  ExpectError(ParseKubeconfig({{"/k",
                                "current-context: x\ncontexts: [{name: x, context: "
                                "{cluster: c}}]\n"}}),
              {"cluster \"c\"", "not found in /k"});
  ExpectError(ParseKubeconfig({{"/k",
                                "current-context: x\ncontexts: [{name: x, context: "
                                "{cluster: c, user: u}}]\nclusters: [{name: c, cluster: "
                                "{server: http://x}}]\n"}}),
              {"user \"u\"", "not found in /k"});
  const char bad_user[] =
      "current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
      "clusters: [{name: c, cluster: {server: http://x}}]\nusers: [{name: u, user: ";
  ExpectError(ParseKubeconfig({{"/k", std::string(bad_user) + "{client-certificate: a}}]\n"}}),
              {"/k: users[u].user: client-certificate without client-key"});
  ExpectError(ParseKubeconfig({{"/k", std::string(bad_user) + "{client-key-data: '!!'}}]\n"}}),
              {"/k: users[u].user.client-key-data: not valid base64"});
  ExpectError(ParseKubeconfig({{"/k",
                                "clusters: {a: 1}\ncurrent-context: x\n"
                                "contexts: [{name: x, context: {cluster: a}}]\n"}}),
              {"/k: clusters: must be a list"});
  ExpectError(ParseKubeconfig({{"/k", "a: [unclosed"}}), {"/k: not valid YAML"});
  ExpectError(ParseKubeconfig({{"/k", "- a list"}}), {"/k: not a kubeconfig"});
  ExpectError(ParseKubeconfig({{"/k", ""}, {"/l", ""}}), {"no kubeconfig content in /k:/l"});
}

TEST(LoadKubeconfig, ReadsReferencedFilesAndMergesAList) {
  TempDir dir;
  dir.Write("certs/ca.pem", kPem);
  dir.Write("certs/client.pem", kPem);
  std::string key = dir.Write("client.key", kKeyPem);
  std::string text = kTwoContexts;
  text.replace(text.find("/abs/client.key"), 15, key);
  std::string main = dir.Write("config", text);
  std::string missing = dir.path() + "/does-not-exist";
  auto c = LoadKubeconfig(missing + ":" + main);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->ca_data, kPem);
  EXPECT_EQ(c->client_cert_data, kPem);
  EXPECT_EQ(c->client_key_data, kKeyPem);
  EXPECT_EQ(c->ca_file, "");
  EXPECT_EQ(c->client_key_file, "");
}

TEST(LoadKubeconfig, MissingOrBadFilesAreNamed) {
  TempDir dir;
  ExpectError(LoadKubeconfig(dir.path() + "/nope"), {"kubeconfig", "/nope", "cannot open"});
  ExpectError(LoadKubeconfig(""), {"no kubeconfig path"});
  std::string config = dir.Write("config", kTwoContexts);
  ExpectError(LoadKubeconfig(config), {"certificate-authority", "certs/ca.pem", "cannot open"});
  dir.Write("certs/ca.pem", "not a certificate");
  ExpectError(LoadKubeconfig(config), {"certificate-authority is not PEM data", config});
}

TEST(InClusterConfig, FromAServiceAccountDirectory) {
  TempDir dir;
  dir.Write("token", "tok-123\n");
  dir.Write("ca.crt", kPem);
  dir.Write("namespace", "team-b\n");
  auto c = InClusterConfig("10.96.0.1", "443", dir.path());
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->token, "tok-123");
  EXPECT_EQ(c->token_file, dir.path() + "/token");
  EXPECT_EQ(c->ca_data, kPem);
  EXPECT_EQ(c->default_namespace, "team-b");

  auto v6 = InClusterConfig("fd00::1", "6443", dir.path());
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->server, "https://[fd00::1]:6443");
}

TEST(InClusterConfig, Errors) {
  TempDir dir;
  ExpectError(InClusterConfig("", "443", dir.path()), {"KUBERNETES_SERVICE_HOST"});
  ExpectError(InClusterConfig("10.0.0.1", "443", dir.path()),
              {"service account token", dir.path() + "/token"});
  dir.Write("token", "t");
  ExpectError(InClusterConfig("10.0.0.1", "443", dir.path()), {dir.path() + "/ca.crt"});
}

TEST(LoadConfig, ExplicitPathWinsOverTheEnvironment) {
  TempDir dir;
  std::string config = dir.Write("config",
                                 "current-context: x\ncontexts: [{name: x, context: "
                                 "{cluster: c}}]\nclusters: [{name: c, cluster: "
                                 "{server: http://127.0.0.1:1}}]\n");
  auto c = LoadConfig({config, "", dir.path()});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->server, "http://127.0.0.1:1");
}

}  // namespace
}  // namespace dljob::kube
