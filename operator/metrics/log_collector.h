// LogCollector: follows one launcher pod's log for as long as the pod runs — archiving every line
// and turning metric lines into the job's status.throughput.
//
// The launcher runs `mpirun --tag-output`, so its log carries every rank's lines tagged
// "[jobid,rank]<stdout>:". Each line is
//   - added to the job's LogArchive (log_archive.h) in the job log format of jobs/log_lines.h
//     ("[rank 3] text", "[mpirun] text"), the same format the local runner keeps, so `dljob logs`
//     reads both and the log outlives the pods; what was added is written at most once per the
//     archive's flush_interval (Flush, called from the operator's loop) and at the end;
//   - parsed with the shared metric-line parser and folded by ProgressAggregator; the aggregate is
//     published to the ThroughputSink at most once per `publish_interval`, and once more at the
//     end of the log, so the API server sees a few writes per job per minute, not one per line.
// The log is read with the kubelet's time stamps (kube/log_timestamp.h), which are not archived
// or parsed. When the stream breaks (API server restart, dropped connection), or ends while the
// launcher container still runs (a kubelet restart ends every stream it serves), the collector
// opens the log again and goes on after the last line it handled (log_position.h): no line
// handled twice, and a gap — the log no longer holding that line, rotated while the stream was
// down — reported with the times between which lines may be missing. A stream that ended while
// the container ran is reported too, once it is clear the container still runs. The collector
// learns that the container has ended from ContainerEnded() (LogCollectors calls it from the
// pods it is given); until then the end of a stream is not the end of the log, and once told, it
// reads the log once more to its end, so lines written after a cut and before the exit are not
// lost. The same holds across leaders: a collector starts by skipping the lines of its pod that
// the archive already holds (written before an operator restart or by the previous leader).
//
// A collector is a state machine, so one thread can follow many logs: Step() does the next piece
// of work and says what to wait for before the next (CollectorWait). Steps that call out —
// opening the archive or the log, giving up, the final publish — may block and are run where
// blocking is fine; reading never waits (LineStream::TryNext), so a poller runs those steps when
// the stream's socket is readable. A metric line never publishes from the reading step: the step
// says when a publish is due and the driver calls Flush() where it may block. LogCollectors
// drives many collectors from a poller and a few threads; Run() drives one on the calling
// thread.
//
// Step() is called by one thread at a time. Stop(), ContainerEnded(), the counts, LastProgress,
// FlushDue and Flush are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/readiness.h"
#include "base/status.h"
#include "base/time_format.h"
#include "jobs/dljob_types.h"
#include "jobs/log_lines.h"
#include "jobs/metric_line.h"
#include "kube/api.h"
#include "operator/metrics/log_archive.h"
#include "operator/metrics/log_position.h"

namespace dljob::metrics {

// Receives a job's aggregated throughput (the operator merge-patches it into status).
class ThroughputSink {
 public:
  virtual ~ThroughputSink() = default;
  virtual Status Publish(const std::string& ns, const std::string& job,
                         const Throughput& throughput) = 0;
};

// Opens the pod's log (follow) — kube::Api::Logs in production.
using LogOpener = std::function<kube::ApiResult<kube::LineStreamPtr>(const std::string& ns,
                                                                     const std::string& pod)>;

struct LogCollectorOptions {
  LogArchive* archive = nullptr;  // null = do not archive; must outlive the collectors
  std::chrono::milliseconds publish_interval{std::chrono::seconds(5)};
  // The wait before opening the log again; while the log stays unreadable (the container runs,
  // its kubelet away) it doubles with every failed open, up to 16 times this.
  std::chrono::milliseconds reopen_backoff{std::chrono::seconds(1)};
  // Consecutive failed opens before giving up, once the container has ended; while it runs the
  // log is waited for (its node's kubelet may be restarting).
  int max_reopens = 60;
  const Clock* clock = nullptr;  // where "now" comes from; RealClock() when null; must outlive
  // LogCollectors: the threads that run the steps that call out (opening logs, publishing); one
  // more reads every followed log.
  int threads = 8;
  // Where a collector says what happened to its stream (a cut followed again, a gap): one line
  // without a newline; stderr when null.
  std::function<void(const std::string&)> report;
};

// What a collector waits for before its next Step().
struct CollectorWait {
  enum class Kind {
    kCall,    // the next step may block (it calls out): run it at `not_before` or later
    kStream,  // the next step reads without waiting: run it once `ready` says
    kDone,    // followed to the end (or stopped); LogCollector::result() says how it ended
  };
  Kind kind = Kind::kCall;
  std::chrono::steady_clock::time_point not_before{};  // kCall
  Readiness ready;                                     // kStream
  // A publish or an archive write is due (LogCollector::FlushDue): call Flush() where it may
  // block.
  bool flush = false;
};

class LogCollector {
 public:
  LogCollector(std::string ns, std::string job, ArchivedPod pod, LogOpener open,
               ThroughputSink& sink, LogCollectorOptions options);
  ~LogCollector();

