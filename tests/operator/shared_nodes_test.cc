// Gangs over several nodes, on both servers (SharedMultiNodeTest, shared_fixture.h: two nodes of
// G = cluster().gpus() GPUs each, labelled with an NVLink clique each, one rack and one zone, as
// scripts/cluster/kube-up.sh --nodes 2 labels them): a gang too big for one node runs over both,
// its ranks on each node heard through the one launcher; the dljob policy keeps a gang that fits
// one node's clique inside it, where first-fit would split it, and says where it put it; a cordoned
// node (kubectl cordon, drain's first step) under a running job is emptied of it whole, and the job
// carries a PodDisruptionBudget.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "base/json_fields.h"
#include "tests/operator/shared_fixture.h"

namespace dljob::testing {
namespace {

using kube::resources::kDLJobs;

// The launcher's log as it is now ("" when it cannot be read).
std::string LauncherLog(kube::Api& api, const std::string& job) {
  kube::ApiResult<kube::LineStreamPtr> stream = api.Logs(Ns(), job + "-launcher", {});
  if (!stream.ok()) return "";
  std::string text;
  for (;;) {
    kube::ApiResult<std::optional<std::string>> line = (*stream)->Next();
    if (!line.ok() || !*line) return text;
    text += **line + "\n";
  }
}

// Live workers per node.
std::map<std::string, int> WorkersPerNode(kube::Api& api, const std::string& job) {
  std::map<std::string, int> per_node;
  for (const Json& w : Workers(api, job)) {
    if (!IsDeleting(w)) ++per_node[NodeNameOf(w)];
  }
  return per_node;
}

TEST_P(SharedMultiNodeTest, AGangTooBigForOneNodeRunsOverTwoWithEveryRankHeard) {
  const int g = cluster().gpus();
  StartOperator();
  // 4 workers of G/2 GPUs: 2G ranks, two workers on each node.
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("wide", 2 * g, g / 2)).ok());
  ASSERT_TRUE(WaitForPhase("wide", "Running")) << Describe(api(), "wide");
  std::map<std::string, int> per_node = WorkersPerNode(api(), "wide");
  ASSERT_EQ(per_node.size(), 2u) << Describe(api(), "wide");
  for (const auto& [node, workers] : per_node) EXPECT_EQ(workers, 2) << node;

  // mpirun started every rank, on both nodes, and hears each one.
  for (int rank = 0; rank < 2 * g; ++rank) {
    ASSERT_TRUE(cluster().Say("wide", rank, "hello from rank " + std::to_string(rank)).ok());
  }
  std::string log;
  ASSERT_TRUE(WaitFor(
      [&] {
        log = LauncherLog(api(), "wide");
        for (int rank = 0; rank < 2 * g; ++rank) {
          if (log.find("hello from rank " + std::to_string(rank) + "\n") == std::string::npos) {
            return false;
          }
        }
        return true;
      },
      wait()))
      << log;
  ASSERT_TRUE(cluster().EndTraining("wide", 0).ok());
  ASSERT_TRUE(WaitForPhase("wide", "Succeeded")) << Describe(api(), "wide");
  EXPECT_EQ(Restarts(*GetJob(api(), "wide")), 0);
}

TEST_P(SharedMultiNodeTest, TheDljobPolicyKeepsAGangInOneCliqueWhenItFitsAndSaysWhere) {
  const int g = cluster().gpus();
  StartOperator();  // --placement-policy dljob, the default
  // A quarter of one node taken: first-fit would now split a gang of two half-node workers
  // over both nodes (one where the quarter is, one on the other).
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("small", g / 4, g / 4)).ok());
  ASSERT_TRUE(WaitForPhase("small", "Running")) << Describe(api(), "small");
  const std::string taken = NodeNameOf(Workers(api(), "small").at(0));
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("packed", g, g / 2)).ok());
  ASSERT_TRUE(WaitForPhase("packed", "Running")) << Describe(api(), "packed");

  std::map<std::string, int> per_node = WorkersPerNode(api(), "packed");
  ASSERT_EQ(per_node.size(), 1u) << Describe(api(), "packed");
  const std::string node = per_node.begin()->first;
  EXPECT_NE(node, taken);
  // Where it went, in the topology's words, on the WorkersBound Event (and condition).
  kube::ApiResult<Json> got = api().Get(kube::resources::kNodes, "", node);
  ASSERT_TRUE(got.ok());
  const std::string clique =
      StringAt(FieldOf(FieldOf(*got, "metadata"), "labels"), "nvidia.com/gpu.clique");
  ASSERT_FALSE(clique.empty()) << got->dump();
  std::vector<Json> bound = EventsOf(api(), "packed", "WorkersBound");
  ASSERT_EQ(bound.size(), 1u) << Describe(api(), "packed");
  EXPECT_EQ(bound[0]
                .value("message", "")
                .rfind("every worker is bound on " + node + " (clique " + clique + ", rack ", 0),
            0u)
      << bound[0].dump();

  for (const char* job : {"small", "packed"}) ASSERT_TRUE(cluster().EndTraining(job, 0).ok());
  for (const char* job : {"small", "packed"}) {
    ASSERT_TRUE(WaitForPhase(job, "Succeeded")) << Describe(api(), job);
  }
}

