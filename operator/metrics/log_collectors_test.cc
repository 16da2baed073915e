#include "operator/metrics/log_collectors.h"

#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "kube/testing/fake_api.h"
#include "testing/wait.h"

namespace dljob::metrics {
namespace {

using Json = nlohmann::json;

class VectorLines : public kube::LineStream {
 public:
  explicit VectorLines(std::vector<std::string> lines) : lines_(std::move(lines)) {}
  kube::ApiResult<std::optional<std::string>> Next() override {
    if (next_ < lines_.size()) return std::optional<std::string>(lines_[next_++]);
    return std::optional<std::string>();
  }
  void Cancel() override {}

 private:
  std::vector<std::string> lines_;
  size_t next_ = 0;
};

class CountingSink : public ThroughputSink {
 public:
  Status Publish(const std::string&, const std::string&, const Throughput&) override {
    ++publishes;
    return Status::Ok();
  }
  std::atomic<int> publishes{0};
};

Json LauncherPodJson(const std::string& uid, const std::string& phase) {
  return {{"metadata",
           {{"namespace", "ns"},
            {"name", "job-launcher"},
            {"uid", uid},
            {"labels", {{"dljob.io/job-name", "job"}, {"dljob.io/role", "launcher"}}}}},
          {"status", {{"phase", phase}}}};
}

LauncherPod Launcher(const std::string& uid, const std::string& phase) {
  return LauncherPodOf(LauncherPodJson(uid, phase));
}

void WaitIdle(const LogCollectors& c) {
  EXPECT_TRUE(dljob::testing::Eventually([&] { return c.Following() == 0; }))
      << "a follower never ended";
}

// The launcher's log options of a test: re-opens without delay.
LogCollectorOptions Quick() {
  LogCollectorOptions o;
  o.reopen_backoff = std::chrono::milliseconds(1);
  return o;
}

TEST(LogCollectorsTest, FollowsEachStartedIncarnationOnceAndKeepsCountsPerJob) {
  std::atomic<int> opens{0};
  CountingSink sink;
  LogCollectors collectors(
      [&](const std::string&, const std::string&) -> kube::ApiResult<kube::LineStreamPtr> {
        ++opens;
        return kube::LineStreamPtr(std::make_unique<VectorLines>(std::vector<std::string>{
            "[1,0]<stdout>:hello", "[1,0]<stdout>:DLJOB_METRIC {\"step\":1}"}));
      },
      sink, Quick());

  collectors.Sync({Launcher("u1", "Pending")});
  EXPECT_EQ(opens.load(), 0);  // not started: nothing to follow yet
  collectors.Sync({Launcher("u1", "Running")});
  // While the pod runs, the end of a stream is not the end of its log: it is followed on.
  ASSERT_TRUE(dljob::testing::Eventually([&] { return opens.load() >= 2; }));
  EXPECT_EQ(collectors.Following(), 1u);
  collectors.Sync({Launcher("u1", "Succeeded")});  // read once more, to the end
  WaitIdle(collectors);
  const int opened = opens.load();
  collectors.Sync({Launcher("u1", "Succeeded")});  // same incarnation: not followed again
  EXPECT_EQ(collectors.Following(), 0u);
  EXPECT_EQ(opens.load(), opened);
  EXPECT_EQ(collectors.Counts()["ns/job"].lines, 2);  // however often it was read

  // A restart: the old launcher is gone, a new one (new uid) runs. Counts accumulate.
  collectors.Sync({});
  EXPECT_EQ(collectors.Counts()["ns/job"].lines, 2);
  collectors.Sync({Launcher("u2", "Failed")});
  WaitIdle(collectors);
  EXPECT_EQ(opens.load(), opened + 1);  // a pod that had already ended: its log read once
  EXPECT_EQ(collectors.Counts()["ns/job"].lines, 4);
  EXPECT_EQ(collectors.Counts()["ns/job"].metric_lines, 2);
  EXPECT_TRUE(collectors.LastProgress("ns/job").has_value());
  EXPECT_FALSE(collectors.LastProgress("ns/other").has_value());
  EXPECT_EQ(sink.publishes.load(), 2);  // once per incarnation (the clock barely moved)
}

TEST(LauncherPodOf, ReadsStartedAndEndedFromThePhaseAndTheLauncherContainer) {
  Json pod = LauncherPodJson("u1", "Pending");
  pod["metadata"]["creationTimestamp"] = "2026-11-28T10:00:00Z";
  EXPECT_EQ(LauncherPodOf(pod), (LauncherPod{.ns = "ns",
                                             .name = "job-launcher",
                                             .uid = "u1",
                                             .job = "job",
                                             .created = "2026-11-28T10:00:00Z"}));
  pod["status"]["phase"] = "Running";
  EXPECT_TRUE(LauncherPodOf(pod).started);
  EXPECT_FALSE(LauncherPodOf(pod).ended);
  pod["status"]["containerStatuses"] = {
      {{"name", "sidecar"}, {"state", {{"terminated", {{"exitCode", 0}}}}}}};
  EXPECT_FALSE(LauncherPodOf(pod).ended) << "another container ended, not the launcher";
  pod["status"]["containerStatuses"].push_back(
      {{"name", "launcher"}, {"state", {{"terminated", {{"exitCode", 1}}}}}});
  EXPECT_TRUE(LauncherPodOf(pod).ended);
  for (const char* phase : {"Succeeded", "Failed"}) {
    LauncherPod done = Launcher("u1", phase);
    EXPECT_TRUE(done.started && done.ended) << phase;
  }
}

TEST(LauncherPodSet, KeepsTheLaunchersAsTheirEventsSay) {
  LauncherPodSet set;
  set.Upsert(LauncherPodJson("u1", "Pending"));
  Json other = LauncherPodJson("u2", "Running");
  other["metadata"]["name"] = "other-launcher";
  set.Upsert(other);
  set.Upsert(LauncherPodJson("u1", "Running"));  // a change replaces the pod
  EXPECT_EQ(set.All(), (std::vector<LauncherPod>{Launcher("u1", "Running"), LauncherPodOf(other)}));
  set.Remove("ns/job-launcher");
  set.Remove("ns/not-kept");
  EXPECT_EQ(set.All(), std::vector<LauncherPod>{LauncherPodOf(other)});
}

TEST(LogCollectorsTest, ATerminatedLauncherContainerEndsTheLogBeforeThePodFinishes) {
  std::atomic<int> opens{0};
  CountingSink sink;
  LogCollectors collectors(
      [&](const std::string&, const std::string&) -> kube::ApiResult<kube::LineStreamPtr> {
        ++opens;
        return kube::LineStreamPtr(
            std::make_unique<VectorLines>(std::vector<std::string>{"[1,0]<stdout>:bye"}));
      },
      sink, Quick());
  Json pod = LauncherPodJson("u1", "Running");
  pod["status"]["containerStatuses"] = {
      {{"name", "sidecar"}, {"state", {{"running", Json::object()}}}},
      {{"name", "launcher"}, {"state", {{"terminated", {{"exitCode", 0}}}}}}};
  collectors.Sync({LauncherPodOf(pod)});
  WaitIdle(collectors);
  EXPECT_EQ(opens.load(), 1);
  EXPECT_EQ(collectors.Ended("u1"), true);
}

// A log whose end comes only once the test opens the gate.
class GatedLines : public kube::LineStream {
 public:
  explicit GatedLines(const std::atomic<bool>& gate) : gate_(gate) {}
  kube::ApiResult<std::optional<std::string>> Next() override {
    ADD_FAILURE() << "Next() waits; the collectors must read with TryNext";
    return std::optional<std::string>();
  }
  kube::ApiResult<kube::ReadyLine> TryNext() override {
    kube::ReadyLine out;
    if (!sent_) {
      sent_ = true;
      out.line = "[1,0]<stdout>:DLJOB_METRIC {\"step\":9,\"accuracy\":0.8}";
    } else if (gate_) {
      out.end = true;
    } else {
      out.wait.until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
    }
    return out;
  }
  void Cancel() override {}

