#include "operator/metrics/log_collectors.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

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

// ---- Many logs from a few threads: streams over real descriptors (pipes), waited on by the
// poller. A log over a real socket is read without waiting by kube::HttpLineStream over
// http::SocketClient (their tests); the real cluster's tests follow launchers end to end.

// A log read from a pipe without waiting: what a socket stream does, on a descriptor the test
// writes to.
class PipeLines final : public kube::LineStream {
 public:
  explicit PipeLines(int fd) : fd_(fd) { ::fcntl(fd_, F_SETFL, O_NONBLOCK); }
  ~PipeLines() override { ::close(fd_); }
  kube::ApiResult<std::optional<std::string>> Next() override {
    ADD_FAILURE() << "Next() waits; the collectors must read with TryNext";
    return std::optional<std::string>();
  }
  kube::ApiResult<kube::ReadyLine> TryNext() override {
    kube::ReadyLine out;
    while (true) {
      if (size_t nl = buf_.find('\n'); nl != std::string::npos) {
        out.line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return out;
      }
      if (cancelled_) return kube::ApiError{0, "Cancelled", "cancelled"};
      char chunk[256];
      ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n > 0) {
        buf_.append(chunk, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) {
        out.end = true;
        return out;
      }
      out.wait.fd = fd_;
      out.wait.events = POLLIN;
      return out;
    }
  }
  void Cancel() override { cancelled_ = true; }

 private:
  const int fd_;
  std::string buf_;
  std::atomic<bool> cancelled_{false};
};

LauncherPod NumberedLauncher(int i, const std::string& phase) {
  LauncherPod p;
  p.ns = "ns";
  p.job = "job-" + std::to_string(i);
  p.name = p.job + "-launcher";
  p.uid = "uid-" + std::to_string(i);
  p.started = phase != "Pending";
  p.ended = phase == "Succeeded";
  return p;
}

int ThreadsOfThisProcess() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

TEST(LogCollectorsPollTest, FollowsTwoHundredLogsWithThreeThreads) {
  constexpr int kLogs = 200;
  std::vector<int> write_ends(kLogs, -1);
  std::map<std::string, int> read_ends;  // pod name -> its pipe's read end, until opened
  for (int i = 0; i < kLogs; ++i) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    read_ends[NumberedLauncher(i, "Running").name] = fds[0];
    write_ends[i] = fds[1];
  }
  Mutex mu;
  CountingSink sink;
  LogCollectorOptions o;
  o.reopen_backoff = std::chrono::milliseconds(1);
  o.threads = 2;
  const int threads_before = ThreadsOfThisProcess();
  LogCollectors collectors(
      [&](const std::string&, const std::string& pod) -> kube::ApiResult<kube::LineStreamPtr> {
        MutexLock lock(mu);
        auto it = read_ends.find(pod);
        if (it == read_ends.end()) {  // read to its end already: a log that is empty now
          int fds[2];
          EXPECT_EQ(::pipe(fds), 0);
          ::close(fds[1]);
          return kube::LineStreamPtr(std::make_unique<PipeLines>(fds[0]));
        }
        int fd = it->second;
        read_ends.erase(it);
        return kube::LineStreamPtr(std::make_unique<PipeLines>(fd));
      },
      sink, o);
  std::vector<LauncherPod> pods;
  for (int i = 0; i < kLogs; ++i) pods.push_back(NumberedLauncher(i, "Running"));
  collectors.Sync(pods);
  for (int i = 0; i < kLogs; ++i) {
    const std::string line = "[1,0]<stdout>:DLJOB_METRIC {\"step\":" + std::to_string(i) + "}\n";
    ASSERT_EQ(::write(write_ends[i], line.data(), line.size()), static_cast<ssize_t>(line.size()));
  }
  ASSERT_TRUE(dljob::testing::Eventually([&] {
    auto counts = collectors.Counts();
    int with_line = 0;
    for (const auto& [job, c] : counts) with_line += c.metric_lines == 1 ? 1 : 0;
    return with_line == kLogs;
  })) << "not every log's line was read";
  EXPECT_EQ(collectors.Following(), static_cast<size_t>(kLogs));
  // The poller and two workers follow all of them: no thread per log.
  EXPECT_EQ(ThreadsOfThisProcess() - threads_before, 3);

  for (int fd : write_ends) ::close(fd);  // the launchers exit
  for (LauncherPod& p : pods) p = NumberedLauncher(&p - pods.data(), "Succeeded");
  collectors.Sync(pods);
  ASSERT_TRUE(dljob::testing::Eventually([&] { return collectors.Following() == 0; }));
  for (int i = 0; i < kLogs; ++i) EXPECT_EQ(collectors.Ended("uid-" + std::to_string(i)), true);
  EXPECT_EQ(sink.publishes.load(), kLogs);  // each job's throughput, once
}

// A collector waiting to open its log again (a kubelet away) waits in a timer, not a thread;
// the pod's going ends it at once, however long the wait.
TEST(LogCollectorsPollTest, APodGoneEndsItsCollectorWaitingToReopen) {
  std::atomic<int> opens{0};
  CountingSink sink;
  LogCollectorOptions o;
  o.reopen_backoff = std::chrono::hours(1);
  o.threads = 1;
  LogCollectors collectors(
      [&](const std::string&, const std::string&) -> kube::ApiResult<kube::LineStreamPtr> {
        ++opens;
        return kube::ApiError{503, "ServiceUnavailable", "the kubelet is away"};
      },
      sink, o);
  collectors.Sync({NumberedLauncher(1, "Running")});
  ASSERT_TRUE(dljob::testing::Eventually([&] { return opens.load() == 1; }));
  collectors.Sync({});  // returns once the collector has finished: not after an hour
  EXPECT_EQ(collectors.Following(), 0u);
  EXPECT_EQ(collectors.Ended("uid-1"), std::nullopt);
  EXPECT_EQ(opens.load(), 1);
}

}  // namespace
}  // namespace dljob::metrics
