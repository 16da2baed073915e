#include "cli/backend_choice.h"

#include <gtest/gtest.h>

namespace dljob {
namespace {

ClusterHints NoCluster() { return {}; }
ClusterHints HomeKubeconfig() {
  ClusterHints h;
  h.home_kubeconfig = true;
  return h;
}

TEST(ChooseBackend, LocalFlagAlwaysMeansThisMachine) {
  BackendFlags flags;
  flags.local = true;
  EXPECT_EQ(*ChooseBackend(flags, true, HomeKubeconfig()), BackendKind::kLocal);
  flags.namespace_ = "team-a";  // recorded on a local job
  EXPECT_EQ(*ChooseBackend(flags, true, NoCluster()), BackendKind::kLocal);
}

TEST(ChooseBackend, LocalWithAClusterFlagIsAUsageError) {
  BackendFlags flags;
  flags.local = true;
  flags.kubeconfig = "/k";
  Result<BackendKind> kind = ChooseBackend(flags, false, NoCluster());
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(kind.status().message().find("--local"), std::string::npos);
}

TEST(ChooseBackend, AnyConfiguredClusterIsUsed) {
  BackendFlags explicit_file;
  explicit_file.kubeconfig = "/tmp/k";
  EXPECT_EQ(*ChooseBackend(explicit_file, false, NoCluster()), BackendKind::kCluster);
  ClusterHints env;
  env.kubeconfig_env = true;
  EXPECT_EQ(*ChooseBackend({}, false, env), BackendKind::kCluster);
  ClusterHints pod;
  pod.in_cluster = true;
  EXPECT_EQ(*ChooseBackend({}, true, pod), BackendKind::kCluster);
  EXPECT_EQ(*ChooseBackend({}, false, HomeKubeconfig()), BackendKind::kCluster);
}

TEST(ChooseBackend, WithoutAClusterReadersStayLocal) {
  EXPECT_EQ(*ChooseBackend({}, false, NoCluster()), BackendKind::kLocal);
}

TEST(ChooseBackend, WithoutAClusterSubmitSaysWhatToDo) {
  Result<BackendKind> kind = ChooseBackend({}, true, NoCluster());
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      kind.status().message().rfind("no cluster configured: pass --kubeconfig or use --local", 0),
      0u)
      << kind.status().message();
}

TEST(ChooseBackend, ClusterOnlyFlagsWithoutAClusterFail) {
  BackendFlags context;
  context.context = "prod";
  BackendFlags ns;
  ns.namespace_ = "team-a";
  BackendFlags all;
  all.all_namespaces = true;
  for (const auto& [flags, name] : {std::pair{context, "--context"}, std::pair{ns, "--namespace"},
                                    std::pair{all, "--all-namespaces"}}) {
    Result<BackendKind> kind = ChooseBackend(flags, false, NoCluster());
    ASSERT_FALSE(kind.ok()) << name;
    EXPECT_NE(kind.status().message().find(std::string("no cluster configured for ") + name),
              std::string::npos)
        << kind.status().message();
  }
}

}  // namespace
}  // namespace dljob
