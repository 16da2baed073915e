#include "kube/exec_credential.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace dljob::kube {
namespace {

using Json = nlohmann::json;
using Mode = ExecConfig::InteractiveMode;

std::string Answer(const std::string& api_version, const Json& status) {
  Json j = {{"apiVersion", api_version}, {"kind", "ExecCredential"}, {"status", status}};
  return j.dump();
}

TEST(DecodeExecCredential, TokenWithExpiryInBothVersions) {
  for (const char* version : {kExecApiV1, kExecApiV1beta1}) {
    auto c = DecodeExecCredential(
        Answer(version, {{"token", "t0k"}, {"expirationTimestamp", "2026-01-02T03:19:05Z"}}),
        version);
    ASSERT_TRUE(c.ok()) << version << ": " << c.status().message();
    EXPECT_EQ(c->token, "t0k");
    ASSERT_TRUE(c->expiration);
    EXPECT_EQ(FormatRfc3339(*c->expiration), "2026-01-02T03:19:05Z");
    EXPECT_EQ(c->client_cert_data, "");
  }
}

TEST(DecodeExecCredential, CertificateAndKeyWithoutExpiry) {
  auto c = DecodeExecCredential(
      Answer(kExecApiV1, {{"clientCertificateData", "CERT"}, {"clientKeyData", "KEY"}}),
      kExecApiV1);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->token, "");
  EXPECT_EQ(c->client_cert_data, "CERT");
  EXPECT_EQ(c->client_key_data, "KEY");
  EXPECT_FALSE(c->expiration);
  // A fractional, offset timestamp is RFC 3339 too; a null one is no expiry.
  c = DecodeExecCredential(
      Answer(kExecApiV1, {{"token", "t"}, {"expirationTimestamp", "2026-01-02T05:04:05.5+02:00"}}),
      kExecApiV1);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(FormatRfc3339(*c->expiration), "2026-01-02T03:04:05Z");
  c = DecodeExecCredential(Answer(kExecApiV1, {{"token", "t"}, {"expirationTimestamp", nullptr}}),
                           kExecApiV1);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->expiration);
}

TEST(DecodeExecCredential, EveryErrorSaysWhatIsWrong) {
  struct Case {
    std::string out;
    std::string want;
  };
  const Case cases[] = {
      {"", "its output is not a JSON object (0 bytes on stdout"},
      {"secret-token-printed-raw\n", "its output is not a JSON object (25 bytes on stdout"},
      {"[1, 2]", "its output is not a JSON object (6 bytes"},
      {R"({"kind":"ExecCredential","status":{"token":"t"}})",
       "apiVersion: missing; the plugin must answer client.authentication.k8s.io/v1"},
      {Answer(kExecApiV1beta1, {{"token", "t"}}),
       "apiVersion: the plugin answered \"client.authentication.k8s.io/v1beta1\", but the "
       "kubeconfig asks for \"client.authentication.k8s.io/v1\""},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"Pod","status":{"token":"t"}})",
       "kind: must be ExecCredential, got \"Pod\""},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","status":{"token":"t"}})",
       "kind: must be ExecCredential, got none"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"})",
       "status: missing; the plugin returned no credential"},
      {Answer(kExecApiV1, "token"), "status: must be an object"},
      {Answer(kExecApiV1, Json::object()),
       "status: neither a token nor clientCertificateData and clientKeyData"},
      {Answer(kExecApiV1, {{"token", ""}}), "status: neither a token"},
      {Answer(kExecApiV1, {{"token", 42}}), "status.token: must be a string"},
      {Answer(kExecApiV1, {{"clientCertificateData", "C"}}),
       "status.clientCertificateData without clientKeyData"},
      {Answer(kExecApiV1, {{"clientKeyData", "K"}}),
       "status.clientKeyData without clientCertificateData"},
      {Answer(kExecApiV1, {{"token", "t"}, {"expirationTimestamp", "tomorrow"}}),
       "status.expirationTimestamp: not an RFC 3339 time: \"tomorrow\""},
      {Answer(kExecApiV1, {{"token", "t"}, {"expirationTimestamp", 1767323045}}),
       "status.expirationTimestamp: must be a string"},
  };
  for (const Case& c : cases) {
    auto got = DecodeExecCredential(c.out, kExecApiV1);
    ASSERT_FALSE(got.ok()) << c.out;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(got.status().message().rfind(c.want, 0), 0u)
        << "got: " << got.status().message() << "\nwant prefix: " << c.want;
    EXPECT_EQ(got.status().message().find("secret-token"), std::string::npos);
  }
}

