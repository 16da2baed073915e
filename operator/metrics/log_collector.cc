// See log_collector.h.
#include "operator/metrics/log_collector.h"

#include <condition_variable>
#include <filesystem>
#include <memory>

#include "base/env.h"
#include "base/mutex.h"
#include "jobs/log_lines.h"

namespace dljob::metrics {
namespace {

using File = std::unique_ptr<AppendableFile>;

Result<File> OpenArchive(const std::string& path) {
  Env& env = DefaultEnv();
  Status s = env.CreateDirs(std::filesystem::path(path).parent_path().string());
  if (!s.ok()) return s.WithContext("the log archive " + path);
  Result<File> f = env.NewAppendableFile(path);
  if (!f.ok()) return f.status().WithContext("the log archive " + path);
  return f;
}

// Sleeps `d` unless stopped first; returns whether it was stopped.
bool SleepUnlessStopped(std::stop_token stop, std::chrono::milliseconds d) {
  Mutex mu;  // guards nothing: wait_for needs a lock to release
  std::condition_variable_any cv;
  MutexLock lock(mu);
  cv.wait_for(mu, stop, d, [] { return false; });
  return stop.stop_requested();
}

}  // namespace

std::string LogArchivePath(const std::string& dir, const std::string& ns, const std::string& job) {
  return (std::filesystem::path(dir) / ns / (job + ".log")).string();
}

LogCollector::LogCollector(std::string ns, std::string job, std::string pod, LogOpener open,
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
  File archive;
  if (!options_.archive_dir.empty()) {
    auto f = OpenArchive(LogArchivePath(options_.archive_dir, ns_, job_));
    if (!f.ok()) return f.status();
    archive = std::move(*f);
    Status s = archive->Append(FormatLogLine(-1, "dljob: following launcher pod " + pod_) + "\n");
    if (!s.ok()) return s.WithContext("the log archive of " + ns_ + "/" + job_);
  }
  int64_t seen = 0;  // lines of this pod's log already handled (skipped after a re-open)
  int failed_opens = 0;
  while (!stop.stop_requested()) {
    auto stream = open_(ns_, pod_);
    if (!stream.ok()) {
      if (stream.error().IsNotFound() || ++failed_opens > options_.max_reopens) {
        MaybePublish(true, clock_.Now());
        return Status::Unavailable("cannot follow the log of pod " + ns_ + "/" + pod_ + ": " +
                                   stream.error().ToString());
      }
      if (SleepUnlessStopped(stop, options_.reopen_backoff)) break;
      continue;
    }
    failed_opens = 0;
    kube::LineStream& lines = **stream;
    std::stop_callback cancel(stop, [&lines] { lines.Cancel(); });
    int64_t index = 0;
    bool ended = false;
    while (!stop.stop_requested()) {
      auto next = lines.Next();
      if (!next.ok()) break;  // broken: re-open and skip what we have
      if (!next->has_value()) {
        ended = true;
        break;
      }
      if (index++ < seen) continue;
      ++seen;
      if (Status s = Handle(**next, archive.get()); !s.ok()) return s;
    }
    if (ended) break;
  }
  MaybePublish(true, clock_.Now());
  return Status::Ok();
}

Status LogCollector::Handle(const std::string& line, AppendableFile* archive) {
  MpirunLine tagged = ParseMpirunLine(line);
  ++lines_;
  if (archive) {
    std::string out = FormatLogLine(tagged.rank, tagged.text);
    out += '\n';
    // One write per line, unbuffered: the archive is what /logs serves while the job runs.
    if (Status s = archive->Append(out); !s.ok()) {
      return s.WithContext("the log archive of " + ns_ + "/" + job_);
    }
  }
  if (auto sample = ParseMetricLine(tagged.text)) {
    if (!sample->rank && tagged.rank >= 0) sample->rank = tagged.rank;
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
  return Status::Ok();
}

void LogCollector::Flush() { MaybePublish(false, clock_.Now()); }

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
