#include "operator/metrics/log_collector.h"

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "base/mutex.h"
#include "base/testing/fake_clock.h"
#include "kube/log_timestamp.h"
#include "storage/objstore/local_dir_store.h"

namespace dljob::metrics {
namespace {

namespace fs = std::filesystem;

// A log stream serving `lines`, then the end, or an error after `break_after` lines; with
// `block_at_end` it waits for Cancel() instead of ending. Read without waiting (TryNext), it
// gives one line per read, with nothing between them, as lines that arrive one by one;
// `before_line` runs before each line is given (a test moves its clock there).
class FakeLines : public kube::LineStream {
 public:
  FakeLines(std::vector<std::string> lines, int break_after = -1, bool block_at_end = false,
            std::function<void()> before_line = nullptr)
      : lines_(std::move(lines)),
        break_after_(break_after),
        block_at_end_(block_at_end),
        before_line_(std::move(before_line)) {}
  kube::ApiResult<std::optional<std::string>> Next() override {
    if (break_after_ >= 0 && next_ == static_cast<size_t>(break_after_)) {
      return kube::ApiError{0, "TransportError", "connection reset"};
    }
    if (next_ < lines_.size()) {
      if (before_line_) before_line_();
      return std::optional<std::string>(lines_[next_++]);
    }
    if (block_at_end_) {
      MutexLock lock(mu_);
      while (!cancelled_) cv_.wait(mu_);
      return kube::ApiError{0, "Cancelled", "cancelled"};
    }
    return std::optional<std::string>();
  }
  kube::ApiResult<kube::ReadyLine> TryNext() override {
    kube::ReadyLine nothing_yet;
    nothing_yet.wait.until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
    const bool at_end = next_ >= lines_.size() && break_after_ != static_cast<int>(next_);
    if (at_end && block_at_end_) {
      MutexLock lock(mu_);
      if (cancelled_) return kube::ApiError{0, "Cancelled", "cancelled"};
      return nothing_yet;
    }
    if (!at_end) {
      gave_line_ = !gave_line_;
      if (!gave_line_) return nothing_yet;  // a line, then nothing, then a line...
    }
    return LineStream::TryNext();  // Next() does not wait here
  }
  void Cancel() override {
    MutexLock lock(mu_);
    cancelled_ = true;
    cv_.notify_all();
  }

