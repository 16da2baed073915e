// A real credential plugin (a shell script this test writes) behind a real kubeconfig, driven
// through MakeApi/HttpApi against the loopback HTTP server, which refuses the tokens the test
// says are stale. These tests start processes: the e2e tier (kube/CMakeLists.txt).
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <mutex>
#include <set>

#include <gtest/gtest.h>

#include "base/subprocess.h"
#include "base/testing/fake_clock.h"
#include "http/testing/loopback_http_server.h"
#include "kube/http_api.h"
#include "testing/command.h"

namespace dljob::kube {
namespace {

using http::testing::LoopbackHttpServer;
using http::testing::ReceivedRequest;
using std::chrono::minutes;

// Counts its runs in ./runs, records what it was given (./exec-info, ./greeting), and prints an
// ExecCredential of the version in $1 with token-<run> (and ./expiry as expirationTimestamp), or
// the certificate and key in ./cert.pem and ./key.pem; with ./fail it prints that file on
// stderr and exits 3; with ./answer it prints that file instead.
constexpr char kPlugin[] = R"(#!/bin/sh
dir=$(dirname "$0")
n=$(( $(cat "$dir/runs" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$dir/runs"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$dir/exec-info"
printf '%s' "$PLUGIN_GREETING" > "$dir/greeting"
if [ -f "$dir/fail" ]; then cat "$dir/fail" >&2; exit 3; fi
if [ -f "$dir/answer" ]; then cat "$dir/answer"; exit 0; fi
if [ -f "$dir/cert.pem" ]; then
  cert=$(awk '{printf "%s\\n", $0}' "$dir/cert.pem")
  key=$(awk '{printf "%s\\n", $0}' "$dir/key.pem")
  printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"clientCertificateData":"%s","clientKeyData":"%s"}}\n' "$1" "$cert" "$key"
  exit 0
fi
expiry=""
[ -f "$dir/expiry" ] && expiry=",\"expirationTimestamp\":\"$(cat "$dir/expiry")\""
printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"token-%s"%s}}\n' "$1" "$n" "$expiry"
)";

class ExecPluginOverHttp : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path();
    Write("plugin.sh", kPlugin);
    ASSERT_EQ(chmod((dir_ + "/plugin.sh").c_str(), 0755), 0);
  }

  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << text;
  }
  std::string Read(const std::string& name) { return dljob::testing::ReadFile(dir_ + "/" + name); }
  int Runs() { return std::atoi(Read("runs").c_str()); }

  // A kubeconfig beside the plugin naming it by a relative path, with `exec_extra` and
  // `cluster_extra` lines added to the user's exec and to the cluster.
  std::string Kubeconfig(const std::string& exec_extra = "interactiveMode: Never",
                         const std::string& cluster_extra = "",
                         const char* command = "./plugin.sh") {
    std::string path = dir_ + "/config";
    Write("config", std::string("apiVersion: v1\nkind: Config\ncurrent-context: test\n") +
                        "clusters:\n- name: loop\n  cluster:\n    server: " + server_.url() +
                        "\n    " + cluster_extra +
                        "\ncontexts:\n- name: test\n  context: {cluster: loop, user: plugin-user}\n"
                        "users:\n- name: plugin-user\n  user:\n    exec:\n"
                        "      apiVersion: client.authentication.k8s.io/v1\n"
                        "      command: " +
                        command +
                        "\n"
                        "      args: [client.authentication.k8s.io/v1]\n"
                        "      env: [{name: PLUGIN_GREETING, value: hello from the kubeconfig}]\n"
                        "      " +
                        exec_extra + "\n");
    return path;
  }

  Result<std::unique_ptr<Api>> MakeTestApi(const std::string& kubeconfig) {
    Result<Config> config = LoadKubeconfig(kubeconfig);
    if (!config.ok()) return config.status();
    ApiOptions options;
    options.qps = 0;
    options.retry.max_attempts = 1;
    options.clock = &clock_;
    options.exec.interactive_allowed = false;  // the same whether ctest has a terminal or not
    return MakeApi(*config, options);
  }

  void Refuse(const std::string& token) {
    std::lock_guard<std::mutex> lock(mu_);
    refused_.insert(token);
  }
  std::vector<std::string> TokensSent() {
    std::vector<std::string> out;
    for (const ReceivedRequest& r : server_.requests()) {
      out.push_back(http::HeaderValue(r.headers, "Authorization"));
    }
    return out;
  }

  dljob::testing::TempDir tmp_;
  std::string dir_;
  dljob::testing::FakeClock clock_;
  std::mutex mu_;
  std::set<std::string> refused_;  // guarded by mu_
  LoopbackHttpServer server_{[this](const ReceivedRequest& r, LoopbackHttpServer::Connection& c) {
    std::string auth = http::HeaderValue(r.headers, "Authorization");
    bool refused = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      refused = auth.rfind("Bearer ", 0) == 0 && refused_.count(auth.substr(7)) > 0;
    }
    if (refused) {
      c.Write(LoopbackHttpServer::Answer(
          401,
          R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized",)"
          R"("reason":"Unauthorized","code":401})",
          "Content-Type: application/json\r\n"));
    } else {
      c.Write(LoopbackHttpServer::Answer(200, R"({"kind":"Pod","metadata":{"name":"p"}})",
                                         "Content-Type: application/json\r\n"));
    }
  }};
};

