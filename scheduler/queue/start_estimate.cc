#include "scheduler/queue/start_estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "jobs/dljob_fields.h"

namespace dljob::scheduler {
namespace {

// One job of the replay.
struct Tracked {
  const EstimateJob* input = nullptr;
  std::optional<size_t> result;  // index into the estimates, for a job waiting in the input
  bool running = false;
  bool started_by_replay = false;  // its current run began in the replay
  std::optional<int64_t> end;      // while running; none: never ends
  // What its current run's length rests on, and its end with the chain of starts before it.
  EstimateBasis run_basis = EstimateBasis::kUnknown;
  EstimateBasis end_basis = EstimateBasis::kUnknown;
  std::optional<int64_t> remaining;  // while pending: how long it runs once started
  EstimateBasis remaining_basis = EstimateBasis::kUnknown;
  int64_t generation = 0;  // bumped on every start and suspension; stale ends are skipped
};

// Lookups by string_view without a temporary string.
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// (end time, name, generation), earliest first.
using PlannedEnd = std::tuple<int64_t, std::string_view, int64_t>;

std::string OthersSuffix(size_t others, const char* noun) {
  if (others == 0) return "";
  return " and " + std::to_string(others) + " other " + noun + (others == 1 ? "" : "s");
}

class EstimateReplay {
 public:
  EstimateReplay(const std::vector<EstimateJob>& jobs, int64_t now, const QueueOptions& options,
                 JobQueue& queue, StartEstimates& out)
      : now_(now), options_(options), queue_(queue), out_(out) {
    tracked_.reserve(jobs.size());
    for (const EstimateJob& j : jobs) {
      Tracked& t = tracked_.emplace(j.job.request.name, Tracked{}).first->second;
      t.input = &j;
      if (j.job.placement) {
        t.running = true;
        if (j.end.time) t.end = std::max(*j.end.time, now);
        t.end_basis = t.end ? j.end.basis : EstimateBasis::kUnknown;
        t.run_basis = t.end_basis;
        any_running_end_known_ = any_running_end_known_ || t.end.has_value();
        ++running_at_now_;
      } else {
        t.result = out_.jobs.size();
        out_.jobs.push_back({j.job.request.name, std::nullopt, EstimateBasis::kUnknown, ""});
        SetRunTime(t, j.expected_run, j.job.request.time_limit);
      }
    }
    unresolved_ = out_.jobs.size();
  }

  void Run(int64_t max_passes) {
    Decision d = queue_.Schedule(now_);
    out_.passes = 1;
    for (const WaitingJob& w : d.waiting) {
      if (w.cause == WaitCause::kNoQueue) {
        Resolve(w.job, "unknown: its queue does not exist or has no quota for its GPU model");
      } else if (w.cause == WaitCause::kNeverFits) {
        Resolve(w.job, "unknown: it can never fit these nodes");
      }
    }
    queue_.SetExplain(false);
    for (auto& [name, t] : tracked_) {
      if (t.running && t.end) ends_.emplace(*t.end, name, t.generation);
    }
    Apply(d, now_, {});
    while (unresolved_ > 0) {
      std::optional<int64_t> t = d.next_change;
      while (!ends_.empty() && Stale(ends_.top())) ends_.pop();
      if (!ends_.empty() && (!t || std::get<0>(ends_.top()) < *t)) t = std::get<0>(ends_.top());
      if (!t) break;
      if (out_.passes > max_passes) {
        out_.capped = true;
        break;
      }
      std::vector<const Tracked*> ended;
      while (!ends_.empty() && std::get<0>(ends_.top()) == *t) {
        const PlannedEnd e = ends_.top();
        ends_.pop();
        if (Stale(e)) continue;
        Tracked& j = Find(std::get<1>(e));
        j.running = false;
        ended.push_back(&j);
        Status s = queue_.Finish(std::get<1>(e), *t);
        (void)s;  // it runs: the queue started it, or it ran in the snapshot
      }
      head_before_ = d.blocked_head;
      d = queue_.Schedule(*t);
      ++out_.passes;
      Apply(d, *t, ended);
    }
    ResolveTheRest();
  }

 private:
  Tracked& Find(std::string_view name) { return tracked_.find(name)->second; }
  const Tracked& Find(std::string_view name) const { return tracked_.find(name)->second; }

  bool Stale(const PlannedEnd& e) const {
    const Tracked& j = Find(std::get<1>(e));
    return !j.running || j.generation != std::get<2>(e);
  }

  static void SetRunTime(Tracked& t, std::optional<int64_t> run, std::optional<int64_t> limit) {
    t.remaining = run;
    t.remaining_basis = run ? EstimateBasis::kProgress : EstimateBasis::kUnknown;
    if (limit && (!run || *limit < *run)) {
      t.remaining = *limit;
      t.remaining_basis = EstimateBasis::kTimeLimit;
    }
  }

