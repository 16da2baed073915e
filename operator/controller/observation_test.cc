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

}  // namespace
}  // namespace dljob::controller