  // Follows the log to its end or until `stop`, on the calling thread. Returns result().
  Status Run(std::stop_token stop);

  // The next piece of work; the first call starts. One thread at a time; not after kDone.
  CollectorWait Step();
  // Ends the follow: a stream being read is cancelled and the next Step() publishes what is
  // left, writes the archive and returns kDone. Thread-safe; idempotent.
  void Stop();
  // How the follow ended, once Step() returned kDone: the first error that ended it early
  // (archive not readable or writable, log not openable after max_reopens), else OK.
  Status result() const;

  // The launcher container has ended (terminated, or its pod finished): the next end of the
  // log's stream is the end of the log. Thread-safe; idempotent.
  void ContainerEnded() { container_ended_ = true; }

  int64_t lines() const { return lines_.load(); }
  int64_t metric_lines() const { return metric_lines_.load(); }
  // Streams that ended while the container ran (counted once per line they ended after).
  int64_t cuts() const { return cuts_.load(); }
  int64_t gaps() const { return gaps_.load(); }  // re-reads that found lines may be missing
  // When the last metric line arrived (the job's progress, for progressDeadlineSeconds).
  std::optional<WallTime> LastProgress() const;
  // Publishes what arrived since the last publish once publish_interval has passed, even when no
  // new line comes (training went quiet), and writes the archive's new lines once its
  // flush_interval has. Called periodically, and when a Step says so, from a thread that may
  // block.
  void Flush();
  // Whether Flush() has something to do now: a publish or an archive write is due.
  bool FlushDue() const;

 private:
  enum class Phase { kArchive, kOpen, kRead, kAfterEnd, kFinish, kDone };
  using Steady = std::chrono::steady_clock;

  CollectorWait OpenArchive();
  CollectorWait OpenLog();
  CollectorWait Read();
  CollectorWait AfterEnd();
  CollectorWait Finish();
  CollectorWait Done(Status status);
  static CollectorWait CallAt(Steady::time_point when);
  // The stream being read, set or dropped under stream_mu_ (Stop cancels it from any thread).
  void SetStream(kube::LineStreamPtr stream) EXCLUDES(stream_mu_);

  Status Handle(const std::string& line);
  // Folds `line` into the throughput when it is a metric line.
  void TakeMetric(const MpirunLine& line);
  void Report(const std::string& what) const;
  void FlushArchive(bool force);
  void MaybePublish(bool force, WallTime now);

  const std::string ns_, job_;
  const ArchivedPod pod_;
  LogOpener open_;
  ThroughputSink& sink_;
  const LogCollectorOptions options_;
  const Clock& clock_;
  std::atomic<int64_t> lines_{0}, metric_lines_{0}, cuts_{0}, gaps_{0};
  std::atomic<bool> container_ended_{false};
  Mutex publish_mu_ ACQUIRED_BEFORE(mu_);  // serialises publishes, so they reach the sink in order
  mutable Mutex mu_;
  ProgressAggregator aggregator_ GUARDED_BY(mu_);
  bool dirty_ GUARDED_BY(mu_) = false;  // aggregated, not yet published
  std::optional<WallTime> published_at_ GUARDED_BY(mu_);
  std::optional<WallTime> last_progress_ GUARDED_BY(mu_);
  std::shared_ptr<PodLogWriter> archive_;  // set by the first Step before any line; thread-safe
  std::atomic<bool> archive_open_{false};
  std::atomic<bool> stopped_{false};

  // The state machine's, touched only by Step().
  Phase phase_ = Phase::kArchive;
  int archive_tries_ = 0;
  LogPosition position_{0};
  int failed_opens_ = 0;
  int waiting_opens_ = 0;                // opens failed in a row so far, for the backoff
  int64_t cut_reported_at_ = -1;         // handled lines when the last cut was reported
  bool unreadable_reported_ = false;     // the log could not be opened, and that was said
  bool ended_before_open_ = false;       // the container had ended when the stream was opened
  kube::LineStream* reading_ = nullptr;  // stream_.get(), for Step without the lock
  Status result_;

  mutable Mutex stream_mu_;
  kube::LineStreamPtr stream_ GUARDED_BY(stream_mu_);
};

}  // namespace dljob::metrics
