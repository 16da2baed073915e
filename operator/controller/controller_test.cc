#include "operator/controller/controller.h"

#include <algorithm>
#include <atomic>
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

// A job of `gpus` GPUs in workers of 4, in namespace "ns".
Json Job(const std::string& name, int gpus) {
  return {
      {"metadata", {{"name", name}, {"namespace", "ns"}}},
      {"spec", {{"image", "img"}, {"command", {"train"}}, {"gpus", gpus}, {"gpusPerWorker", 4}}}};
}

// Retries and polls in milliseconds, so a test waits for the controller's work, not its timers.
ControllerOptions QuickOptions(int workers) {
  ControllerOptions options;
  options.workers = workers;
  options.informer.initial_backoff = std::chrono::milliseconds(1);
  options.queue.base_delay = std::chrono::milliseconds(1);
  options.queue.poll = std::chrono::milliseconds(5);
  return options;
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
  for (std::string name : {"a", "b"}) api.Put(kDLJobs, Job(name, 8));
  Controller controller(api, clock, QuickOptions(2), FixedKeys);
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
  // Each incarnation's pods were placed: a's once, b's workers twice. A pod is placed by a bind,
  // or by a create that sets spec.nodeName. A pass that runs before the informer shows its last
  // placement (woken by another of the job's pods, or by the queue) places that pod again and is
  // refused with Conflict or AlreadyExists, as a real server refuses it (FakeApi does too), so a
  // name may have more placing calls than placements; the restarts and incarnations checked
  // around this say that no extra incarnation ran.
  std::map<std::string, int> placed;
  for (const Call& c : api.Calls()) {
    if (c.verb == "bind" || (c.verb == "create" && c.resource == "pods" &&
                             !c.body.value("/spec/nodeName"_json_pointer, "").empty())) {
      ++placed[c.name];
    }
  }
  for (const auto& [pod, at_least] : std::map<std::string, int>{{"a-launcher", 1},
                                                                {"a-worker-0", 1},
                                                                {"a-worker-1", 1},
                                                                {"b-launcher", 1},
                                                                {"b-worker-0", 2},
                                                                {"b-worker-1", 2}}) {
    EXPECT_GE(placed[pod], at_least) << pod;
  }
  for (const Json& pod : api.Objects(kPods)) {  // what is left is the last incarnation's
    std::string job = pod["metadata"]["labels"][kJobNameLabel];
    EXPECT_EQ(IncarnationOf(pod), job == "b" ? 1 : 0) << pod["metadata"]["name"];
  }
}

// A job's place in the work queue's follow-up lane (oldest job first) is kept while the job
// exists and dropped once it is gone, its children's deletions included: a long-running operator
// keeps no place per job it ever ran.
TEST(Controller, ADeletedJobKeepsNoPlaceInTheFollowUpLane) {
  FakeApi api;
  Clock& clock = RealClock();
  api.Put(kNodes, GpuNode("n1", 8));
  api.Put(kDLJobs, Job("a", 8));
  Controller controller(api, clock, QuickOptions(2), FixedKeys);
  std::jthread run([&](std::stop_token stop) { controller.Run(stop); });
  bool failed = false;
  ASSERT_TRUE(Eventually([&] {
    Kubelet(api, "", failed);
    return Phase(api, "a") == "Succeeded";
  })) << Phase(api, "a");
  EXPECT_EQ(controller.queue().Ordered(), 1u);
  api.Erase(kDLJobs, "ns", "a");  // deleted; then the garbage collector takes its children
  for (const Json& pod : api.Objects(kPods)) {
    api.Erase(kPods, "ns", pod["metadata"]["name"].get<std::string>());
  }
  EXPECT_TRUE(Eventually([&] { return controller.queue().Ordered() == 0; }))
      << controller.queue().Ordered();
}

TEST(EventRecorder, AsyncSendsEveryEventInOrderOffTheCallersThreadAndDrainsOnDestruction) {
  FakeApi api;
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> off_thread{true};
  api.OnCall([&](const Call&) {
    if (std::this_thread::get_id() == caller) off_thread = false;
  });
  DLJob job;
  job.metadata.name = "a";
  job.metadata.namespace_ = "ns";
  {
    EventRecorder events(api, RealClock(), /*async=*/true);
    for (int i = 0; i < 20; ++i) events.Record(job, "Normal", "Step", std::to_string(i));
    events.Flush();
    EXPECT_EQ(api.Calls().size(), 20u);
    for (int i = 20; i < 30; ++i) events.Record(job, "Normal", "Step", std::to_string(i));
  }  // sends the last ten before it goes
  std::vector<std::string> messages;
  for (const Call& c : api.Calls()) {
    EXPECT_EQ(c.verb + " " + c.resource, "create events");
    messages.push_back(c.body.value("message", ""));
  }
  ASSERT_EQ(messages.size(), 30u);
  for (int i = 0; i < 30; ++i) EXPECT_EQ(messages[i], std::to_string(i));
  EXPECT_TRUE(off_thread);
  EXPECT_EQ(EventRecorder(api, RealClock(), true).Dropped(), 0u);
}

