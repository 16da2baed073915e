#include "operator/controller/gpu_ledger.h"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "base/testing/fake_clock.h"

namespace dljob::controller {
namespace {

using Json = nlohmann::json;
using dljob::testing::FakeClock;

Json Node(const std::string& name, int gpus, bool ready = true) {
  return {
      {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
      {"status",
       {{"allocatable", {{"nvidia.com/gpu", std::to_string(gpus)}}},
        {"conditions", Json::array({{{"type", "Ready"}, {"status", ready ? "True" : "False"}}})}}}};
}

// A pod bound to `node` using `gpus` (as a limit); `node` "" for unbound.
Json Pod(const std::string& ns, const std::string& name, const std::string& uid,
         const std::string& node, int gpus, const std::string& phase = "Running") {
  Json container = {{"name", "c"}, {"resources", {{"limits", {{"nvidia.com/gpu", gpus}}}}}};
  Json pod = {{"metadata", {{"name", name}, {"namespace", ns}, {"uid", uid}}},
              {"spec", {{"containers", Json::array({container})}}},
              {"status", {{"phase", phase}}}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

DLJob Job(int64_t workers, int64_t gpus_per_worker) {
  DLJob job;
  job.metadata.name = "j";
  job.metadata.namespace_ = "ns";
  job.spec.gpus = workers * gpus_per_worker;
  job.spec.gpus_per_worker = gpus_per_worker;
  return job;
}

std::vector<PodClaim> Claims(const std::string& job, int n) {
  std::vector<PodClaim> out;
  for (int i = 0; i < n; ++i) {
    std::string name = job + "-worker-" + std::to_string(i);
    out.push_back({"ns/" + name, "uid-" + name});
  }
  return out;
}

std::map<std::string, int64_t> Used(const GpuLedger& ledger) {
  std::map<std::string, int64_t> out;
  for (const scheduler::Node& n : ledger.Nodes()) out[n.name] = n.used.gpus;
  return out;
}

std::vector<std::string> NodesOf(const std::vector<Seat>& seats) {
  std::vector<std::string> out;
  for (const Seat& s : seats) out.push_back(s.node);
  return out;
}

class GpuLedgerTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  GpuLedger ledger_{clock_, std::chrono::seconds(30)};
};

TEST_F(GpuLedgerTest, PlacementCountsObservedPodsOfAnyNamespaceAndIgnoresUnboundOnes) {
  ledger_.UpsertNode(Node("n1", 8));
  ledger_.UpsertNode(Node("n2", 4));
  // Not dljob's: someone else's notebook holds 6 of n1's GPUs.
  ledger_.UpsertPod(Pod("other", "notebook", "u1", "n1", 6));
  ledger_.UpsertPod(Pod("other", "pending", "u2", "", 8));
  EXPECT_EQ(Used(ledger_), (std::map<std::string, int64_t>{{"n1", 6}, {"n2", 0}}));

  Result<std::vector<Seat>> seats = ledger_.PlaceAndAssume("ns/a", Job(2, 2), Claims("a", 2));
  ASSERT_TRUE(seats.ok()) << seats.status().message();
  EXPECT_EQ(NodesOf(*seats), (std::vector<std::string>{"n2", "n2"}));
  EXPECT_TRUE((*seats)[0].fresh);
  EXPECT_EQ(Used(ledger_), (std::map<std::string, int64_t>{{"n1", 6}, {"n2", 4}}));
}

TEST_F(GpuLedgerTest, AssumedGpusAreNotPlacedTwiceAndTheLoserWaits) {
  ledger_.UpsertNode(Node("n1", 8));
  ASSERT_TRUE(ledger_.PlaceAndAssume("ns/a", Job(2, 4), Claims("a", 2)).ok());
  Result<std::vector<Seat>> b = ledger_.PlaceAndAssume("ns/b", Job(1, 4), Claims("b", 1));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(b.status().message().find("room for 0"), std::string::npos) << b.status().message();
  EXPECT_EQ(ledger_.Waiting(), (std::vector<std::string>{"ns/b"}));
  // Asking again for pods it already placed gives the same seats, nothing new to bind.
  Result<std::vector<Seat>> again = ledger_.PlaceAndAssume("ns/a", Job(2, 4), Claims("a", 2));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(NodesOf(*again), (std::vector<std::string>{"n1", "n1"}));
  EXPECT_FALSE((*again)[0].fresh || (*again)[1].fresh);
  EXPECT_EQ(Used(ledger_)["n1"], 8);
}

TEST_F(GpuLedgerTest, ObservationReplacesTheAssumptionMatchedByUid) {
  ledger_.UpsertNode(Node("n1", 8));
  ASSERT_TRUE(ledger_.PlaceAndAssume("ns/a", Job(2, 4), Claims("a", 2)).ok());
  EXPECT_EQ(ledger_.Assumed(), 2u);
  // An older pod of the same name is not the one placed: the assumption stays.
  EXPECT_FALSE(ledger_.UpsertPod(Pod("ns", "a-worker-0", "old-uid", "n1", 4, "Failed")));
  EXPECT_EQ(ledger_.Assumed(), 2u);
  ledger_.UpsertPod(Pod("ns", "a-worker-0", "uid-a-worker-0", "n1", 4));
  EXPECT_EQ(ledger_.Assumed(), 1u);
  EXPECT_EQ(ledger_.Observed(), 1u);
  EXPECT_EQ(Used(ledger_)["n1"], 8);  // counted once, not twice
  // The observation outlives the assumption's timeout; the unobserved one expires.
  clock_.Advance(std::chrono::seconds(31));
  EXPECT_EQ(ledger_.Assumed(), 0u);
  EXPECT_EQ(Used(ledger_)["n1"], 4);
}

TEST_F(GpuLedgerTest, AssumptionsExpireWhenNeverObserved) {
  ledger_.UpsertNode(Node("n1", 8));
  ASSERT_TRUE(ledger_.PlaceAndAssume("ns/a", Job(1, 8), Claims("a", 1)).ok());
  clock_.Advance(std::chrono::seconds(29));
  EXPECT_FALSE(ledger_.PlaceAndAssume("ns/b", Job(1, 8), Claims("b", 1)).ok());
  clock_.Advance(std::chrono::seconds(1));
  Result<std::vector<Seat>> b = ledger_.PlaceAndAssume("ns/b", Job(1, 8), Claims("b", 1));
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ((*b)[0].node, "n1");
  EXPECT_TRUE(ledger_.Waiting().empty());
}

TEST_F(GpuLedgerTest, AnAssumptionMadeAgainExpiresOnItsOwnTime) {
  ledger_.UpsertNode(Node("n1", 8));
  ASSERT_TRUE(ledger_.PlaceAndAssume("ns/a", Job(1, 8), Claims("a", 1)).ok());
  ledger_.Forget(Claims("a", 1));
  clock_.Advance(std::chrono::seconds(20));
  ASSERT_TRUE(ledger_.PlaceAndAssume("ns/a", Job(1, 8), Claims("a", 1)).ok());
  // When the first assumption would have expired, the second one still holds the node.
  clock_.Advance(std::chrono::seconds(15));
  EXPECT_FALSE(ledger_.PlaceAndAssume("ns/b", Job(1, 8), Claims("b", 1)).ok());
  clock_.Advance(std::chrono::seconds(15));
  EXPECT_TRUE(ledger_.PlaceAndAssume("ns/b", Job(1, 8), Claims("b", 1)).ok());
}

TEST_F(GpuLedgerTest, EachPlacementSeesTheNodesAndTheirUseAsTheyAreNow) {
  ledger_.UpsertNode(Node("n1", 4));
  ASSERT_TRUE(ledger_.PlaceAndAssume("ns/a", Job(1, 4), Claims("a", 1)).ok());
  EXPECT_FALSE(ledger_.PlaceAndAssume("ns/b", Job(1, 4), Claims("b", 1)).ok());
  EXPECT_TRUE(ledger_.UpsertNode(Node("n1", 8)));  // more GPUs on a node placement has seen
  Result<std::vector<Seat>> b = ledger_.PlaceAndAssume("ns/b", Job(1, 4), Claims("b", 1));
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(NodesOf(*b), std::vector<std::string>{"n1"});
  EXPECT_TRUE(ledger_.UpsertNode(Node("n2", 4)));  // a node added
  Result<std::vector<Seat>> c = ledger_.PlaceAndAssume("ns/c", Job(1, 4), Claims("c", 1));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(NodesOf(*c), std::vector<std::string>{"n2"});
  ledger_.RemoveNode(Node("n2", 4));
  EXPECT_FALSE(ledger_.PlaceAndAssume("ns/d", Job(1, 4), Claims("d", 1)).ok());
  ledger_.UpsertPod(Pod("ns", "a-worker-0", "uid-a-worker-0", "n1", 4, "Succeeded"));
  Result<std::vector<Seat>> d = ledger_.PlaceAndAssume("ns/d", Job(1, 4), Claims("d", 1));
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(NodesOf(*d), std::vector<std::string>{"n1"});
  EXPECT_EQ(Used(ledger_), (std::map<std::string, int64_t>{{"n1", 8}}));
}

TEST_F(GpuLedgerTest, ForgetGivesTheGpusBack) {
  ledger_.UpsertNode(Node("n1", 8));
  ASSERT_TRUE(ledger_.PlaceAndAssume("ns/a", Job(2, 4), Claims("a", 2)).ok());
  ledger_.Forget({Claims("a", 2)[1]});
  EXPECT_EQ(Used(ledger_)["n1"], 4);
  ledger_.Forget({{"ns/a-worker-0", "someone-else"}});  // another pod's uid: kept
  EXPECT_EQ(Used(ledger_)["n1"], 4);
  ASSERT_TRUE(ledger_.PlaceAndAssume("ns/b", Job(1, 4), Claims("b", 1)).ok());
}

TEST_F(GpuLedgerTest, FinishedAndDeletedPodsFreeTheirGpus) {
  ledger_.UpsertNode(Node("n1", 8));
  ledger_.UpsertNode(Node("n2", 8));
  ledger_.UpsertPod(Pod("x", "p1", "u1", "n1", 8));
  ledger_.UpsertPod(Pod("x", "p2", "u2", "n2", 8));
  EXPECT_FALSE(ledger_.PlaceAndAssume("ns/a", Job(1, 8), Claims("a", 1)).ok());
  EXPECT_TRUE(ledger_.UpsertPod(Pod("x", "p1", "u1", "n1", 8, "Succeeded")));
  EXPECT_EQ(Used(ledger_), (std::map<std::string, int64_t>{{"n1", 0}, {"n2", 8}}));
  EXPECT_FALSE(ledger_.RemovePod(Pod("x", "p2", "another-uid", "n2", 8)));  // not that pod
  EXPECT_TRUE(ledger_.RemovePod(Pod("x", "p2", "u2", "n2", 8)));
  EXPECT_EQ(Used(ledger_), (std::map<std::string, int64_t>{{"n1", 0}, {"n2", 0}}));
  EXPECT_TRUE(ledger_.PlaceAndAssume("ns/a", Job(1, 8), Claims("a", 1)).ok());
}

TEST_F(GpuLedgerTest, NodeChangesReportNewRoomAndUnschedulableNodesTakeNothing) {
  EXPECT_TRUE(ledger_.UpsertNode(Node("n1", 8, /*ready=*/false)));
  EXPECT_FALSE(ledger_.UpsertNode(Node("n1", 8, false)));  // a heartbeat: nothing new
  EXPECT_FALSE(ledger_.PlaceAndAssume("ns/a", Job(1, 1), Claims("a", 1)).ok());
  EXPECT_TRUE(ledger_.UpsertNode(Node("n1", 8)));  // Ready now
  Json cordoned = Node("n1", 8);
  cordoned["spec"]["unschedulable"] = true;
  EXPECT_FALSE(ledger_.UpsertNode(cordoned));
  EXPECT_FALSE(ledger_.PlaceAndAssume("ns/a", Job(1, 1), Claims("a", 1)).ok());
  Json tainted = Node("n1", 8);
  tainted["spec"]["taints"] =
      Json::array({{{"key", "gpu"}, {"value", "a100"}, {"effect", "NoSchedule"}}});
  EXPECT_TRUE(ledger_.UpsertNode(tainted));
  EXPECT_FALSE(ledger_.PlaceAndAssume("ns/a", Job(1, 1), Claims("a", 1)).ok());
  DLJob tolerant = Job(1, 1);
  tolerant.spec.scheduling.tolerations.push_back({.key = "gpu",
                                                  .operator_ = "Exists",
                                                  .value = "",
                                                  .effect = "NoSchedule",
                                                  .toleration_seconds = {}});
  EXPECT_TRUE(ledger_.PlaceAndAssume("ns/a", tolerant, Claims("a", 1)).ok());
  ledger_.RemoveNode(tainted);
  EXPECT_TRUE(ledger_.Nodes().empty());
}

TEST_F(GpuLedgerTest, ConcurrentPlacementsNeverOvercommitANode) {
  for (int n = 0; n < 4; ++n) ledger_.UpsertNode(Node("n" + std::to_string(n), 8));
  std::atomic<int> placed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int j = 0; j < 20; ++j) {
        std::string job = "t" + std::to_string(t) + "j" + std::to_string(j);
        if (ledger_.PlaceAndAssume("ns/" + job, Job(3, 1), Claims(job, 3)).ok()) ++placed;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  // 160 gangs of 3 want 480 GPUs; 32 exist. Exactly as many as fit were placed, none twice.
  int64_t total = 0;
  for (const scheduler::Node& n : ledger_.Nodes()) {
    EXPECT_LE(n.used.gpus, n.allocatable.gpus) << n.name;
    total += n.used.gpus;
  }
  EXPECT_EQ(total, 3 * placed.load());
  EXPECT_EQ(placed.load(), 10);  // gangs may span nodes, so every gang fits while 3 GPUs are free
}

// CPU, memory and pods count as GPUs do: a node with GPUs free but no CPU takes no worker.
TEST_F(GpuLedgerTest, CpuMemoryAndPodsLimitPlacementToo) {
  Json n1 = Node("n1", 8), n2 = Node("n2", 8);
  n1["status"]["allocatable"]["cpu"] = "16";
  n1["status"]["allocatable"]["memory"] = "64Gi";
  n2["status"]["allocatable"]["pods"] = "3";
  ledger_.UpsertNode(n1);
  ledger_.UpsertNode(n2);
  Json web = Pod("other", "web", "u1", "n1", 0);
  web["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "12"}, {"memory", "8Gi"}}}};
  ledger_.UpsertPod(web);
  ledger_.UpsertPod(Pod("other", "p1", "u2", "n2", 0));
  ledger_.UpsertPod(Pod("other", "p2", "u3", "n2", 0));
  EXPECT_EQ(ledger_.Nodes()[0].used, (scheduler::Resources{0, 12000, 8192, 1}));
  EXPECT_EQ(ledger_.Nodes()[1].used, (scheduler::Resources{0, 0, 0, 2}));

  DLJob job = Job(2, 2);
  job.spec.resources.cpu_per_gpu = "1";  // 2 CPUs per worker: n1 has 4 free, n2 room for 1 pod
  job.spec.resources.memory_per_gpu = "4Gi";
  Result<std::vector<Seat>> seats = ledger_.PlaceAndAssume("ns/a", job, Claims("a", 2));
  ASSERT_TRUE(seats.ok()) << seats.status().message();
  EXPECT_EQ(NodesOf(*seats), (std::vector<std::string>{"n1", "n1"}));
  EXPECT_EQ(ledger_.Nodes()[0].used, (scheduler::Resources{4, 16000, 24576, 3}));
  // Now n1 has no CPU left and n2 room for one pod: two more workers do not fit.
  Result<std::vector<Seat>> b = ledger_.PlaceAndAssume("ns/b", job, Claims("b", 2));
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("1 Insufficient cpu"), std::string::npos)
      << b.status().message();
  // The web pod finishing frees n1's CPU, and says so.
  EXPECT_TRUE(ledger_.UpsertPod(Pod("other", "web", "u1", "n1", 0, "Succeeded")));
  EXPECT_TRUE(ledger_.PlaceAndAssume("ns/b", job, Claims("b", 2)).ok());
}

TEST_F(GpuLedgerTest, PlacesWithTheInjectedPolicy) {
  Result<scheduler::PlacementPolicyPtr> spread = scheduler::MakePlacementPolicy("spread");
  ASSERT_TRUE(spread.ok());
  GpuLedger ledger(clock_, **spread);
  ledger.UpsertNode(Node("n1", 8));
  ledger.UpsertNode(Node("n2", 8));
  Result<std::vector<Seat>> seats = ledger.PlaceAndAssume("ns/a", Job(2, 2), Claims("a", 2));
  ASSERT_TRUE(seats.ok()) << seats.status().message();
  EXPECT_EQ(NodesOf(*seats), (std::vector<std::string>{"n1", "n2"}));  // dljob would pack
  Result<std::vector<Seat>> bad = ledger.PlaceAndAssume("ns/c", Job(0, 2), Claims("c", 1));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger.Waiting(), (std::vector<std::string>{}));  // it would never fit: not waiting
}

}  // namespace
}  // namespace dljob::controller