 private:
  std::vector<std::string> lines_;
  size_t next_ = 0;
  int break_after_;
  bool block_at_end_;
  std::function<void()> before_line_;
  bool gave_line_ = false;  // the last TryNext gave a line
  Mutex mu_;
  std::condition_variable_any cv_;
  bool cancelled_ GUARDED_BY(mu_) = false;
};

class RecordingSink : public ThroughputSink {
 public:
  Status Publish(const std::string& ns, const std::string& job, const Throughput& t) override {
    MutexLock lock(mu);
    published.push_back({ns + "/" + job, t});
    return Status::Ok();
  }
  // A copy, for reading once the collector is done or idle.
  std::vector<std::pair<std::string, Throughput>> Published() {
    MutexLock lock(mu);
    return published;
  }
  Mutex mu;
  std::vector<std::pair<std::string, Throughput>> published GUARDED_BY(mu);
};

std::string Metric(int rank, int step, double ips) {
  std::ostringstream s;
  s << "[1," << rank << "]<stdout>:DLJOB_METRIC {\"step\":" << step << ",\"images_per_sec\":" << ips
    << ",\"world_size\":2}";
  return s.str();
}

// `text` of rank 0 as the launcher's log line, stamped `ms` past a fixed time as the kubelet stamps
// it with timestamps=true.
std::string Stamped(int ms, const std::string& text) {
  return kube::StampLogLine(
      WallTime(std::chrono::seconds(1'800'000'000)) + std::chrono::milliseconds(ms),
      "[1,0]<stdout>:" + text);
}

ArchivedPod Pod(const std::string& name) { return ArchivedPod{name, "uid-" + name, ""}; }

std::vector<std::string> Lines(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class LogCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("dljob-logcollector-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_ = std::move(storage::LocalDirStore::Open(dir_.string())).value();
    archive_ = std::make_unique<LogArchive>(*store_, "");
  }
  void TearDown() override {
    archive_.reset();
    fs::remove_all(dir_);
  }

  std::vector<std::string> Archived() {
    Result<std::string> log = archive_->Read("ns", "job");
    EXPECT_TRUE(log.ok()) << log.status().message();
    return log.ok() ? Lines(*log) : std::vector<std::string>{};
  }
  // The archived lines the pod's log gave, after the collector's own first line ("[mpirun] dljob:
  // following launcher pod p").
  std::vector<std::string> ArchivedFromThePod() {
    std::vector<std::string> archived = Archived();
    if (!archived.empty()) archived.erase(archived.begin());
    return archived;
  }

  LogCollectorOptions Options() {
    LogCollectorOptions o;
    o.archive = archive_.get();
    o.reopen_backoff = std::chrono::milliseconds(1);
    o.clock = &clock_;
    return o;
  }

  // Options() whose collector's reports go to reports_.
  LogCollectorOptions Reporting() {
    LogCollectorOptions o = Options();
    o.report = [this](const std::string& line) { reports_.push_back(line); };
    return o;
  }

  fs::path dir_;
  std::vector<std::string> reports_;
  std::unique_ptr<storage::LocalDirStore> store_;
  std::unique_ptr<LogArchive> archive_;
  dljob::testing::FakeClock clock_;
  RecordingSink sink_;
};

TEST_F(LogCollectorTest, ArchivesTaggedLinesAndPublishesThroughputAtMostPerInterval) {
  std::vector<std::string> log = {"Warning: Permanently added 'w-0'",
                                  "[1,0]<stdout>:Step\tImg/sec\ttotal_loss",
                                  Metric(0, 10, 100),
                                  Metric(1, 10, 110),
                                  "[1,1]<stderr>:oops",
                                  Metric(0, 20, 120)};
  LogCollector c(
      "ns", "job", Pod("job-launcher"),
      [&](const std::string& ns, const std::string& pod) -> kube::ApiResult<kube::LineStreamPtr> {
        EXPECT_EQ(ns + "/" + pod, "ns/job-launcher");
        return kube::LineStreamPtr(std::make_unique<FakeLines>(log));
      },
      sink_, Options());
  c.ContainerEnded();  // the log is complete: its stream's end is the end
  ASSERT_TRUE(c.Run(std::stop_token()).ok());

  const std::vector<std::string> archived = Archived();
  ASSERT_EQ(archived.size(), log.size() + 1);
  EXPECT_EQ(archived[0], "[mpirun] dljob: following launcher pod job-launcher");
  EXPECT_EQ(archived[1], "[mpirun] Warning: Permanently added 'w-0'");
  EXPECT_EQ(archived[2], "[rank 0] Step\tImg/sec\ttotal_loss");
  EXPECT_EQ(archived[5], "[rank 1] oops");
  EXPECT_EQ(c.lines(), 6);
  EXPECT_EQ(c.metric_lines(), 3);
  EXPECT_EQ(c.LastProgress(), clock_.Now());

  // The clock never moved: one publish at the first metric line, one at the end.
  const auto published = sink_.Published();
  ASSERT_EQ(published.size(), 2u);
  EXPECT_EQ(published[0].first, "ns/job");
  EXPECT_EQ(published[0].second.step, 10);
  const Throughput& last = published[1].second;
  EXPECT_EQ(last.step, 20);
  EXPECT_DOUBLE_EQ(*last.images_per_sec, 120 + 110);  // each rank's latest
}

// mpirun tags each chunk a rank writes: a rank's metric line can land inside another rank's line
// written in pieces. The line is archived as the log has it, and the metric still counts.
TEST_F(LogCollectorTest, AMetricLineInsideAnotherRanksLineCounts) {
  std::vector<std::string> log = {
      Metric(0, 10, 100),
      "[1,0]<stdout>:10\t[1,1]<stdout>:DLJOB_METRIC {\"step\":10,\"images_per_sec\":110,"
      "\"world_size\":2}",
      "[1,0]<stdout>:images/sec: 100.0"};
  LogCollector c(
      "ns", "job", Pod("job-launcher"),
      [&](const std::string&, const std::string&) -> kube::ApiResult<kube::LineStreamPtr> {
        return kube::LineStreamPtr(std::make_unique<FakeLines>(log));
      },
      sink_, Options());
  c.ContainerEnded();
  ASSERT_TRUE(c.Run(std::stop_token()).ok());

  EXPECT_EQ(c.lines(), 3);
  EXPECT_EQ(c.metric_lines(), 2);
  const std::vector<std::string> archived = ArchivedFromThePod();
  ASSERT_EQ(archived.size(), 3u);  // one archived line per line of the pod's log
  EXPECT_EQ(archived[1],
            "[rank 0] 10\t[1,1]<stdout>:DLJOB_METRIC {\"step\":10,"
            "\"images_per_sec\":110,\"world_size\":2}");
  const auto published = sink_.Published();
  ASSERT_FALSE(published.empty());
  EXPECT_DOUBLE_EQ(*published.back().second.images_per_sec, 100 + 110);  // both ranks' latest
}

TEST_F(LogCollectorTest, PublishesAgainOnceTheIntervalHasPassed) {
  std::vector<std::string> log = {Metric(0, 1, 10), Metric(0, 2, 10), Metric(0, 3, 10)};
  LogCollector c(
      "ns", "job", Pod("p"),
      [&](const std::string&, const std::string&) -> kube::ApiResult<kube::LineStreamPtr> {
        return kube::LineStreamPtr(std::make_unique<FakeLines>(
            log, -1, false, [&] { clock_.Advance(std::chrono::seconds(3)); }));  // 3 s apart
      },
      sink_, Options());
  c.ContainerEnded();  // the log is complete: its stream's end is the end
  ASSERT_TRUE(c.Run(std::stop_token()).ok());
  std::vector<int64_t> steps;
  for (auto& [key, t] : sink_.Published()) steps.push_back(*t.step);
  // Step 1 published; step 2 is 3 s later (< 5 s); step 3 is 6 s after step 1; nothing new at the
  // end.
  EXPECT_EQ(steps, (std::vector<int64_t>{1, 3}));
}

TEST_F(LogCollectorTest, FlushPublishesAQuietJobsLatestThroughputAfterTheInterval) {
  // Two metric lines, then the log goes quiet (the stream waits for more).
  LogCollector c(
      "ns", "job", Pod("p"),
      [](const std::string&, const std::string&) -> kube::ApiResult<kube::LineStreamPtr> {
        return kube::LineStreamPtr(std::make_unique<FakeLines>(
            std::vector<std::string>{Metric(0, 1, 10), Metric(0, 2, 20)}, -1,
            /*block_at_end=*/true));
      },
      sink_, Options());
  std::jthread runner([&](std::stop_token stop) { EXPECT_TRUE(c.Run(stop).ok()); });
  while (c.metric_lines() < 2) std::this_thread::yield();
  c.Flush();  // within the interval: nothing new goes out
  {
    MutexLock lock(sink_.mu);
    ASSERT_EQ(sink_.published.size(), 1u);
    EXPECT_EQ(sink_.published[0].second.step, 1);
  }
  clock_.Advance(std::chrono::seconds(5));
  c.Flush();
  {
    MutexLock lock(sink_.mu);
    ASSERT_EQ(sink_.published.size(), 2u);
    EXPECT_EQ(sink_.published[1].second.step, 2);
  }
  c.Flush();  // nothing new since
  EXPECT_EQ(sink_.Published().size(), 2u);
  runner.request_stop();
}

TEST_F(LogCollectorTest, ReopensABrokenStreamWithoutDuplicatingLines) {
  std::vector<std::string> log = {"[1,0]<stdout>:a", "[1,0]<stdout>:b", "[1,0]<stdout>:c",
                                  "[1,0]<stdout>:d"};
  int opens = 0;
  LogCollector c(
      "ns", "job", Pod("p"),
      [&](const std::string&, const std::string&) -> kube::ApiResult<kube::LineStreamPtr> {
        ++opens;
        if (opens == 2) return kube::ApiError{503, "ServiceUnavailable", "restarting"};
        // The first stream breaks after 2 lines; the third reads the log from its start.
        return kube::LineStreamPtr(std::make_unique<FakeLines>(log, opens == 1 ? 2 : -1));
      },
      sink_, Options());
  c.ContainerEnded();  // the log is complete: its stream's end is the end
  ASSERT_TRUE(c.Run(std::stop_token()).ok());
  EXPECT_EQ(opens, 3);
  EXPECT_EQ(ArchivedFromThePod(),
            (std::vector<std::string>{"[rank 0] a", "[rank 0] b", "[rank 0] c", "[rank 0] d"}));
}

TEST_F(LogCollectorTest, AStreamEndedWhileTheLauncherRunsIsFollowedAgainWithoutDuplicates) {
  // A kubelet restart ends the stream cleanly after b while the launcher goes on to write c and
  // d; the container then ends.
  const std::vector<std::string> log = {Stamped(1, "a"), Stamped(2, "b"), Stamped(2, "c"),
                                        Stamped(3, "d")};
  int opens = 0;
  LogCollector* self = nullptr;
  LogCollectorOptions o = Reporting();
  LogCollector c(
      "ns", "job", Pod("p"),
      [&](const std::string&, const std::string&) -> kube::ApiResult<kube::LineStreamPtr> {
        switch (++opens) {
          case 1:  // cut after b
            return kube::LineStreamPtr(std::make_unique<FakeLines>(
                std::vector<std::string>(log.begin(), log.begin() + 2)));
          case 2:  // followed again: c arrives, then the container ends (and its stream)
            self->ContainerEnded();
            return kube::LineStreamPtr(std::make_unique<FakeLines>(
                std::vector<std::string>(log.begin(), log.begin() + 3)));
          default:  // the final read finds d, written after the second stream ended
            return kube::LineStreamPtr(std::make_unique<FakeLines>(log));
        }
      },
      sink_, o);
  self = &c;
  ASSERT_TRUE(c.Run(std::stop_token()).ok());
  EXPECT_EQ(opens, 3);
  EXPECT_EQ(ArchivedFromThePod(),
            (std::vector<std::string>{"[rank 0] a", "[rank 0] b", "[rank 0] c", "[rank 0] d"}));
  EXPECT_EQ(c.lines(), 4);
  EXPECT_EQ(c.cuts(), 1);
  EXPECT_EQ(c.gaps(), 0);
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0],
            "log of ns/job (pod p): the log stream ended while the launcher runs (a kubelet or API "
            "server restart); following it again after line 2");
}

TEST_F(LogCollectorTest, ALogRotatedWhileItsStreamWasDownIsReadOnWithItsGapReported) {
  int opens = 0;
  LogCollector* self = nullptr;
  LogCollectorOptions o = Reporting();
  LogCollector c(
      "ns", "job", Pod("p"),
      [&](const std::string&, const std::string&) -> kube::ApiResult<kube::LineStreamPtr> {
        if (++opens == 1) {
          return kube::LineStreamPtr(std::make_unique<FakeLines>(
              std::vector<std::string>{Stamped(1, "a"), Stamped(2, "b")}, /*break_after=*/2));
        }
        self->ContainerEnded();  // the file now starts at e: c and d went with the rotation
        return kube::LineStreamPtr(std::make_unique<FakeLines>(
            std::vector<std::string>{Stamped(5, "e"), Stamped(6, "f")}));
      },
      sink_, o);
  self = &c;
  ASSERT_TRUE(c.Run(std::stop_token()).ok());
  EXPECT_EQ(ArchivedFromThePod(),
            (std::vector<std::string>{"[rank 0] a", "[rank 0] b", "[rank 0] e", "[rank 0] f"}));
  EXPECT_EQ(c.gaps(), 1);
  EXPECT_EQ(c.cuts(), 0);  // a broken stream, not one that ended
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0],
            "log of ns/job (pod p): lines written between 2027-01-15T08:00:00.002000000Z and "
            "2027-01-15T08:00:00.005000000Z may be missing: the log no longer holds the last line "
            "read (rotated while its stream was down)");
}

