// See log_collector.h.
#include "operator/metrics/log_collector.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "base/env.h"
#include "base/mutex.h"
#include "jobs/log_lines.h"
#include "kube/log_timestamp.h"
#include "operator/metrics/log_position.h"

namespace dljob::metrics {
namespace {

// Sleeps `d` unless stopped first; returns whether it was stopped.
bool SleepUnlessStopped(std::stop_token stop, std::chrono::milliseconds d) {
  Mutex mu;  // guards nothing: wait_for needs a lock to release
  std::condition_variable_any cv;
  MutexLock lock(mu);
  cv.wait_for(mu, stop, d, [] { return false; });
  return stop.stop_requested();
}

}  // namespace

LogCollector::LogCollector(std::string ns, std::string job, ArchivedPod pod, LogOpener open,
                           ThroughputSink& sink, LogCollectorOptions options)
    : ns_(std::move(ns)),
      job_(std::move(job)),
      pod_(std::move(pod)),
      open_(std::move(open)),
      sink_(sink),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : RealClock()) {}

std::optional<WallTime> LogCollector::LastProgress() const {
  MutexLock lock(mu_);
  return last_progress_;
}

Status LogCollector::Run(std::stop_token stop) {
  int64_t archived = 0;  // lines of this pod's log handled before this collector
  if (options_.archive) {
    // An archive that cannot be read just now (a bucket's outage) is waited for like a log that
    // cannot be opened: the lines it has decide where this collector starts.
    Result<PodLogWriterPtr> w = options_.archive->OpenPod(ns_, job_, pod_);
    for (int tries = 1; !w.ok() && tries <= options_.max_reopens; ++tries) {
      if (SleepUnlessStopped(stop, options_.reopen_backoff)) return Status::Ok();
      w = options_.archive->OpenPod(ns_, job_, pod_);
    }
    if (!w.ok()) return w.status().WithContext("the log archive of " + ns_ + "/" + job_);
    archive_ = std::move(w).value();
    archive_open_ = true;
    archived = archive_->archived_lines();  // archived before a restart or by the previous leader
  }
  LogPosition position(archived);
  int failed_opens = 0;
  int waiting_opens = 0;             // opens failed in a row so far, for the backoff
  int64_t cut_reported_at = -1;      // handled lines when the last cut was reported: one per place
  bool unreadable_reported = false;  // the log could not be opened, and that was said
  while (!stop.stop_requested()) {
    const bool ended_before_open = container_ended_.load();
    auto stream = open_(ns_, pod_.name);
    if (!stream.ok()) {
      // While the container runs, its log is waited for however long its node's kubelet is away
      // (the API server answers 404 or 5xx meanwhile); LogCollectors stops this collector when the
      // pod is gone. Once the container has ended, a log that cannot be opened is given up.
      if (ended_before_open &&
          (stream.error().IsNotFound() || ++failed_opens > options_.max_reopens)) {
        MaybePublish(true, clock_.Now());
        FlushArchive(true);
        return Status::Unavailable("cannot follow the log of pod " + ns_ + "/" + pod_.name + ": " +
                                   stream.error().ToString());
      }
      if (!ended_before_open && !unreadable_reported) {
        unreadable_reported = true;
        Report("cannot open the log (" + stream.error().ToString() +
               "); trying again while the launcher runs");
      }
      // Doubling while the log stays unreadable (1, 2, 4, 8, 16 s by default): a thousand
      // launchers whose kubelets are away do not ask the API server a thousand times a second.
      const int doublings = std::min(waiting_opens++, 4);
      if (SleepUnlessStopped(stop, options_.reopen_backoff * (1 << doublings))) break;
      continue;
    }
    unreadable_reported = false;
    failed_opens = 0;
    waiting_opens = 0;
    kube::LineStream& lines = **stream;
    std::stop_callback cancel(stop, [&lines] { lines.Cancel(); });
    position.StartRead();
    bool ended = false;
    while (!stop.stop_requested()) {
      auto next = lines.Next();
      if (!next.ok()) break;  // broken: open it again and go on after the last line handled
      if (!next->has_value()) {
        ended = true;
        break;
      }
      std::optional<kube::StampedLogLine> stamped = kube::SplitLogTimestamp(**next);
      if (!position.Advance(stamped ? std::optional(stamped->time) : std::nullopt)) continue;
      if (std::optional<LogGap> gap = position.TakeGap()) {
        ++gaps_;
        Report("lines written between " + FormatRfc3339Nanos(gap->after) + " and " +
               FormatRfc3339Nanos(gap->before) +
               " may be missing: the log no longer holds the last line read (rotated while its "
               "stream was down)");
      }
      if (Status s = Handle(stamped ? std::string(stamped->text) : **next); !s.ok()) return s;
    }
    if (!ended) continue;
    if (ended_before_open) break;  // the whole log of a container that had ended
    // The stream ended with the container running as far as this collector knows: the container
    // ended (told shortly), or the stream was cut. Either way the log is read again; a cut is
    // reported once the container is seen to run on, and once for the line it happened after (a
    // stream that ends again at once is not news).
    if (SleepUnlessStopped(stop, options_.reopen_backoff)) break;
    if (!container_ended_.load() && position.handled() != cut_reported_at) {
      cut_reported_at = position.handled();
      ++cuts_;
      Report(
          "the log stream ended while the launcher runs (a kubelet or API server restart); "
          "following it again after line " +
          std::to_string(position.handled()));
    }
  }
  MaybePublish(true, clock_.Now());
  if (archive_) {
    if (Status s = archive_->Flush(true, clock_.Now()); !s.ok()) {
      return s.WithContext("the log archive of " + ns_ + "/" + job_);
    }
  }
  return Status::Ok();
}

