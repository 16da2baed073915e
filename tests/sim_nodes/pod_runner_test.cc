// PodRunner against FakeApi: given these pods, exactly these API calls, with the bodies built by
// the same builders (sim_node_objects.h).
#include "tests/sim_nodes/pod_runner.h"

#include <gtest/gtest.h>

#include "kube/object_fields.h"
#include "kube/testing/fake_api.h"
#include "testing/wait.h"

namespace dljob::sim_nodes {
namespace {

using dljob::testing::WaitFor;
using kube::testing::FakeApi;
namespace r = kube::resources;

Json Pod(const std::string& name, const std::string& node) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "ns"}}},
          {"spec", {{"nodeName", node}, {"containers", {{{"name", "main"}, {"image", "i"}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

class PodRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Only the calls the runner makes from here on count.
    runner_ = std::make_unique<PodRunner>(api_, std::unordered_map<std::string, int>{{"sim-1", 1}},
                                          /*threads=*/2);
  }
  void TearDown() override { runner_->Stop(); }

  // The calls other than list and watch, once there are `n` of them.
  std::vector<std::string> Writes(size_t n) {
    std::vector<std::string> writes;
    WaitFor(
        [&] {
          writes.clear();
          for (const std::string& c : api_.CallStrings()) {
            if (c.rfind("list", 0) != 0 && c.rfind("watch", 0) != 0) writes.push_back(c);
          }
          return writes.size() >= n;
        },
        10'000, 5);
    return writes;
  }

  Json Stored(const std::string& name) { return *api_.Object(r::kPods, "ns", name); }

  FakeApi api_;
  std::unique_ptr<PodRunner> runner_;
};

TEST_F(PodRunnerTest, StartsItsNodesPendingPodsOnlyAndOnce) {
  api_.Put(r::kPods, Pod("mine", "sim-1"));
  api_.Put(r::kPods, Pod("other", "sim-2"));
  api_.Put(r::kPods, Pod("unbound", ""));
  runner_->Start();
  ASSERT_EQ(Writes(1), std::vector<std::string>{"patch-status pods ns/mine"});
  Json sent = api_.Calls().back().body;
  for (const kube::testing::Call& c : api_.Calls()) {
    if (c.verb == "patch-status") sent = c.body;
  }
  EXPECT_EQ(sent["metadata"]["uid"], kube::UidOf(Stored("mine")));
  EXPECT_EQ(sent["status"]["phase"], "Running");
  EXPECT_EQ(sent["status"]["podIP"], "127.64.1.2");
  EXPECT_EQ(sent["status"]["hostIP"], "127.64.1.1");
  // Its own update and an unrelated change come back as events: no second start.
  Json labelled = Stored("mine");
  labelled["metadata"]["labels"] = {{"x", "y"}};
  api_.Put(r::kPods, labelled);
  Json stale = Pod("mine", "sim-1");  // an old copy, still Pending, same uid
  stale["metadata"]["uid"] = kube::UidOf(labelled);
  api_.Put(r::kPods, stale);
  WaitFor([&] { return runner_->stats().queued == 0; }, 2'000);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(Writes(1).size(), 1u) << ::testing::PrintToString(Writes(1));
  EXPECT_EQ(runner_->stats().started, 1);
}

TEST_F(PodRunnerTest, FinishesWhenToldAndRemovesWhenDeleted) {
  api_.Put(r::kPods, Pod("p", "sim-1"));
  runner_->Start();
  ASSERT_EQ(Writes(1).size(), 1u);
  Json told = Stored("p");
  told["metadata"]["annotations"] = {{kExitCodeAnnotation, "4"}};
  api_.Put(r::kPods, told);
  ASSERT_EQ(Writes(2),
            (std::vector<std::string>{"patch-status pods ns/p", "patch-status pods ns/p"}));
  EXPECT_EQ(Stored("p")["status"]["phase"], "Failed");
  EXPECT_EQ(Stored("p")["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 4);

  api_.Put(r::kPods, Pod("q", "sim-1"));
  ASSERT_EQ(Writes(3).size(), 3u);
  Json deleting = Stored("q");
  deleting["metadata"]["deletionTimestamp"] = "2026-01-02T03:04:05Z";
  api_.Put(r::kPods, deleting);
  std::vector<std::string> writes = Writes(5);
  ASSERT_EQ(writes.size(), 5u);
  EXPECT_EQ(writes[3], "patch-status pods ns/q");  // containers terminated first
  EXPECT_EQ(writes[4], "delete pods ns/q");
  const kube::testing::Call del = api_.Calls().back();  // a copy: Calls() returns one
  EXPECT_EQ(del.verb, "delete");
  EXPECT_FALSE(api_.Object(r::kPods, "ns", "q").has_value());
  EXPECT_EQ(runner_->stats().removed, 1);
}

TEST_F(PodRunnerTest, RetriesAFailedStartAndWatchesOnAfterTheStreamEnds) {
  api_.FailNext("patch-status", "pods", kube::ApiError{500, "InternalError", "etcd hiccup"});
  api_.Put(r::kPods, Pod("p", "sim-1"));
  runner_->Start();
  ASSERT_EQ(Writes(2).size(), 2u);  // the failed try, then the retry a second later
  EXPECT_EQ(Stored("p")["status"]["phase"], "Running");
  EXPECT_EQ(runner_->stats().failures, 1);
  api_.EndWatches();
  api_.Put(r::kPods, Pod("later", "sim-1"));
  ASSERT_EQ(Writes(3).back(), "patch-status pods ns/later");
}

}  // namespace
}  // namespace dljob::sim_nodes