TEST_F(LogCollectorTest, ALogThatCannotBeOpenedIsWaitedForWhileTheLauncherRunsThenGivenUp) {
  // The kubelet of the pod's node is down: the API server answers 404 for its log (as 1.20 does).
  int opens = 0;
  LogCollector* self = nullptr;
  LogCollectorOptions o = Reporting();
  LogCollector c(
      "ns", "job", Pod("p"),
      [&](const std::string&, const std::string&) -> kube::ApiResult<kube::LineStreamPtr> {
        if (++opens == 3 * o.max_reopens) self->ContainerEnded();  // long past max_reopens
        return kube::ApiError{404, "NotFound", "pods \"p\" not found"};
      },
      sink_, o);
  self = &c;
  Status s = c.Run(std::stop_token());
  EXPECT_EQ(opens, 3 * o.max_reopens + 1);  // once ended, a 404 is the end
  EXPECT_EQ(reports_.size(), 1u);           // said once, not at every try
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("pods \"p\" not found"), std::string::npos) << s.message();
}

TEST_F(LogCollectorTest, StopCancelsAFollowThatWaitsForLines) {
  LogCollector c(
      "ns", "job", Pod("p"),
      [](const std::string&, const std::string&) -> kube::ApiResult<kube::LineStreamPtr> {
        return kube::LineStreamPtr(
            std::make_unique<FakeLines>(std::vector<std::string>{Metric(0, 5, 50)}, -1,
                                        /*block_at_end=*/true));
      },
      sink_, Options());
  std::jthread runner([&](std::stop_token stop) { EXPECT_TRUE(c.Run(stop).ok()); });
  while (c.lines() < 1) std::this_thread::yield();
  runner.request_stop();
  runner.join();
  // What was aggregated is published on the way out.
  const auto published = sink_.Published();
  ASSERT_FALSE(published.empty());
  EXPECT_EQ(published.back().second.step, 5);
}

