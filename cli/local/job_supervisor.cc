#include "cli/local/job_supervisor.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>

#include "base/time_format.h"
#include "jobs/conditions.h"
#include "jobs/log_lines.h"
#include "jobs/metric_line.h"

namespace dljob {
namespace {

constexpr size_t kMaxLineBytes = 1 << 20;  // a longer "line" is split, never buffered unbounded
constexpr size_t kErrorLinesKept = 3;

}  // namespace

struct JobSupervisor::Attempt {
  std::unique_ptr<LineAppender> log;
  std::unique_ptr<LineAppender> metrics;
  std::unique_ptr<ChildProcess> child;
  std::string pending[2];  // partial lines from stdout, stderr
  ProgressAggregator progress;
  WallTime started;  // for the progress deadline, on PolicyNow()'s clock
  std::optional<WallTime> last_metric;
  bool interrupted = false;
  std::optional<RunDecision> decision;  // the run policy stopped this attempt: what follows
  bool stopping = false;                // SIGTERM sent
  Clock::MonotonicTime stop_sent;
  bool killed = false;
  std::deque<std::string> last_errors;  // recent stderr lines, for the failure message
};

void JobSupervisor::Save(DLJob& job, bool force) {
  auto now = clock_.MonotonicNow();
  if (!force && now - last_save_ < options_.update_interval) return;
  if (force || dirty_) {
    Status s = store_.Save(job);
    if (!s.ok()) observer_.OnNotice("warning: cannot save the job record: " + s.message());
    dirty_ = false;
  }
  last_save_ = now;
  observer_.OnUpdate(job);  // also when nothing changed: the elapsed time and ETA keep moving
}

bool JobSupervisor::TakeMetric(DLJob& job, Attempt& a, const MpirunLine& line) {
  std::optional<MetricSample> m = MetricOf(line);
  if (!m) return false;
  std::string now = NowStamp();
  nlohmann::json record = {{"time", now}, {"rank", m->rank.value_or(0)}, {"metric", m->fields}};
  a.metrics->Append(record.dump());
  a.progress.Add(*m, now);
  a.last_metric = PolicyNow();
  job.status.throughput = a.progress.Current();
  dirty_ = true;
  return true;
}

void JobSupervisor::HandleLine(DLJob& job, Attempt& a, int fd_index, std::string_view raw) {
  MpirunLine line = ParseMpirunLine(raw);
  if (fd_index == 1) line.is_stderr = true;  // mpirun's own complaints arrive untagged on stderr
  Status s = a.log->Append(FormatLogLine(line.rank, line.text));
  if (!s.ok()) observer_.OnNotice("warning: " + s.message());
  // A metric line of another rank that landed inside this one (jobs/log_lines.h) still counts.
  for (const MpirunLine& piece : OtherRanksPieces(raw)) TakeMetric(job, a, piece);
  if (TakeMetric(job, a, line))
    return;  // metric lines go to the log and the status, not the terminal
  // Ranks' own error output explains a failure better than mpirun's banner about it.
  if (line.is_stderr && line.rank >= 0 && line.text.find_first_not_of(" -") != std::string::npos) {
    a.last_errors.emplace_back(FormatLogLine(line.rank, line.text));
    if (a.last_errors.size() > kErrorLinesKept) a.last_errors.pop_front();
  }
  observer_.OnOutput(line.rank, line.is_stderr, line.text);
}

std::string JobSupervisor::NowStamp() const { return FormatRfc3339(clock_.Now()); }

WallTime JobSupervisor::PolicyNow() const {
  return job_start_wall_ + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                               clock_.MonotonicNow() - job_start_);
}

RunObservation JobSupervisor::Observed(const DLJob& job, const Attempt& a,
                                       AttemptState state) const {
  RunObservation o;
  o.attempt = state;
  o.started = job_start_wall_;
  o.running_since = a.started;
  o.last_progress = a.last_metric;
  o.restarts = job.status.restarts.value_or(0);
  return o;
}

bool JobSupervisor::CheckStop(const DLJob& job, Attempt& a) const {
  if (options_.interrupt_requested() != 0) {
    a.interrupted = true;
    return true;
  }
  RunDecision d =
      DecideRun(job.spec.run_policy, Observed(job, a, AttemptState::kRunning), PolicyNow());
  if (d.action == RunAction::kNone) return false;
  a.decision = std::move(d);
  return true;
}

// The run policy's word on an attempt that ended by itself (wait_status is mpirun's).
RunDecision JobSupervisor::DecideEnded(const DLJob& job, const Attempt& a, int wait_status) const {
  bool ok = WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
  RunObservation seen = Observed(job, a, ok ? AttemptState::kSucceeded : AttemptState::kFailed);
  if (ok) {
    seen.reason = "Completed";
    seen.message = "all ranks exited 0";
  } else {
    seen.reason = "ProcessFailed";
    seen.message = "mpirun " + DescribeWaitStatus(wait_status);
    if (!a.last_errors.empty()) {
      // A line that says "error" explains more than a hint printed after it.
      auto said_error =
          std::find_if(a.last_errors.rbegin(), a.last_errors.rend(), [](const std::string& l) {
            return l.find("error") != std::string::npos || l.find("Error") != std::string::npos;
          });
      seen.message += "; last error: " +
                      (said_error != a.last_errors.rend() ? *said_error : a.last_errors.back());
    }
  }
  return DecideRun(job.spec.run_policy, seen, PolicyNow());
}

