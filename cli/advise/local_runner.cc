#include "cli/advise/local_runner.h"

#include <chrono>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>

#include "cli/advise/metrics.h"
#include "cli/local/data_fetch.h"
#include "cli/local/job_store.h"
#include "cli/local/job_supervisor.h"
#include "jobs/defaults.h"
#include "jobs/metric_line.h"

namespace dljob::advise {
namespace {

namespace fs = std::filesystem;
double SecondsSince(const Clock& clock, Clock::MonotonicTime start) {
  return std::chrono::duration<double>(clock.MonotonicNow() - start).count();
}

// Notes when the first metric line arrived (the supervisor folds metric lines into the record's
// throughput and keeps them from the terminal) and keeps the last lines of the trial's output
// (for a failure's message); forwards the record's updates to the caller's observer for progress.
class TrialObserver : public JobObserver {
 public:
  TrialObserver(JobObserver& outer, const Clock& clock, Clock::MonotonicTime start)
      : outer_(outer), clock_(clock), start_(start) {}

  void OnOutput(int, bool, std::string_view line) override {
    tail_.emplace_back(line);
    if (tail_.size() > 8) tail_.pop_front();
  }
  void OnUpdate(const DLJob& job) override {
    if (!first_metric_ && job.status.throughput) first_metric_ = SecondsSince(clock_, start_);
    outer_.OnUpdate(job);
  }
  void OnNotice(std::string_view message) override { outer_.OnNotice(message); }

  std::optional<double> first_metric() const { return first_metric_; }
  // The last output line that looks like an error, else the last line.
  std::string LastError() const {
    for (auto it = tail_.rbegin(); it != tail_.rend(); ++it) {
      if (it->find("error") != std::string::npos) return *it;
    }
    return tail_.empty() ? "" : tail_.back();
  }

 private:
  JobObserver& outer_;
  const Clock& clock_;
  Clock::MonotonicTime start_;
  std::optional<double> first_metric_;
  std::deque<std::string> tail_;
};

// The metric lines the supervisor recorded (metrics.jsonl: {"time", "rank", "metric"} a line),
// in order, each at `seconds`.
std::vector<TimedSample> ReadMetrics(const std::string& path, double seconds) {
  std::vector<TimedSample> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    if (!record.is_object() || !record.contains("metric")) continue;
    std::optional<MetricSample> m =
        ParseMetricLine(std::string(kMetricPrefix) + record["metric"].dump());
    if (!m) continue;
    if (!m->rank && record.contains("rank") && record["rank"].is_number_integer()) {
      m->rank = record["rank"].get<int64_t>();
    }
    out.push_back({seconds, std::move(*m)});
  }
  return out;
}

// Why the trial's record says it ended, without the supervisor's pointer to logs the trial's
// private record no longer has.
std::string FailureOf(const DLJob& job) {
  if (job.status.phase == JobPhase::kInterrupted) return "interrupted";
  for (const Condition& c : job.status.conditions) {
    if (c.type == PhaseName(job.status.phase) && !c.message.empty()) {
      return c.message.substr(0, c.message.find("; logs are kept"));
    }
  }
  return std::string("the trial ended ") + PhaseName(job.status.phase);
}

}  // namespace

Result<std::unique_ptr<LocalTrialRunner>> LocalTrialRunner::Create(LocalRunnerOptions options) {
  std::string pattern = (fs::temp_directory_path() / "dljob-advise-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return Status::Unavailable("cannot create a temporary directory for the trials' records");
  }
  return std::unique_ptr<LocalTrialRunner>(new LocalTrialRunner(std::move(options), pattern));
}

LocalTrialRunner::LocalTrialRunner(LocalRunnerOptions options, std::string store_root)
    : options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : RealClock()),
      store_root_(std::move(store_root)) {
  Result<MemoryCgroups> cgroups = MemoryCgroups::Probe();
  if (cgroups.ok()) {
    cgroups_ = *cgroups;
  } else {
    cgroup_why_not_ = cgroups.status().message();
  }
}

LocalTrialRunner::~LocalTrialRunner() {
  std::error_code ec;
  fs::remove_all(store_root_, ec);
}

bool LocalTrialRunner::CanLimitMemory(std::string* why_not) const {
  if (!cgroups_ && why_not != nullptr) *why_not = cgroup_why_not_;
  return cgroups_.has_value();
}

TrialMeasurement LocalTrialRunner::Run(const DLJob& trial, std::optional<int64_t> memory_limit,
                                       JobObserver& observer) {
  TrialMeasurement m;
  DLJob job = trial;
  ApplyDefaults(job);
  Result<LocalPlan> plan = PlanLocalRun(job, options_.machine);
  if (!plan.ok()) {
    m.error = plan.status().message();
    return m;
  }
  for (const std::string& notice : plan->notices) observer.OnNotice(notice);
  if (!plan->fetches.empty()) {
    const Clock::MonotonicTime fetch_start = clock_.MonotonicNow();
    FetchOptions fetch;
    fetch.interrupted = [this] { return Interrupted(); };
    if (Status s = FetchData(plan->fetches, options_.env, observer, clock_, fetch); !s.ok()) {
      m.error = s.message();
      return m;
    }
    m.fetch_seconds = SecondsSince(clock_, fetch_start);
  }
  std::unique_ptr<MemoryCgroup> cgroup;
  if (cgroups_) {
    Result<std::unique_ptr<MemoryCgroup>> made = cgroups_->Create(
        "dljob-" + job.metadata.name + "-" + std::to_string(getpid()), memory_limit, clock_);
    if (!made.ok()) {
      m.error = made.status().message();
      return m;
    }
    cgroup = std::move(*made);
    plan->argv = cgroup->Wrap(plan->argv);
  } else if (memory_limit) {
    m.error = "cannot cap memory here: " + cgroup_why_not_;
    return m;
  }

  JobStore store(store_root_);
  store.Remove(job.metadata.name);  // a leftover of an interrupted trial
  if (Status s = store.Create(job); !s.ok()) {
    m.error = s.message();
    return m;
  }
  const Clock::MonotonicTime start = clock_.MonotonicNow();
  TrialObserver collect(observer, clock_, start);
  SupervisorOptions supervise;
  supervise.interrupt_requested = options_.interrupt_requested;
  supervise.kill_grace = std::chrono::seconds(3);              // a trial keeps no checkpoint
  supervise.update_interval = std::chrono::milliseconds(200);  // times the first metric line
  DLJob done = JobSupervisor(store, collect, clock_, supervise).Run(job, *plan);
  m.wall_seconds = SecondsSince(clock_, start);
  const std::vector<TimedSample> samples =
      ReadMetrics(store.MetricsPath(job.metadata.name), collect.first_metric().value_or(0));
  store.Remove(job.metadata.name);

  if (cgroup) {
    m.peak_memory_bytes = cgroup->PeakBytes();
    m.out_of_memory = cgroup->OutOfMemoryKilled();
  }
  SummarizeMetrics(samples, m);
  if (done.status.phase == JobPhase::kSucceeded && m.error.empty()) {
    m.ok = true;
    return m;
  }
  m.ok = false;
  if (m.out_of_memory) {
    m.error = "killed by the memory cap";
  } else if (done.status.phase != JobPhase::kSucceeded) {
    const std::string last = collect.LastError();
    m.error = FailureOf(done);
    if (done.status.phase != JobPhase::kInterrupted && !last.empty()) m.error += ": " + last;
  }
  return m;
}

}  // namespace dljob::advise