// Cordons a node for the scope of a case (kubectl cordon's patch), uncordoning it however the case
// ends: the real cluster's nodes outlive the case.
class Cordon {
 public:
  Cordon(kube::Api& api, std::string node) : api_(api), node_(std::move(node)) { ok_ = Set(true); }
  ~Cordon() { Set(false); }
  bool ok() const { return ok_; }

 private:
  bool Set(bool unschedulable) {
    return api_
        .MergePatch(kube::resources::kNodes, "", node_,
                    {{"spec", {{"unschedulable", unschedulable ? Json(true) : Json(nullptr)}}}})
        .ok();
  }
  kube::Api& api_;
  const std::string node_;
  bool ok_ = false;
};

TEST_P(SharedMultiNodeTest, ACordonedNodeUnderARunningJobIsEmptiedOfItWhole) {
  const int g = cluster().gpus();
  StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("moved", g / 2, g / 4)).ok());
  ASSERT_TRUE(WaitForPhase("moved", "Running")) << Describe(api(), "moved");
  std::map<std::string, int> before = WorkersPerNode(api(), "moved");
  ASSERT_EQ(before.size(), 1u) << Describe(api(), "moved");
  const std::string node = before.begin()->first;
  ASSERT_TRUE(cluster().Say("moved", 0, MetricReport(0, 10, 1500, g / 2)).ok());

  Cordon cordon(api(), node);
  ASSERT_TRUE(cordon.ok());
  // The whole job moves, once, to the other node: every pod new, none on the cordoned one.
  bool moved = WaitFor(
      [&] {
        std::optional<Json> job = GetJob(api(), "moved");
        if (!job || job->value("status", Json::object()).value("disruptionRestarts", 0) != 1 ||
            Phase(api(), "moved") != "Running") {
          return false;
        }
        std::map<std::string, int> now = WorkersPerNode(api(), "moved");
        return now.size() == 1 && now.begin()->first != node && !now.begin()->first.empty();
      },
      wait());
  ASSERT_TRUE(moved) << Describe(api(), "moved");
  std::vector<Json> events = EventsOf(api(), "moved", "NodeCordoned");
  ASSERT_EQ(events.size(), 1u) << Describe(api(), "moved");
  EXPECT_EQ(events[0].value("message", "").rfind("node " + node + " is cordoned", 0), 0u)
      << events[0].dump();
  // Its PodDisruptionBudget, which keeps a drain from evicting its pods one by one.
  kube::ApiResult<Json> budget =
      api().Get(kube::resources::kPodDisruptionBudgetsV1beta1, Ns(), "moved");
  if (!budget.ok()) budget = api().Get(kube::resources::kPodDisruptionBudgets, Ns(), "moved");
  ASSERT_TRUE(budget.ok()) << budget.error().ToString();
  EXPECT_EQ((*budget)["spec"]["minAvailable"], 3);  // every pod: 2 workers, the launcher

  ASSERT_TRUE(cluster().EndTraining("moved", 0).ok());
  ASSERT_TRUE(WaitForPhase("moved", "Succeeded")) << Describe(api(), "moved");
  EXPECT_EQ(Restarts(*GetJob(api(), "moved")), 0);
}

}  // namespace
}  // namespace dljob::testing