TEST_F(ExecPluginOverHttp, ATokenIsKeptUntilItExpires) {
  Write("expiry", "2026-01-02T03:14:05Z");  // the FakeClock's start + 10 minutes
  auto api = MakeTestApi(Kubeconfig());
  ASSERT_TRUE(api.ok()) << api.status().message();
  EXPECT_EQ(Runs(), 1);  // MakeApi ran it once
  ASSERT_TRUE((*api)->Get(resources::kPods, "a", "p").ok());
  clock_.Advance(minutes(10) - std::chrono::seconds(1));
  ASSERT_TRUE((*api)->Get(resources::kPods, "a", "p").ok());
  EXPECT_EQ(Runs(), 1);
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_TRUE((*api)->Get(resources::kPods, "a", "p").ok());
  EXPECT_EQ(Runs(), 2);
  EXPECT_EQ(TokensSent(),
            (std::vector<std::string>{"Bearer token-1", "Bearer token-1", "Bearer token-2"}));
}

TEST_F(ExecPluginOverHttp, ARefusedTokenRunsThePluginAgainAndTheCallSucceeds) {
  auto api = MakeTestApi(Kubeconfig());
  ASSERT_TRUE(api.ok()) << api.status().message();
  ASSERT_TRUE((*api)->Get(resources::kPods, "a", "p").ok());
  clock_.Advance(std::chrono::hours(24));  // no expiry: kept however long
  ASSERT_TRUE((*api)->Get(resources::kPods, "a", "p").ok());
  EXPECT_EQ(Runs(), 1);
  Refuse("token-1");
  auto pod = (*api)->Get(resources::kPods, "a", "p");
  ASSERT_TRUE(pod.ok()) << pod.error().ToString();
  EXPECT_EQ((*pod)["metadata"]["name"], "p");
  EXPECT_EQ(Runs(), 2);
  EXPECT_EQ(TokensSent(), (std::vector<std::string>{"Bearer token-1", "Bearer token-1",
                                                    "Bearer token-1", "Bearer token-2"}));
}

TEST_F(ExecPluginOverHttp, AFailingPluginIsReportedWithItsStderr) {
  std::string kubeconfig = Kubeconfig();
  auto api = MakeTestApi(kubeconfig);
  ASSERT_TRUE(api.ok()) << api.status().message();
  Write("fail", "error: the session has expired\n  run: sso login\n");
  Refuse("token-1");
  auto pod = (*api)->Get(resources::kPods, "a", "p");
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.error().reason, kReasonNoCredentials);
  std::string want = kubeconfig + ": users[plugin-user].user.exec: the credential plugin \"" +
                     dir_ + "/plugin.sh client.authentication.k8s.io/v1\" exited with status 3: " +
                     "error: the session has expired | run: sso login";
  EXPECT_EQ(pod.error().ToString(), want);
  EXPECT_EQ(Runs(), 2);

  auto failed = MakeTestApi(kubeconfig);  // failing from the start: MakeApi says so
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), want);
}