  void Apply(const Decision& d, int64_t t, const std::vector<const Tracked*>& ended) {
    for (const PreemptAction& p : d.preempt) {
      Tracked& v = Find(p.job);
      v.running = false;
      ++v.generation;
      // It resumes with what its run had left, on the same basis; the time limit is per run.
      SetRunTime(v, v.end ? std::optional(std::max<int64_t>(0, *v.end - t)) : std::nullopt,
                 v.input->job.request.time_limit);
      if (v.remaining_basis == EstimateBasis::kProgress) v.remaining_basis = v.run_basis;
    }
    for (const StartAction& s : d.start) {
      Tracked& j = Find(s.job);
      const EstimateBasis cause = CauseBasis(t, ended);
      if (j.result && out_.jobs[*j.result].assumption.empty()) {
        StartEstimate& e = out_.jobs[*j.result];
        e.time = t;
        e.basis = cause;
        e.assumption = Assumption(s.job, t, ended, d);
        --unresolved_;
      }
      j.running = true;
      j.started_by_replay = true;
      ++j.generation;
      j.end = j.remaining ? std::optional(t + *j.remaining) : std::nullopt;
      j.run_basis = j.remaining_basis;
      j.end_basis = j.end ? Weaker(cause, j.remaining_basis) : EstimateBasis::kUnknown;
      if (j.end) ends_.emplace(*j.end, std::string_view(j.input->job.request.name), j.generation);
    }
  }

  // The job among `ended` an assumption names: one that ran in the snapshot before one the replay
  // started, then by name.
  static const Tracked* Named(const std::vector<const Tracked*>& ended) {
    auto key = [](const Tracked* j) {
      return std::make_tuple(j->started_by_replay, std::string_view(j->input->job.request.name));
    };
    return *std::min_element(ended.begin(), ended.end(),
                             [&](const Tracked* a, const Tracked* b) { return key(a) < key(b); });
  }

  EstimateBasis CauseBasis(int64_t t, const std::vector<const Tracked*>& ended) const {
    if (t == now_ && ended.empty()) return EstimateBasis::kNow;
    if (ended.empty()) return EstimateBasis::kProgress;  // a minimum run time ends: the plan's own
    return Named(ended)->end_basis;
  }

  std::string EndPhrase(int64_t t, const std::vector<const Tracked*>& ended) const {
    const Tracked& e = *Named(ended);
    std::string who = e.input->job.request.name;
    if (ended.size() > 1) who += " (with" + OthersSuffix(ended.size() - 1, "job").substr(4) + ")";
    const std::string in = t == now_ ? "now" : "in " + AboutDuration(t - now_);
    if (e.run_basis == EstimateBasis::kProgress) {
      if (t == now_) return "when " + who + " ends, which its progress says is due now";
      return "when " + who + " ends " + in + ", from its steps and images/sec" +
             (e.started_by_replay ? " once resumed" : "");
    }
    if (!e.started_by_replay) return "when " + who + " reaches its time limit " + in;
    return "when " + who + " ends " + in + ", if it runs to its time limit once started";
  }

  // Whether `job` comes after `head` in the order of a priority-FIFO queue.
  bool Behind(const JobRequest& job, const JobRequest& head) const {
    auto key = [&](const JobRequest& r) {
      return std::make_tuple(options_.priorities ? -r.priority : 0, r.submit_time,
                             std::string_view(r.name));
    };
    return key(head) < key(job);
  }

  std::string Assumption(const std::string& job, int64_t t,
                         const std::vector<const Tracked*>& ended, const Decision& d) const {
    std::string s;
    if (t == now_ && ended.empty()) {
      s = "now";
    } else if (ended.empty()) {
      s = "in " + AboutDuration(t - now_) + ", when running jobs may be preempted";
    } else {
      s = EndPhrase(t, ended);
    }
    std::vector<std::string_view> victims;
    for (const PreemptAction& p : d.preempt) {
      if (p.for_job == job) victims.push_back(p.job);
    }
    if (!victims.empty()) {
      s += ", by preempting " + std::string(victims[0]) + OthersSuffix(victims.size() - 1, "job");
    } else if (s == "now") {
      s = "now: it fits";
    }
    if (head_before_ && *head_before_ != job && options_.ordering == JobOrdering::kPriorityFifo &&
        options_.backfill != Backfill::kGreedy) {
      const Tracked& head = Find(*head_before_);
      const JobRequest& me = Find(job).input->job.request;
      if (head.running && Behind(me, head.input->job.request)) {
        const std::string& h = head.input->job.request.name;
        s = (options_.backfill == Backfill::kReservation ? "after the reservation of " + h
                                                         : "after " + h + " (strict order)") +
            ", " + s;
      }
    }
    return s;
  }

  void Resolve(const std::string& job, std::string why) {
    auto it = tracked_.find(job);
    if (it == tracked_.end() || !it->second.result) return;
    StartEstimate& e = out_.jobs[*it->second.result];
    if (!e.assumption.empty()) return;
    e.assumption = std::move(why);
    --unresolved_;
  }

