#include "tools/sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>

#include "base/random.h"
#include "scheduler/placement_policy.h"
#include "scheduler/queue/job_queue.h"
#include "scheduler/queue/node_ledger.h"
#include "scheduler/queue/start_estimate.h"

namespace dljob::scheduler::sim {
namespace {

// A job's replay state beside its outcome.
struct JobRun {
  int64_t remaining = 0;   // GPU-seconds of work still needed (duration × num_gpu at first)
  int64_t gpus = 0;        // of the current run, at its current size
  int64_t run_start = 0;   // of the current run (its time limit counts from here)
  int64_t start = 0;       // of the current stretch: the run's start or its last resize
  int64_t overhead = 0;    // restoring time at the start of the current stretch
  int64_t generation = 0;  // bumped on every start and suspension; stale end events ignored
  bool running = false;
  // What a start-time estimate is told (SimPolicy::estimates): where and until when the current
  // run goes, and the service the queue counts.
  Placement placement;
  int64_t end = 0;
  JobHistory history;
};

// An end of a run: (time, trace index, generation), earliest first.
using EndEvent = std::tuple<int64_t, size_t, int64_t>;

class Replay {
 public:
  Replay(const Trace& trace, const SimPolicy& policy, const PlacementPolicy& placement,
         SimResult& result)
      : trace_(trace),
        queues_(QueuesFor(trace)),
        queue_(queues_, placement, policy.queue),
        placement_(placement),
        policy_(policy),
        result_(result),
        runs_(trace.jobs.size()),
        overhead_(policy.preemption_overhead) {
    queue_.SetNodes(trace.nodes);
    for (size_t i = 0; i < trace.jobs.size(); ++i) index_.emplace(trace.jobs[i].name, i);
    if (policy.estimates) result_.estimates.resize(trace.jobs.size());
    for (const Node& n : trace.nodes) {
      result_.total_gpus += n.allocatable.gpus;
      auto it = n.labels.find(kGpuProductLabel);
      const std::string model = it == n.labels.end() ? "" : it->second;
      node_models_.push_back(models_.emplace(model, models_.size()).first->second);
    }
    result_.jobs.resize(trace.jobs.size());
    result_.allocation.push_back({0, 0});
  }

  Status Run(const SimProgress& progress) {
    size_t next = 0;
    std::optional<int64_t> wake;
    std::optional<int64_t> prev;  // the previous pass's time
    while (true) {
      std::optional<int64_t> t;
      if (next < trace_.jobs.size()) t = trace_.jobs[next].submit_time;
      if (!ends_.empty() && (!t || std::get<0>(ends_.top()) < *t)) t = std::get<0>(ends_.top());
      if (wake && (!t || *wake < *t)) t = wake;
      if (!t) break;
      if (prev) Account(*prev, *t);
      while (!ends_.empty() && std::get<0>(ends_.top()) == *t) {
        auto [time, i, generation] = ends_.top();
        ends_.pop();
        if (runs_[i].running && runs_[i].generation == generation) End(i, time);
      }
      const size_t arrived = next;
      while (next < trace_.jobs.size() && trace_.jobs[next].submit_time == *t) {
        if (Status s = queue_.AddPending(Request(next)); !s.ok()) return s;
        live_.insert(next);
        ++next;
      }
      Pass(*t);
      if (policy_.estimates) {
        if (Status s = MaybeEstimate(*t, arrived, next); !s.ok()) return s;
      }
      prev = t;
      wake = next_change_;
      if ((++result_.passes & 255) == 0 && progress) progress(ended_, trace_.jobs.size(), *t);
    }
    if (progress) progress(ended_, trace_.jobs.size(), prev.value_or(0));
    return Status::Ok();
  }

 private:
  // Closes the current stretch of job i's run at `now`: its time held and work done.
  int64_t CloseStretch(size_t i, int64_t now) {
    JobRun& run = runs_[i];
    const int64_t held = now - run.start;
    result_.jobs[i].held += held;
    const int64_t worked = std::max<int64_t>(0, held - run.overhead) * run.gpus;
    const bool short_of_work = worked < run.remaining;
    run.remaining -= std::min(run.remaining, worked);
    return short_of_work ? held : -1;
  }

  // Schedules the end of job i's current stretch, starting `now` after `overhead`.
  void ScheduleEnd(size_t i, int64_t now, int64_t overhead) {
    JobRun& run = runs_[i];
    const TraceJob& job = trace_.jobs[i];
    run.overhead = overhead;
    run.start = now;
    ++run.generation;
    const int64_t gpus = std::max<int64_t>(1, run.gpus);
    int64_t end = now + overhead + (run.remaining + gpus - 1) / gpus;
    if (job.time_limit) end = std::min(end, run.run_start + *job.time_limit);
    run.end = end;
    ends_.emplace(end, i, run.generation);
  }

