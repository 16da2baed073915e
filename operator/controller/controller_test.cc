#include "operator/controller/controller.h"

#include <functional>
#include <thread>

#include <gtest/gtest.h>

#include "operator/controller/testing/reconciler_test_util.h"
#include "testing/wait.h"

namespace dljob::controller::testing {
namespace {

using kube::resources::kDLJobs;
using kube::resources::kNodes;
using kube::resources::kPods;

using dljob::testing::Eventually;

std::string Phase(FakeApi& api, const std::string& name) {
  auto job = api.Object(kDLJobs, "ns", name);
  return job ? job->value("status", Json::object()).value("phase", "") : "";
}

// A kubelet stand-in: every bound pod starts Running and Ready, with an address; launchers then
// exit 0 (or the named worker fails once). The launcher of the job whose worker fails exits 0
// only in a later incarnation: had the first one finished in the same sweep, before the failure
// was seen, the job would have succeeded without the restart this test is about (seen ~1 run in
// 15 under load).
void Kubelet(FakeApi& api, const std::string& fail_once, bool& failed) {
  for (Json pod : api.Objects(kPods)) {
    if (pod["spec"].value("nodeName", "").empty()) continue;
    std::string name = pod["metadata"]["name"];
    std::string phase = pod.value("status", Json::object()).value("phase", "");
    Json status;
    if (phase.empty()) {
      status = {{"phase", "Running"},
                {"podIP", "10.0.0." + std::to_string(std::hash<std::string>{}(name) % 250 + 2)},
                {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}};
    } else if (phase == "Running" && name == fail_once && !failed) {
      failed = true;
      status = {{"phase", "Failed"}};
    } else if (phase == "Running" && name.ends_with("-launcher") &&
               (!fail_once.starts_with(name.substr(0, name.size() - 8) + "worker-") ||
                IncarnationOf(pod) > 0)) {
      status = {{"phase", "Succeeded"}};
    } else {
      continue;
    }
    pod["status"] = status;
    api.Put(kPods, pod);
  }
}

TEST(Controller, JobsConvergeWithAKubeletMovingTheirPods) {
  FakeApi api;
  Clock& clock = RealClock();
  api.Put(kNodes, GpuNode("n1", 8));
  api.Put(kNodes, GpuNode("n2", 8));
  for (std::string name : {"a", "b"}) {
    api.Put(
        kDLJobs,
        {{"metadata", {{"name", name}, {"namespace", "ns"}}},
         {"spec", {{"image", "img"}, {"command", {"train"}}, {"gpus", 8}, {"gpusPerWorker", 4}}}});
  }
  ControllerOptions options;
  options.workers = 2;
  options.informer.initial_backoff = std::chrono::milliseconds(1);
  options.queue.base_delay = std::chrono::milliseconds(1);
  options.queue.poll = std::chrono::milliseconds(5);
  Controller controller(api, clock, options, FixedKeys);
  std::jthread run([&](std::stop_token stop) { controller.Run(stop); });

  bool failed = false;
  ASSERT_TRUE(Eventually([&] {
    Kubelet(api, "b-worker-1", failed);
    return Phase(api, "a") == "Succeeded" && Phase(api, "b") == "Succeeded";
  })) << "a: "
      << Phase(api, "a") << ", b: " << Phase(api, "b");
  run.request_stop();
  run.join();

  EXPECT_TRUE(failed);
  EXPECT_EQ((*api.Object(kDLJobs, "ns", "b"))["status"]["restarts"], 1);
  EXPECT_EQ((*api.Object(kDLJobs, "ns", "a"))["status"]["restarts"], 0);
  // Each incarnation's pods were bound once (a repeated create of a name a stale cache did not
  // show yet is refused with AlreadyExists and is harmless); b's workers ran twice. The launcher
  // of b ran once or twice, depending on whether the failure came before it started.
  std::map<std::string, int> binds;
  for (const Call& c : api.Calls()) {
    if (c.verb == "bind") ++binds[c.name];
  }
  int b_launcher = binds["b-launcher"];
  binds.erase("b-launcher");
  EXPECT_EQ(binds, (std::map<std::string, int>{{"a-launcher", 1},
                                               {"a-worker-0", 1},
                                               {"a-worker-1", 1},
                                               {"b-worker-0", 2},
                                               {"b-worker-1", 2}}));
  EXPECT_TRUE(b_launcher == 1 || b_launcher == 2) << b_launcher;
  for (const Json& pod : api.Objects(kPods)) {  // what is left is the last incarnation's
    std::string job = pod["metadata"]["labels"][kJobNameLabel];
    EXPECT_EQ(IncarnationOf(pod), job == "b" ? 1 : 0) << pod["metadata"]["name"];
  }
}

}  // namespace
}  // namespace dljob::controller::testing