TEST_F(ExecPluginOverHttp, ThePluginSeesItsEnvironmentAndTheClusterWhenItAsks) {
  auto api = MakeTestApi(Kubeconfig());
  ASSERT_TRUE(api.ok()) << api.status().message();
  EXPECT_EQ(Read("greeting"), "hello from the kubeconfig");
  EXPECT_EQ(Json::parse(Read("exec-info")),
            Json::parse(R"({"apiVersion":"client.authentication.k8s.io/v1",
                            "kind":"ExecCredential","spec":{"interactive":false}})"));

  api = MakeTestApi(Kubeconfig("interactiveMode: IfAvailable\n      provideClusterInfo: true",
                               "tls-server-name: api.internal"));
  ASSERT_TRUE(api.ok()) << api.status().message();
  Json want = {{"apiVersion", "client.authentication.k8s.io/v1"},
               {"kind", "ExecCredential"},
               {"spec",
                {{"interactive", false},
                 {"cluster", {{"server", server_.url()}, {"tls-server-name", "api.internal"}}}}}};
  EXPECT_EQ(Json::parse(Read("exec-info")), want);
}

TEST_F(ExecPluginOverHttp, NotFoundAndAlwaysInteractiveAreClearErrors) {
  auto api = MakeTestApi(
      Kubeconfig("interactiveMode: Never\n      installHint: 'install it with: make plugin'", "",
                 "./no-such-plugin"));
  ASSERT_FALSE(api.ok());
  EXPECT_EQ(api.status().message(),
            dir_ + "/config: users[plugin-user].user.exec: cannot run the credential plugin \"" +
                dir_ + "/no-such-plugin client.authentication.k8s.io/v1\": cannot run \"" + dir_ +
                "/no-such-plugin\": No such file or directory; install it with: make plugin");

  api = MakeTestApi(Kubeconfig("interactiveMode: Always"));
  ASSERT_FALSE(api.ok());
  EXPECT_NE(api.status().message().find(
                "users[plugin-user].user.exec.interactiveMode: Always, but this program never "
                "runs plugins interactively"),
            std::string::npos)
      << api.status().message();
  EXPECT_EQ(Runs(), 0);
}

TEST_F(ExecPluginOverHttp, AWrongAnswerSaysWhatIsWrongWithIt) {
  Write("answer", R"({"apiVersion":"client.authentication.k8s.io/v1beta1",)"
                  R"("kind":"ExecCredential","status":{"token":"t"}})");
  std::string kubeconfig = Kubeconfig();
  auto api = MakeTestApi(kubeconfig);
  ASSERT_FALSE(api.ok());
  EXPECT_EQ(api.status().message(),
            kubeconfig + ": users[plugin-user].user.exec: the credential plugin \"" + dir_ +
                "/plugin.sh client.authentication.k8s.io/v1\" printed a bad ExecCredential: "
                "apiVersion: the plugin answered \"client.authentication.k8s.io/v1beta1\", but "
                "the kubeconfig asks for \"client.authentication.k8s.io/v1\"");
}

TEST_F(ExecPluginOverHttp, AClientCertificateGoesIntoTheTlsSettings) {
  ProcessSpec openssl;
  openssl.argv = {"openssl",
                  "req",
                  "-x509",
                  "-newkey",
                  "ec",
                  "-pkeyopt",
                  "ec_paramgen_curve:prime256v1",
                  "-nodes",
                  "-subj",
                  "/CN=plugin-user",
                  "-days",
                  "1",
                  "-keyout",
                  dir_ + "/key.pem",
                  "-out",
                  dir_ + "/cert.pem"};
  auto made = RunProcess(openssl, RealClock());
  ASSERT_TRUE(made.ok() && made->succeeded()) << (made.ok() ? made->err : made.status().message());
  auto api = MakeTestApi(Kubeconfig());
  ASSERT_TRUE(api.ok()) << api.status().message();  // the pair passed the client's TLS checks
  ASSERT_TRUE((*api)->Get(resources::kPods, "a", "p").ok());
  ASSERT_TRUE((*api)->Get(resources::kPods, "a", "p").ok());
  EXPECT_EQ(TokensSent(), (std::vector<std::string>{"", ""}));  // no token: no Authorization
  EXPECT_EQ(Runs(), 1);  // a certificate cannot be swapped in: the plugin is not run again

  Write("cert.pem", "-----BEGIN CERTIFICATE-----\nnot base64 !!\n-----END CERTIFICATE-----\n");
  api = MakeTestApi(Kubeconfig());
  ASSERT_FALSE(api.ok());
  EXPECT_NE(api.status().message().find("client-certificate"), std::string::npos)
      << api.status().message();
}

}  // namespace
}  // namespace dljob::kube