Config ExecConfigFor(const char* version) {
  Config config;
  config.server = "https://eks.example:443";
  config.exec.api_version = version;
  config.exec.command = "aws";
  return config;
}

TEST(ExecInfo, InteractiveOnlyUnlessClusterInfoIsAskedFor) {
  Config config = ExecConfigFor(kExecApiV1);
  config.ca_data = "-----BEGIN CERTIFICATE-----\n";
  EXPECT_EQ(Json::parse(ExecInfo(config, false)),
            Json::parse(R"({"apiVersion":"client.authentication.k8s.io/v1",
                            "kind":"ExecCredential","spec":{"interactive":false}})"));
  config.exec.api_version = kExecApiV1beta1;
  EXPECT_EQ(Json::parse(ExecInfo(config, true))["spec"], Json({{"interactive", true}}));
  EXPECT_EQ(Json::parse(ExecInfo(config, true))["apiVersion"], kExecApiV1beta1);
}

TEST(ExecInfo, ClusterInfoCarriesWhatIsSet) {
  Config config = ExecConfigFor(kExecApiV1);
  config.exec.provide_cluster_info = true;
  EXPECT_EQ(Json::parse(ExecInfo(config, false))["spec"]["cluster"],
            Json({{"server", "https://eks.example:443"}}));
  config.ca_data = "-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n";
  config.tls_server_name = "kubernetes";
  config.insecure_skip_tls_verify = true;
  EXPECT_EQ(
      Json::parse(ExecInfo(config, false))["spec"]["cluster"],
      Json({{"server", "https://eks.example:443"},
            {"tls-server-name", "kubernetes"},
            {"insecure-skip-tls-verify", true},
            {"certificate-authority-data",
             "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSQotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg=="}}));
}

TEST(ExecInteractive, EveryModeTerminalAndPermission) {
  struct Case {
    Mode mode;
    bool terminal;
    bool allowed;
    std::optional<bool> want;  // nullopt: an error
  };
  const Case cases[] = {
      {Mode::kNever, true, true, false},          {Mode::kNever, false, false, false},
      {Mode::kIfAvailable, true, true, true},     {Mode::kIfAvailable, false, true, false},
      {Mode::kIfAvailable, true, false, false},   {Mode::kIfAvailable, false, false, false},
      {Mode::kAlways, true, true, true},          {Mode::kAlways, false, true, std::nullopt},
      {Mode::kAlways, true, false, std::nullopt}, {Mode::kAlways, false, false, std::nullopt},
  };
  for (const Case& c : cases) {
    ExecConfig exec;
    exec.interactive_mode = c.mode;
    exec.where = "/k: users[u].user.exec";
    auto got = ExecInteractive(exec, c.terminal, c.allowed);
    SCOPED_TRACE(::testing::Message() << static_cast<int>(c.mode) << " terminal=" << c.terminal
                                      << " allowed=" << c.allowed);
    ASSERT_EQ(got.ok(), c.want.has_value()) << got.status().message();
    if (c.want) {
      EXPECT_EQ(*got, *c.want);
    }
  }
  ExecConfig exec;
  exec.interactive_mode = Mode::kAlways;
  exec.where = "/k: users[u].user.exec";
  EXPECT_EQ(ExecInteractive(exec, false, true).status().message(),
            "/k: users[u].user.exec.interactiveMode: Always, but standard input is not a "
            "terminal; run it from a terminal, or use a plugin that can work with "
            "interactiveMode IfAvailable or Never");
  EXPECT_NE(ExecInteractive(exec, true, false)
                .status()
                .message()
                .find("Always, but this program never runs plugins interactively"),
            std::string::npos);
}