// Runs mpirun once; returns its wait status. Output is pumped until both pipes close.
int JobSupervisor::RunAttempt(DLJob& job, Attempt& a) {
  a.started = PolicyNow();
  a.last_metric.reset();
  while (a.child->stdout_fd() >= 0 || a.child->stderr_fd() >= 0) {
    pollfd fds[2] = {{a.child->stdout_fd(), POLLIN, 0}, {a.child->stderr_fd(), POLLIN, 0}};
    int r = poll(fds, 2, 200);
    if (r < 0 && errno != EINTR) break;
    for (int i = 0; i < 2 && r > 0; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EINTR))) {
        if (!a.pending[i].empty()) HandleLine(job, a, i, a.pending[i]);
        a.pending[i].clear();
        i == 0 ? a.child->CloseStdout() : a.child->CloseStderr();
        continue;
      }
      if (n <= 0) continue;
      a.pending[i].append(buf, static_cast<size_t>(n));
      size_t start = 0, nl;
      while ((nl = a.pending[i].find('\n', start)) != std::string::npos) {
        HandleLine(job, a, i, std::string_view(a.pending[i]).substr(start, nl - start));
        start = nl + 1;
      }
      a.pending[i].erase(0, start);
      if (a.pending[i].size() > kMaxLineBytes) {
        HandleLine(job, a, i, a.pending[i]);
        a.pending[i].clear();
      }
    }
    if (!a.stopping) {
      a.stopping = CheckStop(job, a);
      if (a.stopping) {
        // Straight to the ranks, the way the kubelet's SIGTERM reaches them in a pod: mpirun,
        // told itself, would SIGKILL them about two seconds later, too soon for a checkpoint.
        // Before any rank has started, mpirun is told (nothing to save yet).
        if (a.child->SignalChildren(SIGTERM) == 0) a.child->Signal(SIGTERM);
        a.stop_sent = clock_.MonotonicNow();
      }
    } else if (!a.killed && clock_.MonotonicNow() - a.stop_sent >= options_.kill_grace) {
      a.child->SignalGroup(SIGKILL);
      a.killed = true;
    }
    Save(job, false);
  }
  int status = a.child->Wait();
  a.child->SignalGroup(SIGKILL);  // no rank outlives its attempt
  return status;
}

DLJob JobSupervisor::Run(DLJob job, const LocalPlan& plan) {
  const std::string& name = job.metadata.name;
  job_start_ = clock_.MonotonicNow();
  job_start_wall_ = clock_.Now();
  if (Status s = store_.WriteSupervisor(name, SelfProcessId()); !s.ok()) {
    observer_.OnNotice("warning: " + s.message());
  }
  job.status.workers = WorkerCounts{1, 0, 0};
  job.status.restarts = job.status.restarts.value_or(0);
  job.status.placement = {{"localhost", plan.ranks}};
  for (const std::string& notice : plan.notices) observer_.OnNotice(notice);
  std::string where = std::to_string(plan.ranks) + " ranks on " +
                      (plan.device == "cpu" ? std::string("CPU") : "GPU") + " on this machine";

  Attempt a;
  auto log = store_.OpenLog(name);
  auto metrics = store_.OpenMetrics(name);
  if (!log.ok() || !metrics.ok()) {
    TransitionTo(job.status, JobPhase::kFailed, "StateNotWritable",
                 (log.ok() ? metrics.status() : log.status()).message(), NowStamp());
    Save(job, true);
    return job;
  }
  a.log = std::move(*log);
  a.metrics = std::move(*metrics);

  while (true) {
    Result<std::unique_ptr<ChildProcess>> child =
        ChildProcess::Spawn({plan.argv, plan.env, plan.working_dir});
    if (!child.ok()) {
      TransitionTo(job.status, JobPhase::kFailed, "LaunchFailed", child.status().message(),
                   NowStamp());
      break;
    }
    a.child = std::move(*child);
    a.log->Append(FormatLogLine(
        -1, "starting attempt " + std::to_string(*job.status.restarts + 1) + ": " + where));
    TransitionTo(job.status, JobPhase::kRunning, "MpirunStarted", where, NowStamp());
    job.status.workers->ready = 1;
    Save(job, true);

    a.interrupted = a.stopping = a.killed = false;
    a.decision.reset();
    a.progress = ProgressAggregator();
    a.last_errors.clear();
    int wait_status = RunAttempt(job, a);
    a.child.reset();
    job.status.workers->ready = 0;

    if (a.interrupted) {
      int sig = options_.interrupt_requested();
      TransitionTo(job.status, JobPhase::kInterrupted, "Interrupted",
                   std::string("stopped by ") + (sig ? strsignal(sig) : "request") +
                       "; logs are kept: dljob logs " + name,
                   NowStamp());
      break;
    }
    // Stopped by the run policy, its decision stands; otherwise the exit status is judged.
    RunDecision d = a.decision ? *a.decision : DecideEnded(job, a, wait_status);
    if (d.action == RunAction::kSucceed) {
      TransitionTo(job.status, JobPhase::kSucceeded, d.reason, d.message, NowStamp());
      break;
    }
    job.status.workers->failed += 1;
    job.status.restarts = d.restarts;
    if (d.action != RunAction::kRestart) {  // kFail, kFailAndStop: an ended attempt never waits
      TransitionTo(job.status, JobPhase::kFailed, d.reason, d.message + "; see: dljob logs " + name,
                   NowStamp());
      break;
    }
    TransitionTo(job.status, JobPhase::kRestarting, d.reason, d.message, NowStamp());
    observer_.OnNotice("attempt failed: " + d.message);
    Save(job, true);
  }
  a.log->Append(FormatLogLine(-1, std::string("job ") + PhaseName(job.status.phase)));
  Save(job, true);
  return job;
}

}  // namespace dljob