  void End(size_t i, int64_t now) {
    JobRun& run = runs_[i];
    JobOutcome& out = result_.jobs[i];
    out.deadline_exceeded = CloseStretch(i, now) >= 0;
    Record(now, i, out.deadline_exceeded ? SimEventKind::kDeadline : SimEventKind::kEnd, 0);
    run.remaining = 0;
    run.running = false;
    out.finish = now;
    allocated_ -= run.gpus;
    ++ended_;
    live_.erase(i);
    Status s = queue_.Finish(trace_.jobs[i].name, now);
    (void)s;  // it is running: the queue started it
  }

  void Pass(int64_t now) {
    Decision d = queue_.Schedule(now);
    for (const PreemptAction& p : d.preempt) {
      const size_t i = index_.at(p.job);
      JobRun& run = runs_[i];
      CloseStretch(i, now);
      const int64_t held = now - run.run_start;
      run.running = false;
      ++run.generation;
      run.history.attained_seconds += held;  // as the queue counts it (JobQueue::Stop)
      run.history.attained_gpu_seconds += held * run.gpus;
      ++run.history.preemptions;
      ++result_.jobs[i].preemptions;
      ++result_.preemptions;
      allocated_ -= run.gpus;
      Record(now, i, SimEventKind::kPreempt, 0, p.for_job);
    }
    // Shrinks come before the starts that need their GPUs, grows after; the allocation and the
    // work left are the same in either order.
    for (const ResizeAction& r : d.resize) {
      const size_t i = index_.at(r.job);
      JobRun& run = runs_[i];
      CloseStretch(i, now);
      const int64_t gpus = r.to_workers * trace_.jobs[i].gpus_per_worker;
      allocated_ += gpus - run.gpus;
      run.gpus = gpus;
      run.placement = r.placement;
      ScheduleEnd(i, now, policy_.resize_overhead);
      ++result_.jobs[i].resizes;
      ++result_.resizes;
      Record(now, i, r.to_workers < r.from_workers ? SimEventKind::kShrink : SimEventKind::kGrow,
             gpus, r.for_job);
    }
    for (const StartAction& s : d.start) {
      const size_t i = index_.at(s.job);
      const TraceJob& job = trace_.jobs[i];
      JobRun& run = runs_[i];
      JobOutcome& out = result_.jobs[i];
      if (!out.first_start) {
        out.first_start = now;
        run.remaining = job.duration * job.num_gpu;
      }
      run.gpus = static_cast<int64_t>(s.placement.worker_nodes.size()) * job.gpus_per_worker;
      run.run_start = now;
      run.running = true;
      run.placement = s.placement;
      ScheduleEnd(i, now, out.preemptions > 0 ? overhead_ : 0);
      allocated_ += run.gpus;
      Record(now, i, SimEventKind::kStart, run.gpus);
    }
    next_change_ = d.next_change;
    head_.reset();
    if (d.blocked_head) head_ = index_.at(*d.blocked_head);
    if (result_.allocation.back().gpus != allocated_) {
      if (result_.allocation.back().time == now) {
        result_.allocation.back().gpus = allocated_;
      } else {
        result_.allocation.push_back({now, allocated_});
      }
    }
  }

  void Record(int64_t now, size_t i, SimEventKind kind, int64_t gpus, std::string for_job = {}) {
    if (policy_.record_events) result_.events.push_back({now, i, kind, gpus, std::move(for_job)});
  }

  // The interval [from, to) after a pass: allocation and fragmentation as that pass left them.
  void Account(int64_t from, int64_t to) {
    const double dt = static_cast<double>(to - from);
    if (queue_.pending_count() + queue_.running_count() > 0) {
      result_.busy_seconds += dt;
      result_.allocated_gpu_seconds += dt * static_cast<double>(allocated_);
    }
    if (queue_.pending_count() > 0) {
      result_.queued_seconds += dt;
      result_.queued_allocated_gpu_seconds += dt * static_cast<double>(allocated_);
    }
    if (!head_) return;
    const TraceJob& head = trace_.jobs[*head_];
    int model = -1;  // any
    if (!head.gpu_model.empty()) {
      auto it = models_.find(head.gpu_model);
      if (it == models_.end()) return;
      model = static_cast<int>(it->second);
    }
    int64_t free = 0, stranded = 0;
    const std::vector<Node>& nodes = queue_.nodes();
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (!nodes[i].schedulable || (model >= 0 && node_models_[i] != size_t(model))) continue;
      const int64_t f = FreeGpus(nodes[i]);
      free += f;
      if (f < head.gpus_per_worker) stranded += f;
    }
    if (free == 0) return;
    result_.free_gpu_seconds_while_blocked += dt;
    result_.fragmented_gpu_seconds += dt * static_cast<double>(stranded) / free;
  }