TEST_F(LogCollectorTest, ACollectorOfAnotherReplicaOrAfterARestartContinuesWithoutDuplicates) {
  // The first leader archives 3 lines of the pod's log and stops (its process goes away).
  std::vector<std::string> log = {"[1,0]<stdout>:a", "[1,0]<stdout>:b", "[1,0]<stdout>:c",
                                  "[1,0]<stdout>:d", "[1,0]<stdout>:e"};
  {
    LogCollector first(
        "ns", "job", Pod("p"),
        [&](const std::string&, const std::string&) -> kube::ApiResult<kube::LineStreamPtr> {
          return kube::LineStreamPtr(std::make_unique<FakeLines>(
              std::vector<std::string>(log.begin(), log.begin() + 3), -1, /*block_at_end=*/true));
        },
        sink_, Options());
    std::jthread runner([&](std::stop_token stop) { EXPECT_TRUE(first.Run(stop).ok()); });
    while (first.lines() < 3) std::this_thread::yield();
    runner.request_stop();
  }
  // The next leader, with an archive object of its own over the same store, reads the pod's log
  // from its start and archives only what the first did not.
  LogArchive again(*store_, "");
  LogCollectorOptions o = Options();
  o.archive = &again;
  LogCollector next(
      "ns", "job", Pod("p"),
      [&](const std::string&, const std::string&) -> kube::ApiResult<kube::LineStreamPtr> {
        return kube::LineStreamPtr(std::make_unique<FakeLines>(log));
      },
      sink_, o);
  next.ContainerEnded();
  ASSERT_TRUE(next.Run(std::stop_token()).ok());
  EXPECT_EQ(Archived(),
            (std::vector<std::string>{"[mpirun] dljob: following launcher pod p", "[rank 0] a",
                                      "[rank 0] b", "[rank 0] c", "[rank 0] d", "[rank 0] e"}));
}

TEST_F(LogCollectorTest, AnUnwritableArchiveIsAnErrorNamingThePath) {
  std::ofstream(dir_ / "ns") << "a file where the namespace directory should be";
  LogCollector c(
      "ns", "job", Pod("p"),
      [](const std::string&, const std::string&) -> kube::ApiResult<kube::LineStreamPtr> {
        return kube::LineStreamPtr(std::make_unique<FakeLines>(std::vector<std::string>{}));
      },
      sink_, Options());
  c.ContainerEnded();
  Status s = c.Run(std::stop_token());
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("ns/job/"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace dljob::metrics