ExecConfig Aws() {
  ExecConfig exec;
  exec.where = "/home/u/.kube/config: users[eks].user.exec";
  exec.command = "aws";
  exec.args = {"eks", "get-token", "--cluster-name", "my cluster"};
  exec.install_hint = "Install the AWS CLI:\n  https://aws.amazon.com/cli/\n";
  return exec;
}

TEST(ExecFailures, NotFoundAddsTheInstallHint) {
  EXPECT_EQ(ExecCommandLine(Aws()), "aws eks get-token --cluster-name 'my cluster'");
  Status s =
      ExecStartFailure(Aws(), Status::NotFound("cannot run \"aws\": No such file or directory"));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "/home/u/.kube/config: users[eks].user.exec: cannot run the credential plugin \"aws "
            "eks get-token --cluster-name 'my cluster'\": cannot run \"aws\": No such file or "
            "directory (not on PATH); Install the AWS CLI: | https://aws.amazon.com/cli/");
  ExecConfig no_hint = Aws();
  no_hint.install_hint.clear();
  no_hint.command = "/opt/bin/aws";
  s = ExecStartFailure(no_hint, Status::NotFound("cannot run \"/opt/bin/aws\": No such file"));
  EXPECT_EQ(s.message().substr(s.message().size() - 14), ": No such file");
  s = ExecStartFailure(Aws(), Status::Unavailable("cannot run \"aws\": Permission denied"));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message().find("Install"), std::string::npos);  // the hint is for a missing one
}

TEST(ExecFailures, RunFailureQuotesStderrOnOneLineCapped) {
  ProcessResult r;
  r.exit_code = 255;
  r.err =
      "\nAn error occurred (ExpiredToken) when calling the GetCallerIdentity operation:\n"
      "  The security token included in the request is expired\n\n";
  Status s = ExecRunFailure(Aws(), r, std::chrono::seconds(60));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(),
            "/home/u/.kube/config: users[eks].user.exec: the credential plugin \"aws eks "
            "get-token --cluster-name 'my cluster'\" exited with status 255: An error occurred "
            "(ExpiredToken) when calling the GetCallerIdentity operation: | The security token "
            "included in the request is expired");
  r.err = std::string(10000, 'x') + "the end";
  s = ExecRunFailure(Aws(), r, std::chrono::seconds(60));
  EXPECT_LT(s.message().size(), kMaxQuotedStderr + 200);
  EXPECT_EQ(s.message().substr(s.message().size() - 7), "the end");
  EXPECT_NE(s.message().find(": …xxx"), std::string::npos);

  ProcessResult killed;
  killed.timed_out = true;
  killed.signal = 9;
  std::string timed_out = ExecRunFailure(Aws(), killed, std::chrono::seconds(60)).message();
  EXPECT_EQ(timed_out.substr(timed_out.find("'my cluster'\" ") + 14),
            "did not finish within 1m and was killed");
  ProcessResult crashed;
  crashed.signal = 11;
  EXPECT_NE(ExecRunFailure(Aws(), crashed, std::chrono::seconds(60))
                .message()
                .find("\" was killed by signal 11"),
            std::string::npos);
}

TEST(OneLine, TrimsFoldsAndKeepsTheEnd) {
  EXPECT_EQ(OneLine("", 10), "");
  EXPECT_EQ(OneLine(" \n\n  \n", 10), "");
  EXPECT_EQ(OneLine("  one\n  two\r\n\nthree  \n", 100), "one | two | three");
  EXPECT_EQ(OneLine("abcdef", 3), "…def");
  EXPECT_EQ(OneLine("ab\xc3\xa9z", 2), "…z");  // never starts inside a UTF-8 character
}

}  // namespace
}  // namespace dljob::kube
