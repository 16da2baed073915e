#include "scheduler/queue/job_queue.h"

#include <algorithm>
#include <chrono>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "base/human_format.h"
#include "scheduler/queue/job_queue_state.h"
#include "scheduler/queue/preemption.h"
#include "scheduler/queue/reservation.h"

namespace dljob::scheduler {

bool JobQueue::PendingKey::operator<(const PendingKey& o) const {
  return std::tie(neg_priority, rank, submit, *name) <
         std::tie(o.neg_priority, o.rank, o.submit, *o.name);
}

bool JobQueue::EndKey::operator<(const EndKey& o) const {
  return std::tie(end, *name) < std::tie(o.end, *o.name);
}

JobQueue::JobQueue(const std::vector<QueueSpec>& queues, const PlacementPolicy& policy,
                   QueueOptions options)
    : quota_(queues), policy_(policy), options_(std::move(options)) {}

JobQueue::~JobQueue() = default;

int64_t JobQueue::LasLevel(const std::vector<int64_t>& thresholds, int64_t gpu_seconds) {
  return std::upper_bound(thresholds.begin(), thresholds.end(), gpu_seconds) - thresholds.begin();
}

void JobQueue::SetNodes(std::vector<Node> nodes) {
  ledger_.Reset(std::move(nodes));
  scratch_ = ledger_.nodes();
  masked_ = ledger_.nodes();
  ++masked_version_;
  room_.Invalidate();
  masked_room_.Invalidate();
  free_since_.assign(ledger_.nodes().size(), std::nullopt);
  for (auto& [name, job] : jobs_) {
    job->fit_checked = false;
    job->never_fits.reset();
    job->product_id = ledger_.ProductId(job->product);
    job->nodes = ledger_.Indices(job->placement);
  }
}

Status JobQueue::Add(JobRequest req, JobHistory history, std::unique_ptr<Job>& out) {
  if (req.name.empty()) return Status::InvalidArgument("job: name is empty");
  if (jobs_.count(req.name)) return Status::AlreadyExists(req.name + ": already queued");
  if (req.gang.workers <= 0 || req.gang.per_worker.gpus < 0) {
    return Status::InvalidArgument(req.name + ": needs at least one worker and no negative GPUs");
  }
  if (req.elastic &&
      (req.elastic->min_workers < 1 || req.elastic->min_workers > req.elastic->max_workers ||
       req.elastic->max_workers != req.gang.workers)) {
    return Status::InvalidArgument(
        req.name + ": an elastic range needs 1 <= min_workers <= max_workers = the gang's " +
        std::to_string(req.gang.workers) + " workers, got " +
        std::to_string(req.elastic->min_workers) + " to " +
        std::to_string(req.elastic->max_workers));
  }
  out = std::make_unique<Job>();
  out->product = GangProduct(req.gang);
  out->product_id = ledger_.ProductId(out->product);
  out->max_workers = req.gang.workers;
  out->min_workers = req.elastic ? req.elastic->min_workers : req.gang.workers;
  out->gpus = GangGpus(req.gang);
  out->account = quota_.AccountFor(req.queue, out->product);
  out->req = std::move(req);
  out->history = history;
  return Status::Ok();
}

Status JobQueue::AddPending(JobRequest req, JobHistory history) {
  std::unique_ptr<Job> job;
  if (Status s = Add(std::move(req), history, job); !s.ok()) return s;
  Job& j = *job;
  jobs_.emplace(j.req.name, std::move(job));
  Enqueue(j);
  return Status::Ok();
}

Status JobQueue::AddRunning(JobRequest req, Placement placement, int64_t start_time,
                            JobHistory history) {
  const auto size = static_cast<int64_t>(placement.worker_nodes.size());
  if (req.elastic && req.elastic->min_workers <= size && size <= req.gang.workers) {
    // An elastic job runs at its placement's size (Add checks the range itself).
  } else if (size != std::max<int64_t>(0, req.gang.workers)) {
    return Status::InvalidArgument(req.name + ": the placement names " +
                                   std::to_string(placement.worker_nodes.size()) + " nodes for " +
                                   std::to_string(req.gang.workers) + " workers");
  }
  std::unique_ptr<Job> job;
  if (Status s = Add(std::move(req), history, job); !s.ok()) return s;
  Job& j = *job;
  jobs_.emplace(j.req.name, std::move(job));
  SetWorkers(j, size);
  j.running = true;
  j.start = start_time;
  j.size_since = start_time;
  j.placement = std::move(placement);
  j.nodes = ledger_.Indices(j.placement);
  running_.insert(&j);
  by_start_.emplace(j.start, &j);
  if (j.req.time_limit) bounded_.insert({j.start + *j.req.time_limit, &j.req.name, &j});
  if (j.account) quota_.Charge(*j.account, j.gpus);
  return Status::Ok();
}

Status JobQueue::Finish(std::string_view name, int64_t now) {
  auto it = jobs_.find(std::string(name));
  if (it == jobs_.end() || !it->second->running) {
    return Status::NotFound(std::string(name) + ": not running");
  }
  Job& j = *it->second;
  Stop(j, now);
  jobs_.erase(j.req.name);
  return Status::Ok();
}

Status JobQueue::Remove(std::string_view name) {
  auto it = jobs_.find(std::string(name));
  if (it == jobs_.end() || it->second->running) {
    return Status::NotFound(std::string(name) + ": not pending");
  }
  pending_.erase(it->second->key);
  jobs_.erase(it);
  return Status::Ok();
}

int64_t JobQueue::RankAt(const Job& job, int64_t now) const {
  const int64_t ran = job.running ? std::max<int64_t>(0, now - job.start) : 0;
  switch (options_.ordering) {
    case JobOrdering::kPriorityFifo:
      return 0;
    case JobOrdering::kLeastAttained:
      return LasLevel(options_.las_thresholds, job.history.attained_gpu_seconds +
                                                   (job.running ? RunGpuSeconds(job, now) : 0));
    case JobOrdering::kShortestRemaining:
      if (!job.req.duration) return kUnlimited;
      return std::max<int64_t>(0, *job.req.duration - job.history.attained_seconds - ran) *
             std::max<int64_t>(1, job.gpus);
  }
  return 0;
}

int64_t JobQueue::Priority(const Job& job) const {
  return options_.priorities ? job.req.priority : 0;
}

bool JobQueue::Worse(const Job& running, int64_t now, const Job& pending) const {
  if (Priority(running) != Priority(pending)) return Priority(running) < Priority(pending);
  if (options_.ordering == JobOrdering::kPriorityFifo) return false;
  return RankAt(running, now) > pending.key.rank;
}

void JobQueue::Enqueue(Job& job) {
  job.running = false;
  SetWorkers(job, job.min_workers);
  job.key = PendingKey{-Priority(job), RankAt(job, 0), job.req.submit_time, &job.req.name, &job};
  pending_.insert(job.key);
}

void JobQueue::Run(Job& job, Placement placement, int64_t start) {
  pending_.erase(job.key);
  job.running = true;
  job.start = start;
  job.size_since = start;
  job.run_gpu_seconds = 0;
  job.placement = std::move(placement);
  job.nodes = ledger_.Indices(job.placement);
  room_.Before(job.nodes);
  ledger_.Apply(job.req.gang, job.nodes, +1);
  room_.After(job.nodes);
  if (job.account) quota_.Charge(*job.account, job.gpus);
  running_.insert(&job);
  by_start_.emplace(start, &job);
  if (job.req.time_limit) bounded_.insert({start + *job.req.time_limit, &job.req.name, &job});
}

void JobQueue::Stop(Job& job, int64_t now) {
  room_.Before(job.nodes);
  ledger_.Apply(job.req.gang, job.nodes, -1);
  room_.After(job.nodes);
  Freed(job.nodes, now);
  if (job.account) quota_.Release(*job.account, job.gpus);
  running_.erase(&job);
  for (auto [it, end] = by_start_.equal_range(job.start); it != end; ++it) {
    if (it->second == &job) {
      by_start_.erase(it);
      break;
    }
  }
  if (job.req.time_limit) bounded_.erase({job.start + *job.req.time_limit, &job.req.name, &job});
  const int64_t ran = std::max<int64_t>(0, now - job.start);
  job.history.attained_seconds += ran;
  job.history.attained_gpu_seconds += RunGpuSeconds(job, now);
  job.running = false;
  job.placement = {};
  job.nodes.clear();
}

std::string JobQueue::Describe(const Job& j) {
  const std::string model = j.product.empty() ? "any model" : j.product;
  const int64_t w = j.req.gang.per_worker.gpus;
  std::string s = "needs " + std::to_string(j.gpus) + " GPUs (" + model;
  if (j.max_workers > j.min_workers) {  // pending: at its min
    s = "needs " + std::to_string(j.min_workers * w) + " to " + std::to_string(j.max_workers * w) +
        " GPUs (" + model + ", " + std::to_string(j.min_workers) + " to " +
        std::to_string(j.max_workers) + " workers × " + std::to_string(w);
  } else if (j.req.gang.workers > 1) {
    s += ", " + std::to_string(j.req.gang.workers) + " workers × " + std::to_string(w);
  }
  s += ") in queue " + j.req.queue;
  if (j.account) {
    const std::string quota = quota_.Describe(*j.account);
    if (!quota.empty()) s += "; " + quota;
  }
  return s + "; " + std::to_string(room_.FreeGpusOf(j.product_id)) + " free, largest node " +
         std::to_string(room_.LargestFreeOf(j.product_id));
}

void JobQueue::Wait(Pass& pass, const Job& job, WaitCause cause, const std::string& detail) {
  if (options_.explain) pass.reasons[&job] = {cause, detail};
}

std::optional<Placement> JobQueue::TryPlace(const Job& job, bool masked) {
  const int64_t w = job.req.gang.per_worker.gpus;
  if (room_.WorkerRoom(job.product_id, w) < job.req.gang.workers) return std::nullopt;
  if (masked && masked_room_.WorkerRoom(job.product_id, w) < job.req.gang.workers) {
    return std::nullopt;
  }
  Gang shape = job.req.gang;
  shape.job.clear();
  std::erase_if(refusals_, [&](const Refusal& r) {
    return r.nodes_version != ledger_.version() || r.masked_version != masked_version_;
  });
  for (const Refusal& r : refusals_) {
    if (r.masked == masked && r.shape == shape) return std::nullopt;
  }
  std::optional<Placement> p = policy_.TryPlace(job.req.gang, masked ? masked_ : ledger_.nodes());
  if (!p) refusals_.push_back({std::move(shape), masked, ledger_.version(), masked_version_});
  return p;
}

void JobQueue::Start(Job& job, Placement placement, bool masked, Pass& pass) {
  const std::vector<size_t> touched = ledger_.Indices(placement);
  if (pass.plan && pass.plan->ever_fits && masked) {
    for (size_t i : touched) {
      Resources& s = pass.plan->surplus[i];
      s.gpus -= job.req.gang.per_worker.gpus;
      if (s.cpu_milli < kUnboundedRoom) s.cpu_milli -= job.req.gang.per_worker.cpu_milli;
      if (s.memory_mib < kUnboundedRoom) s.memory_mib -= job.req.gang.per_worker.memory_mib;
      if (s.pods < kUnboundedRoom) s.pods -= std::max<int64_t>(1, job.req.gang.per_worker.pods);
    }
  }
  pass.decision.start.push_back({job.req.name, placement, pass.head != nullptr});
  Run(job, std::move(placement), pass.now);
  if (pass.plan && pass.plan->ever_fits) {
    masked_room_.Before(touched);
    MaskReserved(ledger_, pass.plan->surplus, masked_, touched);
    ++masked_version_;
    masked_room_.After(touched);
  }
}

// The running jobs `job` may suspend, cheapest first: lowest priority, furthest behind in order,
// most recently started, fewest GPUs, then name. Of its own queue, those after it in order; of
// other queues, those borrowing from the pool it is owed (its cohort's, for its product); and
// only those that hold a node it could use, or quota it lacks.
std::vector<JobQueue::Job*> JobQueue::PreemptionCandidates(const Job& job, bool quota_blocked,
                                                           int64_t now) const {
  const size_t account = *job.account;
  const bool owed = quota_.Used(account) + job.gpus <= quota_.Nominal(account);
  std::vector<Job*> victims;
  for (Job* v : running_) {
    if (now - v->start < options_.min_run_time || !v->account) continue;
    const bool same_pool = quota_.SamePool(*v->account, account);
    const bool same_queue = quota_.SameQueue(*v->account, account);
    const bool lower = same_queue && Worse(*v, now, job);
    const bool reclaim = !same_queue && same_pool && owed && quota_.Borrowing(*v->account);
    if (!lower && !reclaim) continue;
    bool helps = quota_blocked && same_pool;
    for (size_t i = 0; !helps && i < v->nodes.size(); ++i) {
      helps = ledger_.Eligible(v->nodes[i], job.product_id);
    }
    if (helps) victims.push_back(v);
  }
  auto cost = [&](const Job* v) {
    return std::make_tuple(Priority(*v), -RankAt(*v, now), -v->start, v->gpus,
                           std::string_view(v->req.name));
  };
  std::sort(victims.begin(), victims.end(),
            [&](const Job* a, const Job* b) { return cost(a) < cost(b); });
  return victims;
}

std::string JobQueue::PreemptWhy(const Job& victim, const Job& job, int64_t now) const {
  std::string why;
  if (victim.req.queue != job.req.queue) {
    why = "queue " + victim.req.queue + " borrows quota that queue " + job.req.queue + " is owed";
  } else if (Priority(victim) < Priority(job)) {
    why = "priority " + std::to_string(job.req.priority) + " > " +
          std::to_string(victim.req.priority);
  } else if (options_.ordering == JobOrdering::kLeastAttained) {
    why = "attained-service level " + std::to_string(RankAt(victim, now)) + " > " +
          std::to_string(job.key.rank);
  } else {
    why = "remaining GPU-seconds " + std::to_string(RankAt(victim, now)) + " > " +
          std::to_string(job.key.rank);
  }
  return job.req.name + " (" + why + ")";
}

void JobQueue::Suspend(Job& v, const Job& job, Pass& pass) {
  const std::string reason = "suspended for " + PreemptWhy(v, job, pass.now);
  // A shrink of it earlier in this pass is part of the suspension now.
  std::erase_if(pass.decision.resize, [&](const ResizeAction& r) { return r.job == v.req.name; });
  pass.decision.preempt.push_back({v.req.name, job.req.name, reason});
  Stop(v, pass.now);
  ++v.history.preemptions;
  Enqueue(v);
  pass.stopped.insert(&v);
  Wait(pass, v, WaitCause::kPreempted, reason);
}

// The candidates are parts of running gangs: first every elastic victim's workers above its min,
// one worker a part (ShrinkOrder), then each victim's rest (its whole gang when rigid), both in
// victim order. Taking a victim's rest suspends it whole; taking only workers shrinks it.
bool JobQueue::TryPreempt(Job& job, bool quota_blocked, Pass& pass) {
  const size_t account = *job.account;
  const std::pair<size_t, int> attempt{quota_.CohortOf(account), job.product_id};
  if (pass.failed_preemptions.count(attempt)) return false;
  const std::vector<Job*> victims = PreemptionCandidates(job, quota_blocked, pass.now);
  struct Part {
    size_t victim;                  // index into victims
    bool rest;                      // the victim's rest: taking it suspends the victim
    std::vector<size_t> positions;  // into the victim's placement
    std::vector<size_t> nodes;      // their ledger indices
  };
  std::vector<Part> parts;
  std::vector<Part> rests;
  for (size_t i = 0; i < victims.size(); ++i) {
    const Job& v = *victims[i];
    const std::vector<size_t> order = ShrinkOrder(v, job);
    const size_t removable =
        static_cast<size_t>(std::max<int64_t>(0, v.req.gang.workers - v.min_workers));
    Part rest{i, true, {}, {}};
    for (size_t k = 0; k < order.size(); ++k) {
      const size_t node = *ledger_.Index(v.placement.worker_nodes[order[k]]);
      if (k < removable) {
        parts.push_back({i, false, {order[k]}, {node}});
      } else {
        rest.positions.push_back(order[k]);
        rest.nodes.push_back(node);
      }
    }
    rests.push_back(std::move(rest));
  }
  for (Part& r : rests) parts.push_back(std::move(r));
  std::vector<PreemptionCandidate> candidates;
  for (const Part& part : parts) {
    const Job& v = *victims[part.victim];
    const int64_t gpus = static_cast<int64_t>(part.positions.size()) * v.req.gang.per_worker.gpus;
    candidates.push_back({RunningGang{&v.req.gang, &part.nodes, std::nullopt}, *v.account,
                          quota_.SamePool(*v.account, account) ? gpus : 0});
  }
  auto quota_fits = [&](const std::vector<FreedQuota>& freed) {
    return !quota_.Check(account, job.gpus, freed).has_value();
  };
  std::optional<PreemptionPlan> plan =
      candidates.empty()
          ? std::nullopt
          : PlanPreemption(job.req.gang, candidates, quota_fits, ledger_, scratch_, policy_);
  if (!plan) {
    pass.failed_preemptions.insert(attempt);
    return false;
  }
  std::vector<bool> suspend(victims.size(), false);
  std::vector<std::vector<size_t>> shrink(victims.size());
  for (size_t c : plan->victims) {
    const Part& part = parts[c];
    if (part.rest) {
      suspend[part.victim] = true;
    } else {
      shrink[part.victim].push_back(part.positions[0]);
    }
  }
  for (size_t i = 0; i < victims.size(); ++i) {
    if (suspend[i]) {
      Suspend(*victims[i], job, pass);
    } else if (!shrink[i].empty()) {
      Shrink(*victims[i], std::move(shrink[i]), job, pass);
    }
  }
  Start(job, std::move(plan->placement), false, pass);
  return true;
}

const std::optional<std::string>& JobQueue::NeverFits(Job& job) {
  if (!job.fit_checked) {
    job.fit_checked = true;
    ledger_.CopyUsedTo(scratch_);
    for (const Job* r : running_) ledger_.Apply(r->req.gang, r->nodes, -1, scratch_);
    Result<Placement> p = policy_.Place(job.req.gang, scratch_);
    if (!p.ok()) job.never_fits = p.status().message();
  }
  return job.never_fits;
}

void JobQueue::BecomeHead(Job& job, Pass& pass) {
  if (!NeverFits(job) && options_.backfill == Backfill::kReservation &&
      (options_.explain || room_.FreeGpusOf(kAnyProduct) > 0)) {
    auto it = bounded_.begin();
    auto next_bounded = [&]() -> std::optional<RunningGang> {
      if (it == bounded_.end()) return std::nullopt;
      const EndKey& e = *it++;
      return RunningGang{&e.job->req.gang, &e.job->nodes, e.end};
    };
    auto unbounded = [&] {
      std::vector<RunningGang> out;
      for (const Job* r : running_) {
        if (!r->req.time_limit) out.push_back({&r->req.gang, &r->nodes, std::nullopt});
      }
      return out;
    };
    ReservationPlan plan =
        PlanReservation(job.req.gang, ledger_, next_bounded, unbounded, scratch_, policy_);
    if (!plan.ever_fits) job.never_fits = plan.never_reason;
    if (plan.ever_fits) {
      MaskReserved(ledger_, plan.surplus, masked_);
      ++masked_version_;
      masked_room_.Invalidate();
      pass.decision.reservation = Reservation{job.req.name, plan.time, plan.placement};
      pass.plan = std::move(plan);
    }
  }
  if (job.never_fits) {
    Wait(pass, job, WaitCause::kNeverFits, "can never fit these nodes: " + *job.never_fits);
    return;
  }
  pass.head = &job;
  pass.decision.blocked_head = job.req.name;
  if (!pass.first_blocked) pass.first_blocked = &job;
  std::string detail = "first in line, waits for room";
  if (pass.plan) {
    detail = pass.plan->time
                 ? "first in line, reserved to start in " +
                       ClockDuration(std::chrono::seconds(*pass.plan->time - pass.now)) +
                       " (by the running jobs' time limits)"
                 : "first in line, waits for jobs without a time limit to end";
  }
  Wait(pass, job, WaitCause::kRoom, detail);
}

// Returns false when the scan may stop: nothing behind this job can start in this pass.
bool JobQueue::Consider(Job& job, Pass& pass) {
  if (pass.stopped.count(&job)) return true;
  if (!job.account) {
    Wait(pass, job, WaitCause::kNoQueue,
         quota_.HasQueue(job.req.queue)
             ? "queue " + job.req.queue + " has no quota for this GPU model"
             : "queue \"" + job.req.queue + "\" does not exist (queues: " + quota_.QueueNames() +
                   ")");
    return true;
  }
  const bool behind = pass.head != nullptr;
  const bool may_preempt =
      options_.preemption && (!behind || options_.backfill == Backfill::kGreedy);
  const bool elastic = job.max_workers > job.min_workers;
  if (behind && options_.backfill == Backfill::kNone) {
    if (!options_.explain) return false;
    Wait(pass, job, WaitCause::kBehind, "behind " + pass.head->req.name + " (strict order)");
    return true;
  }
  if (!options_.explain && !may_preempt && job.gpus > 0 && room_.FreeGpusOf(kAnyProduct) == 0) {
    return false;
  }

  std::optional<std::string> quota_problem = quota_.Check(*job.account, job.gpus);
  bool masked = false;
  if (!quota_problem) {
    if (behind && pass.plan) {
      // Jobs without a time limit count as never ending; with a time limit, a job ends before a
      // reservation that waits for such jobs.
      const bool ends_before =
          job.req.time_limit &&
          (!pass.plan->time || pass.now + *job.req.time_limit <= *pass.plan->time);
      masked = !ends_before;
    }
    if (std::optional<Placement> p = elastic ? PlaceLargest(job, masked) : TryPlace(job, masked)) {
      Start(job, std::move(*p), masked, pass);
      return true;
    }
  }
  if (may_preempt && TryPreempt(job, quota_problem.has_value(), pass)) return true;
  if (!pass.first_blocked) pass.first_blocked = &job;
  if (quota_problem) {
    Wait(pass, job, WaitCause::kQuota,
         quota_problem->empty() ? "waits for quota" : "waits for quota: " + *quota_problem);
  } else if (!behind) {
    BecomeHead(job, pass);
  } else if (masked && room_.WorkerRoom(job.product_id, job.req.gang.per_worker.gpus) >=
                           job.req.gang.workers) {
    Wait(pass, job, WaitCause::kBehind, "would delay " + pass.head->req.name + "'s reservation");
  } else {
    Wait(pass, job, WaitCause::kRoom, "waits for room");
  }
  return true;
}

std::optional<int64_t> JobQueue::NextChange(const Pass& pass) const {
  if (!options_.preemption || !pass.first_blocked) return std::nullopt;
  const Job& b = *pass.first_blocked;
  std::optional<int64_t> next;
  auto consider = [&](int64_t t) {
    if (t > pass.now && (!next || t < *next)) next = t;
  };
  // The first job, by start, whose minimum run time ends after now and which will then be
  // behind b (only jobs started in the last min_run_time seconds are still protected).
  for (auto it = by_start_.upper_bound(pass.now - options_.min_run_time); it != by_start_.end();
       ++it) {
    const Job& v = *it->second;
    const int64_t eligible_at = v.start + options_.min_run_time;
    if (Priority(v) < Priority(b) || Worse(v, eligible_at, b)) {
      consider(eligible_at);
      break;
    }
  }
  if (options_.ordering != JobOrdering::kLeastAttained) return next;
  // When a running job's attained service next crosses a level boundary that puts it behind b.
  for (const Job* v : running_) {
    if (Priority(*v) != Priority(b) || v->gpus <= 0) continue;
    const int64_t attained = v->history.attained_gpu_seconds + RunGpuSeconds(*v, pass.now);
    const int64_t level = LasLevel(options_.las_thresholds, attained);
    if (level >= static_cast<int64_t>(options_.las_thresholds.size())) continue;
    if (level + 1 <= b.key.rank) continue;  // still not behind b after crossing
    const int64_t need =
        options_.las_thresholds[level] - v->history.attained_gpu_seconds - v->run_gpu_seconds;
    consider(
        std::max(v->start + options_.min_run_time, v->size_since + (need + v->gpus - 1) / v->gpus));
  }
  return next;
}

Decision JobQueue::Schedule(int64_t now) {
  Pass pass;
  pass.now = now;
  for (auto it = pending_.begin(); it != pending_.end();) {
    Job& job = *it->job;
    ++it;  // `job` may leave the pending set; suspended jobs join it (iterators stay valid)
    if (!Consider(job, pass)) break;
  }
  Grow(pass);
  if (options_.explain) {
    for (const PendingKey& k : pending_) {
      auto r = pass.reasons.find(k.job);
      // The job's needs against the cluster and quota as the pass leaves them, then why it waits.
      const bool known = r != pass.reasons.end();
      pass.decision.waiting.push_back(
          {k.job->req.name, Describe(*k.job) + "; " + (known ? r->second.second : "not considered"),
           known ? r->second.first : WaitCause::kNotConsidered});
    }
  }
  pass.decision.next_change = NextChange(pass);
  if (pass.grow_at && (!pass.decision.next_change || *pass.grow_at < *pass.decision.next_change)) {
    pass.decision.next_change = pass.grow_at;
  }
  return std::move(pass.decision);
}

Result<Decision> ScheduleSnapshot(const std::vector<QueueSpec>& queues,
                                  const std::vector<JobSnapshot>& jobs, std::vector<Node> nodes,
                                  int64_t now, const PlacementPolicy& policy,
                                  const QueueOptions& options,
                                  std::map<std::string, int64_t>* idle_since) {
  JobQueue queue(queues, policy, options);
  queue.SetNodes(std::move(nodes));
  if (idle_since) queue.SetIdleSince(*idle_since);
  for (const JobSnapshot& j : jobs) {
    Status s = j.placement ? queue.AddRunning(j.request, *j.placement, j.start_time, j.history)
                           : queue.AddPending(j.request, j.history);
    if (!s.ok()) return s;
  }
  Decision decision = queue.Schedule(now);
  if (idle_since) *idle_since = queue.idle_since();
  return decision;
}

}  // namespace dljob::scheduler
