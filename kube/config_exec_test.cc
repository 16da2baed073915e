// Kubeconfig users with a credential plugin (users[].user.exec) and the other user and cluster
// fields the plugin sees: parsing and every error.
#include <gtest/gtest.h>

#include "kube/config.h"

namespace dljob::kube {
namespace {

using Mode = ExecConfig::InteractiveMode;

// A kubeconfig at /home/u/.kube/config whose current user is `user` (YAML flow mapping).
std::vector<KubeconfigFile> WithUser(const std::string& user) {
  return {{"/home/u/.kube/config",
           "current-context: eks\n"
           "contexts: [{name: eks, context: {cluster: c, user: u}}]\n"
           "clusters: [{name: c, cluster: {server: 'https://eks.example', tls-server-name: "
           "kubernetes}}]\n"
           "users: [{name: u, user: " +
               user + "}]\n"}};
}

TEST(ParseKubeconfigExec, EveryField) {
  auto c = ParseKubeconfig(WithUser(R"({exec: {
      apiVersion: client.authentication.k8s.io/v1,
      command: aws,
      args: [eks, get-token, --cluster-name, prod],
      env: [{name: AWS_PROFILE, value: ml}, {name: EMPTY}],
      interactiveMode: Never,
      provideClusterInfo: true,
      installHint: 'brew install awscli'}})"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  const ExecConfig& e = c->exec;
  EXPECT_TRUE(e.enabled());
  EXPECT_EQ(e.api_version, kExecApiV1);
  EXPECT_EQ(e.command, "aws");  // no '/': looked up on PATH when run
  EXPECT_EQ(e.args, (std::vector<std::string>{"eks", "get-token", "--cluster-name", "prod"}));
  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(e.env, (Env{{"AWS_PROFILE", "ml"}, {"EMPTY", ""}}));
  EXPECT_EQ(e.interactive_mode, Mode::kNever);
  EXPECT_TRUE(e.provide_cluster_info);
  EXPECT_EQ(e.install_hint, "brew install awscli");
  EXPECT_EQ(e.where, "/home/u/.kube/config: users[u].user.exec");
  EXPECT_EQ(c->tls_server_name, "kubernetes");
  EXPECT_EQ(c->token, "");
}

TEST(ParseKubeconfigExec, AnEksKubeconfigAsTheAwsCliWritesIt) {
  auto c = ParseKubeconfig({{"/home/u/.kube/config", R"(apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: aGVsbG8=
    server: https://ABCD.gr7.eu-west-1.eks.amazonaws.com
  name: arn:aws:eks:eu-west-1:111122223333:cluster/training
contexts:
- context:
    cluster: arn:aws:eks:eu-west-1:111122223333:cluster/training
    user: arn:aws:eks:eu-west-1:111122223333:cluster/training
  name: arn:aws:eks:eu-west-1:111122223333:cluster/training
current-context: arn:aws:eks:eu-west-1:111122223333:cluster/training
kind: Config
preferences: {}
users:
- name: arn:aws:eks:eu-west-1:111122223333:cluster/training
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      args:
      - --region
      - eu-west-1
      - eks
      - get-token
      - --cluster-name
      - training
      - --output
      - json
      command: aws
      env: null
      interactiveMode: IfAvailable
      provideClusterInfo: false
)"}});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->exec.enabled());
  EXPECT_EQ(c->exec.command, "aws");
  EXPECT_EQ(c->exec.args.size(), 8u);
  EXPECT_TRUE(c->exec.env.empty());
  EXPECT_EQ(c->exec.where,
            "/home/u/.kube/config: users[arn:aws:eks:eu-west-1:111122223333:cluster/training]"
            ".user.exec");
  EXPECT_EQ(c->ca_data, "hello");
}

TEST(ParseKubeconfigExec, V1beta1DefaultsAndTheModes) {
  auto c = ParseKubeconfig(
      WithUser("{exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: gke}}"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->exec.api_version, kExecApiV1beta1);
  EXPECT_EQ(c->exec.interactive_mode, Mode::kIfAvailable);
  EXPECT_FALSE(c->exec.provide_cluster_info);
  EXPECT_TRUE(c->exec.args.empty());
  EXPECT_TRUE(c->exec.env.empty());
  for (auto [text, mode] :
       {std::pair{"Never", Mode::kNever}, std::pair{"IfAvailable", Mode::kIfAvailable},
        std::pair{"Always", Mode::kAlways}}) {
    c = ParseKubeconfig(WithUser(std::string("{exec: {apiVersion: client.authentication.k8s.io/v1, "
                                             "command: k, interactiveMode: ") +
                                 text + "}}"));
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ(c->exec.interactive_mode, mode) << text;
  }
}

TEST(ParseKubeconfigExec, CommandPathsResolveAgainstTheKubeconfigsDirectory) {
  struct Case {
    const char* command;
    const char* want;
  };
  for (Case k :
       {Case{"kubelogin", "kubelogin"}, Case{"bin/plugin", "/home/u/.kube/bin/plugin"},
        Case{"./plugin.sh", "/home/u/.kube/plugin.sh"}, Case{"../tools/p", "/home/u/tools/p"},
        Case{"/usr/local/bin/aws", "/usr/local/bin/aws"}}) {
    auto c = ParseKubeconfig(WithUser(
        std::string("{exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: '") +
        k.command + "'}}"));
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ(c->exec.command, k.want);
  }
  // A kubeconfig named by a relative path: the command stays a path, never a name for PATH.
  std::vector<KubeconfigFile> relative =
      WithUser("{exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: ./plugin.sh}}");
  relative[0].path = "config";
  auto c = ParseKubeconfig(relative);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->exec.command, "./plugin.sh");
  relative[0].path = "kube/config";
  EXPECT_EQ(ParseKubeconfig(relative)->exec.command, "kube/plugin.sh");
}

TEST(ParseKubeconfigExec, StaticCredentialsWinButExecIsStillChecked) {
  auto c = ParseKubeconfig(WithUser(
      "{token: t, exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: aws}}"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->token, "t");
  EXPECT_FALSE(c->exec.enabled());
  c = ParseKubeconfig(WithUser("{token: t, exec: {command: aws}}"));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message().rfind("/home/u/.kube/config: users[u].user.exec.apiVersion", 0),
            0u);
}

TEST(ParseKubeconfigExec, EveryErrorNamesTheFileTheUserAndTheField) {
  const std::string v1 = "apiVersion: client.authentication.k8s.io/v1, ";
  struct Case {
    std::string user;
    std::string want;  // the whole message after "/home/u/.kube/config: users[u].user"
  };
  const Case cases[] = {
      {"{exec: [aws]}", ".exec: must be a mapping"},
      {"{exec: {command: aws}}",
       ".exec.apiVersion: missing; use client.authentication.k8s.io/v1 or "
       "client.authentication.k8s.io/v1beta1"},
      {"{exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: aws}}",
       ".exec.apiVersion: client.authentication.k8s.io/v1alpha1 is no longer supported "
       "(Kubernetes 1.24 removed it); use client.authentication.k8s.io/v1 or "
       "client.authentication.k8s.io/v1beta1, which current versions of the plugin speak"},
      {"{exec: {apiVersion: v1, command: aws}}",
       ".exec.apiVersion: unknown version \"v1\"; use client.authentication.k8s.io/v1 or "
       "client.authentication.k8s.io/v1beta1"},
      {"{exec: {" + v1 + "interactiveMode: Never}}", ".exec.command: missing"},
      {"{exec: {" + v1 + "command: aws, interactiveMode: Never, args: eks}}",
       ".exec.args: must be a list"},
      {"{exec: {" + v1 + "command: aws, interactiveMode: Never, args: [eks, {a: 1}]}}",
       ".exec.args[1]: must be a string"},
      {"{exec: {" + v1 + "command: aws, interactiveMode: Never, env: {A: b}}}",
       ".exec.env: must be a list"},
      {"{exec: {" + v1 + "command: aws, interactiveMode: Never, env: [A=b]}}",
       ".exec.env[0]: must be a mapping with name and value"},
      {"{exec: {" + v1 + "command: aws, interactiveMode: Never, env: [{name: A}, {value: b}]}}",
       ".exec.env[1].name: missing"},
      {"{exec: {" + v1 + "command: aws, interactiveMode: Never, env: [{name: 'A=B', value: c}]}}",
       ".exec.env[0].name: must not contain '=', got \"A=B\""},
      {"{exec: {" + v1 + "command: aws, interactiveMode: Never, env: [{name: A, value: [b]}]}}",
       ".exec.env[0].value: must be a string"},
      {"{exec: {" + v1 + "command: aws}}",
       ".exec.interactiveMode: missing; client.authentication.k8s.io/v1 requires Never, "
       "IfAvailable or Always"},
      {"{exec: {" + v1 + "command: aws, interactiveMode: Sometimes}}",
       ".exec.interactiveMode: must be Never, IfAvailable or Always, got \"Sometimes\""},
      {"{exec: {" + v1 + "command: aws, interactiveMode: Never, provideClusterInfo: maybe}}",
       ".exec.provideClusterInfo: must be true or false"},
      {"{auth-provider: {name: gcp}}",
       ".auth-provider: auth-provider plugins are not supported (client-go removed its gcp, "
       "azure and oidc providers); use an exec credential plugin (users[].user.exec), such as "
       "gke-gcloud-auth-plugin or kubelogin"},
      {"{auth-provider: {name: oidc}, exec: {" + v1 + "command: k, interactiveMode: Never}}",
       ".auth-provider: cannot be combined with exec; remove one of them"},
  };
  for (const Case& c : cases) {
    auto got = ParseKubeconfig(WithUser(c.user));
    ASSERT_FALSE(got.ok()) << c.user;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(got.status().message(), "/home/u/.kube/config: users[u].user" + c.want) << c.user;
  }
}

}  // namespace
}  // namespace dljob::kube
