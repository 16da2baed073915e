// See log_collector.h.
#include "operator/metrics/log_collector.h"

#include <poll.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "base/env.h"
#include "base/mutex.h"
#include "base/stoppable_sleep.h"
#include "jobs/log_lines.h"
#include "kube/log_timestamp.h"
#include "operator/metrics/log_position.h"

namespace dljob::metrics {
namespace {

// How many lines one reading step takes at most before it lets other streams go.
constexpr int kLinesPerStep = 1000;

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

LogCollector::~LogCollector() = default;

std::optional<WallTime> LogCollector::LastProgress() const {
  MutexLock lock(mu_);
  return last_progress_;
}

Status LogCollector::Run(std::stop_token stop) {
  std::stop_callback on_stop(stop, [this] { Stop(); });
  while (true) {
    CollectorWait wait = Step();
    if (wait.flush) Flush();
    switch (wait.kind) {
      case CollectorWait::Kind::kDone:
        return result();
      case CollectorWait::Kind::kCall:
        SleepUntilUnlessStopped(stop, wait.not_before);
        break;
      case CollectorWait::Kind::kStream: {
        // Stop() cancels the stream, which wakes a poll on its socket; a stream without one
        // is tried again at its `until`.
        auto left = std::chrono::ceil<std::chrono::milliseconds>(wait.ready.until - Steady::now());
        const int timeout = static_cast<int>(std::clamp<int64_t>(left.count(), 0, 60'000));
        if (wait.ready.fd >= 0) {
          pollfd p{wait.ready.fd, wait.ready.events, 0};
          ::poll(&p, 1, timeout);
        } else {
          SleepUnlessStopped(stop, std::chrono::milliseconds(timeout));
        }
        break;
      }
    }
  }
}

void LogCollector::Stop() {
  stopped_ = true;
  MutexLock lock(stream_mu_);
  if (stream_) stream_->Cancel();
}

Status LogCollector::result() const { return result_; }

void LogCollector::SetStream(kube::LineStreamPtr stream) {
  kube::LineStreamPtr old;  // destroyed outside the lock
  MutexLock lock(stream_mu_);
  old = std::move(stream_);
  stream_ = std::move(stream);
  reading_ = stream_.get();
  if (stream_ && stopped_) stream_->Cancel();  // Stop() came while it was being opened
}

CollectorWait LogCollector::CallAt(Steady::time_point when) {
  CollectorWait w;
  w.kind = CollectorWait::Kind::kCall;
  w.not_before = when;
  return w;
}

CollectorWait LogCollector::Done(Status status) {
  result_ = std::move(status);
  phase_ = Phase::kDone;
  SetStream(nullptr);
  CollectorWait w;
  w.kind = CollectorWait::Kind::kDone;
  return w;
}

CollectorWait LogCollector::Step() {
  switch (phase_) {
    case Phase::kArchive:
      return OpenArchive();
    case Phase::kOpen:
      return OpenLog();
    case Phase::kRead:
      return Read();
    case Phase::kAfterEnd:
      return AfterEnd();
    case Phase::kFinish:
      return Finish();
    case Phase::kDone:
      break;
  }
  return Done(result_);
}

CollectorWait LogCollector::OpenArchive() {
  if (stopped_) return Done(Status::Ok());
  if (options_.archive) {
    // An archive that cannot be read just now (a bucket's outage) is waited for like a log that
    // cannot be opened: the lines it has decide where this collector starts.
    Result<PodLogWriterPtr> w = options_.archive->OpenPod(ns_, job_, pod_);
    if (!w.ok()) {
      if (++archive_tries_ > options_.max_reopens) {
        return Done(w.status().WithContext("the log archive of " + ns_ + "/" + job_));
      }
      return CallAt(Steady::now() + options_.reopen_backoff);
    }
    archive_ = std::move(w).value();
    archive_open_ = true;
    // Lines archived before a restart or by the previous leader are skipped.
    position_ = LogPosition(archive_->archived_lines());
  }
  phase_ = Phase::kOpen;
  return OpenLog();
}

CollectorWait LogCollector::OpenLog() {
  if (stopped_) return Finish();
  ended_before_open_ = container_ended_.load();
  auto stream = open_(ns_, pod_.name);
  if (!stream.ok()) {
    // While the container runs, its log is waited for however long its node's kubelet is away
    // (the API server answers 404 or 5xx meanwhile); LogCollectors stops this collector when the
    // pod is gone. Once the container has ended, a log that cannot be opened is given up.
    if (ended_before_open_ &&
        (stream.error().IsNotFound() || ++failed_opens_ > options_.max_reopens)) {
      MaybePublish(true, clock_.Now());
      FlushArchive(true);
      return Done(Status::Unavailable("cannot follow the log of pod " + ns_ + "/" + pod_.name +
                                      ": " + stream.error().ToString()));
    }
    if (!ended_before_open_ && !unreadable_reported_) {
      unreadable_reported_ = true;
      Report("cannot open the log (" + stream.error().ToString() +
             "); trying again while the launcher runs");
    }
    // Doubling while the log stays unreadable (1, 2, 4, 8, 16 s by default): a thousand
    // launchers whose kubelets are away do not ask the API server a thousand times a second.
    const int doublings = std::min(waiting_opens_++, 4);
    return CallAt(Steady::now() + options_.reopen_backoff * (1 << doublings));
  }
  unreadable_reported_ = false;
  failed_opens_ = 0;
  waiting_opens_ = 0;
  SetStream(std::move(stream).value());
  position_.StartRead();
  phase_ = Phase::kRead;
  return Read();
}

CollectorWait LogCollector::Read() {
  // Nothing here waits or calls out: what does (the final publish and write, opening the log
  // again) is left to the next step, a kCall.
  if (stopped_) {
    phase_ = Phase::kFinish;
    return CallAt(Steady::now());
  }
  for (int taken = 0; taken < kLinesPerStep; ++taken) {
    auto next = reading_->TryNext();
    if (!next.ok()) {  // broken: open it again and go on after the last line handled
      SetStream(nullptr);
      phase_ = Phase::kOpen;
      return CallAt(Steady::now());
    }
    if (next->end) {
      SetStream(nullptr);
      if (ended_before_open_) {  // the whole log of a container that had ended
        phase_ = Phase::kFinish;
        return CallAt(Steady::now());
      }
      // The stream ended with the container running as far as this collector knows: the
      // container ended (told shortly), or the stream was cut. Either way the log is read again.
      phase_ = Phase::kAfterEnd;
      return CallAt(Steady::now() + options_.reopen_backoff);
    }
    if (!next->line) {
      CollectorWait w;
      w.kind = CollectorWait::Kind::kStream;
      w.ready = next->wait;
      w.flush = FlushDue();
      return w;
    }
    const std::string& text = *next->line;
    std::optional<kube::StampedLogLine> stamped = kube::SplitLogTimestamp(text);
    if (!position_.Advance(stamped ? std::optional(stamped->time) : std::nullopt)) continue;
    if (std::optional<LogGap> gap = position_.TakeGap()) {
      ++gaps_;
      Report("lines written between " + FormatRfc3339Nanos(gap->after) + " and " +
             FormatRfc3339Nanos(gap->before) +
             " may be missing: the log no longer holds the last line read (rotated while its "
             "stream was down)");
    }
    if (Status s = Handle(stamped ? std::string(stamped->text) : text); !s.ok()) {
      return Done(s);
    }
  }
  CollectorWait more;  // lines are waiting still: other streams' turn first
  more.kind = CollectorWait::Kind::kStream;
  more.ready.until = Steady::now();
  more.flush = FlushDue();
  return more;
}

CollectorWait LogCollector::AfterEnd() {
  if (stopped_) return Finish();
  // A cut is reported once the container is seen to run on, and once for the line it happened
  // after (a stream that ends again at once is not news).
  if (!container_ended_.load() && position_.handled() != cut_reported_at_) {
    cut_reported_at_ = position_.handled();
    ++cuts_;
    Report(
        "the log stream ended while the launcher runs (a kubelet or API server restart); "
        "following it again after line " +
        std::to_string(position_.handled()));
  }
  phase_ = Phase::kOpen;
  return OpenLog();
}

CollectorWait LogCollector::Finish() {
  SetStream(nullptr);
  MaybePublish(true, clock_.Now());
  if (archive_) {
    if (Status s = archive_->Flush(true, clock_.Now()); !s.ok()) {
      return Done(s.WithContext("the log archive of " + ns_ + "/" + job_));
    }
  }
  return Done(Status::Ok());
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
}

bool LogCollector::FlushDue() const {
  const WallTime now = clock_.Now();
  if (archive_open_.load() && archive_->Due(now)) return true;
  MutexLock lock(mu_);
  return dirty_ && (!published_at_ || now - *published_at_ >= options_.publish_interval);
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