  // Jobs the replay never started: it was capped, or what is left never ends.
  void ResolveTheRest() {
    std::vector<std::pair<bool, std::string_view>> endless;  // (started by the replay, name)
    for (const auto& [name, t] : tracked_) {
      if (t.running && !t.end) endless.emplace_back(t.started_by_replay, name);
    }
    std::sort(endless.begin(), endless.end());
    std::string why;
    if (out_.capped) {
      why = "unknown: further ahead than the estimate looks (" + std::to_string(out_.passes) +
            " scheduling passes)";
    } else if (endless.empty()) {
      why = "unknown: it does not start even once every job ahead of it has ended";
    } else if (running_at_now_ > 0 && !any_running_end_known_) {
      why = "unknown: nothing running reports progress or has a time limit";
    } else {
      why = "unknown: it waits for " + std::string(endless[0].second) +
            OthersSuffix(endless.size() - 1, "job") +
            (endless.size() == 1 ? ", which reports no progress and has no time limit"
                                 : ", which report no progress and have no time limit");
    }
    for (StartEstimate& e : out_.jobs) {
      if (e.assumption.empty()) e.assumption = why;
    }
    unresolved_ = 0;
  }

  const int64_t now_;
  const QueueOptions& options_;
  JobQueue& queue_;
  StartEstimates& out_;
  std::unordered_map<std::string, Tracked, NameHash, std::equal_to<>> tracked_;
  std::priority_queue<PlannedEnd, std::vector<PlannedEnd>, std::greater<>> ends_;
  std::optional<std::string> head_before_;  // the previous pass's blocked head
  size_t unresolved_ = 0;
  int64_t running_at_now_ = 0;
  bool any_running_end_known_ = false;
};

}  // namespace

std::string_view EstimateBasisName(EstimateBasis basis) {
  // The API's values (status.startEstimate.basis), in EstimateBasis' order.
  static_assert(std::size(kStartEstimateBases) == static_cast<size_t>(EstimateBasis::kUnknown) + 1);
  return kStartEstimateBases[static_cast<size_t>(basis)];
}

EstimateBasis Weaker(EstimateBasis a, EstimateBasis b) { return std::max(a, b); }

std::optional<int64_t> EndFromProgress(int64_t step, int64_t total_steps, double steps_per_second,
                                       int64_t reported_at) {
  if (step < 0 || total_steps < 0 || !std::isfinite(steps_per_second) || steps_per_second <= 0) {
    return std::nullopt;
  }
  if (step >= total_steps) return reported_at;
  const double left = static_cast<double>(total_steps - step) / steps_per_second;
  if (left > 1e12) return std::nullopt;  // no run lasts 30,000 years
  return reported_at + static_cast<int64_t>(std::ceil(left));
}

ExpectedEnd ExpectedEndOf(const JobRequest& job, int64_t start,
                          std::optional<int64_t> progress_end) {
  const std::optional<int64_t> limit_end =
      job.time_limit ? std::optional(start + *job.time_limit) : std::nullopt;
  if (progress_end && (!limit_end || *progress_end <= *limit_end)) {
    return {progress_end, EstimateBasis::kProgress};
  }
  if (limit_end) return {limit_end, EstimateBasis::kTimeLimit};
  return {std::nullopt, EstimateBasis::kUnknown};
}

std::string AboutDuration(int64_t seconds) {
  if (seconds < 60) return "under a minute";
  if (seconds < 3600) return "about " + std::to_string((seconds + 30) / 60) + " min";
  char buf[32];
  if (seconds < 10 * 3600) {
    const double halves = std::round(static_cast<double>(seconds) / 1800);
    std::snprintf(buf, sizeof buf, "about %g h", halves / 2);
  } else if (seconds < 48 * 3600) {
    std::snprintf(buf, sizeof buf, "about %lld h", static_cast<long long>((seconds + 1800) / 3600));
  } else {
    std::snprintf(buf, sizeof buf, "about %lld days",
                  static_cast<long long>((seconds + 43200) / 86400));
  }
  return buf;
}

Result<StartEstimates> EstimateStarts(const std::vector<QueueSpec>& queues,
                                      const std::vector<EstimateJob>& jobs, std::vector<Node> nodes,
                                      int64_t now, const PlacementPolicy& policy,
                                      const QueueOptions& options,
                                      const EstimateOptions& estimate) {
  QueueOptions explained = options;
  explained.explain = true;
  JobQueue queue(queues, policy, explained);
  queue.SetNodes(std::move(nodes));
  for (const EstimateJob& j : jobs) {
    const JobSnapshot& s = j.job;
    Status st = s.placement ? queue.AddRunning(s.request, *s.placement, s.start_time, s.history)
                            : queue.AddPending(s.request, s.history);
    if (!st.ok()) return st;
  }
  StartEstimates out;
  EstimateReplay replay(jobs, now, options, queue, out);
  replay.Run(estimate.max_passes);
  return out;
}

}  // namespace dljob::scheduler
