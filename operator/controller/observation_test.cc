#include "operator/controller/observation.h"

#include <gtest/gtest.h>

#include "operator/controller/builders.h"

namespace dljob::controller {
namespace {

using json = nlohmann::json;

DLJob Job() {
  DLJob job;
  job.metadata.name = "j";
  job.metadata.namespace_ = "ns";
  job.metadata.uid = "u";
  job.spec.image = "i";
  job.spec.command = {"train"};
  job.spec.gpus = 16;
  job.spec.gpus_per_worker = 8;
  return job;
}

// A worker pod as the production builder makes it, then moved along as the kubelet would.
json Worker(int64_t i, const std::string& node, const std::string& phase, bool ready) {
  json pod = *NewWorkerPod(Job(), i, BuildOptions{});
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  pod["status"] = {
      {"phase", phase},
      {"conditions", json::array({{{"type", "Ready"}, {"status", ready ? "True" : "False"}}})}};
  return pod;
}

json Launcher(const std::string& phase, int exit_code = 0) {
  json pod = NewLauncherPod(Job());
  pod["status"] = {{"phase", phase}};
  if (phase == "Failed" || phase == "Succeeded") {
    pod["status"]["containerStatuses"] = json::array(
        {{{"name", "launcher"},
          {"state", {{"terminated", {{"exitCode", exit_code}, {"reason", "Error"}}}}}}});
  }
  return pod;
}

TEST(Observe, WalksTheJobThroughItsLife) {
  EXPECT_EQ(Observe(Job(), {}).state, JobState::kPending);
  Observation o =
      Observe(Job(), {Worker(0, "n1", "Pending", false), Worker(1, "", "Pending", false)});
  EXPECT_EQ(o.state, JobState::kPending);
  EXPECT_EQ(o.message, "1/2 workers placed");
  o = Observe(Job(), {Worker(0, "n1", "Running", true), Worker(1, "n2", "Pending", false)});
  EXPECT_EQ(o.state, JobState::kScheduled);
  EXPECT_EQ(o.workers.ready, 1);
  EXPECT_EQ(o.placement.size(), 2u);
  o = Observe(Job(), {Worker(0, "n1", "Running", true), Worker(1, "n1", "Running", true)});
  EXPECT_EQ(o.state, JobState::kStarting);
  ASSERT_EQ(o.placement.size(), 1u);
  EXPECT_EQ(o.placement[0].gpus, 16);
  o = Observe(Job(), {Worker(0, "n1", "Running", true), Worker(1, "n1", "Running", true),
                      Launcher("Running")});
  EXPECT_EQ(o.state, JobState::kRunning);
  o = Observe(Job(), {Worker(0, "n1", "Running", true), Worker(1, "n1", "Running", true),
                      Launcher("Succeeded")});
  EXPECT_EQ(o.state, JobState::kSucceeded);
}

TEST(Observe, AFailedWorkerFailsTheJobAndSaysWhich) {
  json failed = Worker(1, "n2", "Failed", false);
  failed["status"]["containerStatuses"] =
      json::array({{{"name", "worker"},
                    {"state", {{"terminated", {{"exitCode", 137}, {"reason", "OOMKilled"}}}}}}});
  Observation o = Observe(Job(), {Worker(0, "n1", "Running", true), failed, Launcher("Running")});
  EXPECT_EQ(o.state, JobState::kFailed);
  EXPECT_EQ(o.reason, "WorkerFailed");
  EXPECT_EQ(o.failed_pod, "j-worker-1");
  EXPECT_EQ(o.message, "worker j-worker-1 exited with code 137 (OOMKilled)");
  EXPECT_EQ(o.workers.failed, 1);
}

TEST(Observe, ALauncherFailureWinsOverRunningWorkers) {
  Observation o = Observe(Job(), {Worker(0, "n1", "Running", true),
                                  Worker(1, "n1", "Running", true), Launcher("Failed", 3)});
  EXPECT_EQ(o.state, JobState::kFailed);
  EXPECT_EQ(o.reason, "LauncherFailed");
  EXPECT_EQ(o.message, "launcher j-launcher exited with code 3 (Error)");
}

TEST(Observe, AnEvictedPodExplainsItself) {
  json evicted = Worker(0, "n1", "Failed", false);
  evicted["status"]["reason"] = "Evicted";
  evicted["status"]["message"] = "The node was low on resource: memory.";
  Observation o = Observe(Job(), {evicted, Worker(1, "n1", "Running", true)});
  EXPECT_EQ(o.message, "worker j-worker-0 Evicted: The node was low on resource: memory.");
}

// Every combination for two workers: whether the gang was bound (status.placement, or the
// launcher exists, or neither) × each worker present, missing, being deleted, or being deleted
// with a DisruptionTarget condition. The first worker (by index) not simply present is lost, and
// only once the gang was bound.
TEST(FindLostWorker, EveryCombinationOfTwoWorkers) {
  enum Seen { kPresent, kMissing, kDeleting, kEvicting };
  const std::string missing =
      " disappeared (deleted, evicted through the API, or its node was removed)";
  for (int bound = 0; bound < 3; ++bound) {  // 0: not bound, 1: placement set, 2: launcher
    for (int w0 = kPresent; w0 <= kEvicting; ++w0) {
      for (int w1 = kPresent; w1 <= kEvicting; ++w1) {
        DLJob job = Job();
        std::vector<json> pods;
        if (bound == 1) job.status.placement = {{"n1", 16}};
        if (bound == 2) pods.push_back(Launcher("Running"));
        int seen[2] = {w0, w1};
        for (int i = 0; i < 2; ++i) {
          if (seen[i] == kMissing) continue;
          json pod = Worker(i, "n1", "Running", true);
          if (seen[i] != kPresent) pod["metadata"]["deletionTimestamp"] = "2026-01-02T03:04:05Z";
          if (seen[i] == kEvicting) {
            pod["status"]["conditions"].push_back({{"type", "DisruptionTarget"},
                                                   {"status", "True"},
                                                   {"reason", "DeletionByTaintManager"},
                                                   {"message",
                                                    "Taint manager: deleting due to "
                                                    "NoExecute taint"}});
          }
          pods.push_back(pod);
        }
        std::optional<LostWorker> lost = FindLostWorker(job, pods);
        SCOPED_TRACE("bound " + std::to_string(bound) + ", workers " + std::to_string(w0) + " " +
                     std::to_string(w1));
        int first = w0 != kPresent ? 0 : w1 != kPresent ? 1 : -1;
        if (bound == 0 || first < 0) {
          EXPECT_FALSE(lost) << lost->message;
          continue;
        }
        ASSERT_TRUE(lost);
        std::string name = "j-worker-" + std::to_string(first);
        EXPECT_EQ(lost->pod, name);
        EXPECT_EQ(lost->missing, seen[first] == kMissing);
        switch (seen[first]) {
          case kMissing:
            EXPECT_EQ(lost->message, "worker " + name + missing);
            break;
          case kDeleting:
            EXPECT_EQ(lost->message, "worker " + name + " is being deleted");
            break;
          default:
            EXPECT_EQ(lost->message,
                      "worker " + name +
                          " is being deleted (DeletionByTaintManager: Taint manager: deleting due "
                          "to NoExecute taint)");
        }
      }
    }
  }
}

}  // namespace
}  // namespace dljob::controller