class SpanList final : public kube::SpanSink {
 public:
  void Record(kube::Span span) override {
    MutexLock lock(mu_);
    spans_.push_back(std::move(span));
  }
  // "name detail" of `key`'s spans, in the order recorded.
  std::vector<std::string> Of(const std::string& key) {
    MutexLock lock(mu_);
    std::vector<std::string> out;
    for (const kube::Span& s : spans_) {
      if (s.key == key) out.push_back(s.name + " " + s.detail);
    }
    return out;
  }

 private:
  Mutex mu_;
  std::vector<kube::Span> spans_ GUARDED_BY(mu_);
};

TEST(Controller, RecordsWhereAJobsTimeGoesWhenAskedTo) {
  FakeApi fake;
  SpanList spans;
  kube::TracedApi api(fake, spans, RealClock());
  fake.Put(kNodes, GpuNode("n1", 8));
  fake.Put(kDLJobs, Job("a", 4));
  ControllerOptions options = QuickOptions(1);
  options.spans = &spans;
  Controller controller(api, RealClock(), options, FixedKeys);
  std::jthread run([&](std::stop_token stop) { controller.Run(stop); });
  bool failed = false;
  ASSERT_TRUE(Eventually([&] {
    Kubelet(fake, "", failed);
    return Phase(fake, "a") == "Running" || Phase(fake, "a") == "Succeeded";
  })) << Phase(fake, "a");
  run.request_stop();
  run.join();

  const std::vector<std::string> of_a = spans.Of("ns/a");
  auto has = [&](const std::string& s) {
    return std::find(of_a.begin(), of_a.end(), s) != of_a.end();
  };
  ASSERT_FALSE(of_a.empty());
  EXPECT_EQ(of_a.front(), "observe dljob added");
  EXPECT_TRUE(has("queue normal"));
  EXPECT_TRUE(has("queue follow-up"));  // a child's change
  EXPECT_TRUE(has("reconcile ok"));
  EXPECT_TRUE(has("api create pods"));
  EXPECT_TRUE(has("api create pods/binding"));
  EXPECT_TRUE(has("api update dljobs/status"));
  EXPECT_TRUE(has("child pod a-worker-0 updated Running ready")) << ::testing::PrintToString(of_a);
  // The informers' own calls are nobody's.
  EXPECT_FALSE(has("api list dljobs"));
  EXPECT_NE(spans.Of("").size(), 0u);
}

// Watching every namespace, the ledger learns of the operator's own pods from the job pods'
// informer and of everyone else's from the bound pods' one, which leaves the job pods out: each
// pod is watched and cached once, and both kinds count.
TEST(Controller, LedgerCountsItsOwnPodsAndOthersEachFromOneWatch) {
  FakeApi api;
  api.Put(kNodes, GpuNode("n1", 8));
  api.Put(kPods, {{"metadata", {{"name", "x"}, {"namespace", "other"}}},
                  {"spec",
                   {{"nodeName", "n1"},
                    {"containers",
                     {{{"name", "c"}, {"resources", {{"requests", {{"nvidia.com/gpu", "4"}}}}}}}}}},
                  {"status", {{"phase", "Running"}}}});
  api.Put(kDLJobs, Job("a", 4));
  Controller controller(api, RealClock(), QuickOptions(1), FixedKeys);
  std::jthread run([&](std::stop_token stop) { controller.Run(stop); });
  // The other pod and the job's worker, observed bound (not merely assumed by the placement).
  ASSERT_TRUE(Eventually([&] {
    return controller.ledger().Observed() == 2 && controller.ledger().Assumed() == 0;
  })) << controller.ledger().Observed()
      << " observed, " << controller.ledger().Assumed() << " assumed";
  const LedgerView view = controller.ledger().View();
  run.request_stop();
  run.join();

  EXPECT_TRUE(view.pods.contains("other/x"));
  EXPECT_TRUE(view.pods.contains("ns/a-worker-0"));
  std::vector<std::string> pod_selectors;
  for (const Call& c : api.Calls()) {
    if (c.verb == "list" && c.resource == "pods") {
      pod_selectors.push_back(c.body.value("labelSelector", ""));
    }
  }
  EXPECT_NE(std::find(pod_selectors.begin(), pod_selectors.end(), "dljob.io/job-name"),
            pod_selectors.end());
  EXPECT_NE(std::find(pod_selectors.begin(), pod_selectors.end(), "!dljob.io/job-name"),
            pod_selectors.end());
}

}  // namespace
}  // namespace dljob::controller::testing