 private:
  const std::atomic<bool>& gate_;
  bool sent_ = false;
};

// What the reconciler asks before it marks a job Succeeded (controller/log_drain.h): not ended
// while the log is being read, ended only once the last throughput has been published.
TEST(LogCollectorsTest, EndedOnlyOnceTheLogIsReadAndTheLastThroughputPublished) {
  std::atomic<bool> gate{false};
  CountingSink sink;
  LogCollectors collectors(
      [&](const std::string&, const std::string&) -> kube::ApiResult<kube::LineStreamPtr> {
        return kube::LineStreamPtr(std::make_unique<GatedLines>(gate));
      },
      sink, Quick());
  EXPECT_EQ(collectors.Ended("u1"), std::nullopt);  // nobody follows it yet
  collectors.Sync({Launcher("u1", "Running")});
  EXPECT_EQ(collectors.Ended("u1"), false);
  gate = true;  // the stream ends, but the pod still runs: followed on, not ended
  EXPECT_EQ(collectors.Ended("u1"), false);
  collectors.Sync({Launcher("u1", "Succeeded")});
  ASSERT_TRUE(dljob::testing::Eventually([&] { return collectors.Ended("u1") == true; }));
  EXPECT_EQ(sink.publishes.load(), 1);
  EXPECT_EQ(collectors.Ended("u2"), std::nullopt);
}

TEST(LogCollectorsTest, ApiSinkMergePatchesTheStatusSubresource) {
  kube::testing::FakeApi api;
  api.Put(kube::resources::kDLJobs, {{"apiVersion", "dljob.io/v1alpha1"},
                                     {"kind", "DLJob"},
                                     {"metadata", {{"namespace", "ns"}, {"name", "job"}}}});
  ApiThroughputSink sink(api);
  Throughput t;
  t.images_per_sec = 2950.5;
  t.step = 100;
  ASSERT_TRUE(sink.Publish("ns", "job", t).ok());
  std::vector<kube::testing::Call> calls = api.Calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].verb, "patch-status");
  EXPECT_EQ(calls[0].body["status"]["throughput"]["imagesPerSec"], 2950.5);
  EXPECT_EQ(calls[0].body["status"]["throughput"]["step"], 100);

  Status missing = sink.Publish("ns", "gone", t);
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("ns/gone"), std::string::npos) << missing.message();
}

}  // namespace
}  // namespace dljob::metrics