void LogCollector::Report(const std::string& what) const {
  const std::string line = "log of " + ns_ + "/" + job_ + " (pod " + pod_.name + "): " + what;
  if (options_.report) {
    options_.report(line);
  } else {
    std::fprintf(stderr, "dljob-operator: %s\n", line.c_str());
  }
}

Status LogCollector::Handle(const std::string& line) {
  MpirunLine tagged = ParseMpirunLine(line);
  ++lines_;
  // The line is archived as the pod's log has it (a new leader skips as many lines as the
  // archive holds); a metric line of another rank that landed inside it still counts.
  if (archive_) archive_->Add(FormatLogLine(tagged.rank, tagged.text));
  TakeMetric(tagged);
  for (const MpirunLine& piece : OtherRanksPieces(line)) TakeMetric(piece);
  return Status::Ok();
}

void LogCollector::TakeMetric(const MpirunLine& line) {
  std::optional<MetricSample> sample = MetricOf(line);
  if (!sample) return;
  const WallTime now = clock_.Now();
  {
    MutexLock lock(mu_);
    aggregator_.Add(*sample, FormatRfc3339(now));
    dirty_ = true;
    last_progress_ = now;
  }
  ++metric_lines_;
  MaybePublish(false, now);
}

void LogCollector::Flush() {
  MaybePublish(false, clock_.Now());
  FlushArchive(false);
}

void LogCollector::FlushArchive(bool force) {
  if (!archive_open_.load()) return;
  // A failed write keeps its lines for the next Flush (or the end, whose failure Run() returns).
  (void)archive_->Flush(force, clock_.Now());
}

void LogCollector::MaybePublish(bool force, WallTime now) {
  MutexLock publishing(publish_mu_);
  Throughput current;
  {
    MutexLock lock(mu_);
    if (!dirty_) return;
    if (!force && published_at_ && now - *published_at_ < options_.publish_interval) return;
    current = aggregator_.Current();
    dirty_ = false;
  }
  // A failed publish is retried at the next line, Flush() or the end; the log goes on.
  if (!sink_.Publish(ns_, job_, current).ok()) {
    MutexLock lock(mu_);
    dirty_ = true;
    return;
  }
  MutexLock lock(mu_);
  published_at_ = now;
}

}  // namespace dljob::metrics