  // The queue's view of trace job i; a rigid replay drops elastic ranges.
  JobRequest Request(size_t i) const {
    JobRequest r = RequestOf(trace_.jobs[i]);
    if (policy_.rigid) r.elastic.reset();
    return r;
  }

  bool Scored(size_t i) const { return i % static_cast<size_t>(policy_.estimates->sample) == 0; }

  // After the pass at `now`: an estimate when a scored job submitted at `now` (trace indices
  // [arrived, next)) waits, or when the last estimate is `every` seconds old and jobs wait.
  Status MaybeEstimate(int64_t now, size_t arrived, size_t next) {
    if (queue_.pending_count() == 0) return Status::Ok();
    bool due = now >= next_estimate_;
    for (size_t i = arrived; !due && i < next; ++i) due = Scored(i) && !runs_[i].running;
    if (!due) return Status::Ok();
    next_estimate_ = now + policy_.estimates->every;
    return Estimate(now);
  }

  // `seconds` as a progress report would give them: exact, or off by this run's factor.
  int64_t Reported(int64_t seconds, size_t i, int64_t generation) const {
    const EstimateScoring& e = *policy_.estimates;
    if (e.noise <= 0) return seconds;
    const double u = static_cast<double>(MixSeed(e.seed, i, generation) >> 11) * 0x1.0p-53;
    return std::llround(static_cast<double>(seconds) * (1 + e.noise * (2 * u - 1)));
  }

  Status Estimate(int64_t now) {
    // Measurement only: the share of the replay's wall time spent estimating.
    const auto started = std::chrono::steady_clock::now();
    std::vector<EstimateJob> jobs;
    std::vector<size_t> waiting;  // the trace index of each waiting job, in `jobs`' order
    jobs.reserve(live_.size());
    for (size_t i : live_) {
      const JobRun& run = runs_[i];
      JobRequest req = Request(i);
      if (run.running) {
        const int64_t end = now + Reported(run.end - now, i, run.generation);
        const ExpectedEnd expected = ExpectedEndOf(req, run.run_start, end);
        jobs.push_back({{std::move(req), run.history, run.placement, run.run_start}, expected, {}});
        continue;
      }
      std::optional<int64_t> next_run;  // a suspended job's; one that never ran: its time limit
      if (result_.jobs[i].first_start) {
        const int64_t at_max = trace_.jobs[i].num_gpu;  // a waiting job asks for up to its max
        next_run =
            Reported(overhead_ + (run.remaining + at_max - 1) / at_max, i, run.generation + 1);
      }
      jobs.push_back({{std::move(req), run.history, std::nullopt, 0}, {}, next_run});
      waiting.push_back(i);
    }
    Result<StartEstimates> r = EstimateStarts(queues_, jobs, queue_.nodes(), now, placement_,
                                              policy_.queue, policy_.estimates->options);
    if (!r.ok()) return r.status();
    ++result_.estimate_runs;
    result_.estimate_capped += r->capped;
    for (size_t k = 0; k < waiting.size() && k < r->jobs.size(); ++k) {
      const size_t i = waiting[k];
      // Scored against its first start only.
      if (!Scored(i) || result_.jobs[i].first_start) continue;
      std::vector<EstimateRecord>& records = result_.estimates[i];
      const StartEstimate& e = r->jobs[k];
      if (!records.empty() && records.back().time == e.time) continue;
      records.push_back({now, e.time, e.basis});
    }
    result_.estimate_wall_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return Status::Ok();
  }

  const Trace& trace_;
  const std::vector<QueueSpec> queues_;
  JobQueue queue_;
  const PlacementPolicy& placement_;
  const SimPolicy& policy_;
  SimResult& result_;
  std::vector<JobRun> runs_;
  std::unordered_map<std::string, size_t> index_;
  std::map<std::string, size_t> models_;  // GPU model → id
  std::vector<size_t> node_models_;       // each node's model id
  std::priority_queue<EndEvent, std::vector<EndEvent>, std::greater<>> ends_;
  std::optional<int64_t> next_change_;
  std::optional<size_t> head_;
  const int64_t overhead_;
  int64_t allocated_ = 0;
  size_t ended_ = 0;
  std::set<size_t> live_;  // submitted and not ended, by trace index
  int64_t next_estimate_ = 0;
};

}  // namespace

Result<SimResult> Simulate(const Trace& trace, const SimPolicy& policy,
                           const SimProgress& progress) {
  Result<PlacementPolicyPtr> placement = MakePlacementPolicy(policy.placement);
  if (!placement.ok()) return placement.status();
  // Measurement only: how long the replay took on this machine (simulated time is the trace's).
  const auto started = std::chrono::steady_clock::now();
  SimResult result;
  result.policy = policy.name;
  Replay replay(trace, policy, **placement, result);
  if (Status s = replay.Run(progress); !s.ok()) return s;
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace dljob::scheduler::sim
