// Builders shared by the queue core's tests: GPU nodes, jobs, and a small event loop that runs a
// JobQueue over a finite trace (jobs run exactly their duration) until every job has ended.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "scheduler/placement_policy.h"
#include "scheduler/queue/job_queue.h"

namespace dljob::scheduler::queue_testing {

inline Node GpuNode(const std::string& name, int64_t gpus, const std::string& model = "A100") {
  Node n;
  n.name = name;
  n.allocatable = Resources{gpus, 96000, 1024 * 1024, 110};
  n.labels[kGpuProductLabel] = model;
  return n;
}

// A job of `gpus` GPUs as workers of `per_worker` (default: up to 8 a worker).
class J {
 public:
  J(const std::string& name, int64_t gpus, int64_t per_worker = 0) {
    r_.name = name;
    const int64_t w = per_worker > 0 ? per_worker : std::min<int64_t>(gpus, 8);
    r_.gang.job = name;
    r_.gang.workers = gpus / w;
    r_.gang.per_worker = Resources{w, 1000, 1024, 1};
  }
  J& Priority(int64_t p) { return r_.priority = p, *this; }
  J& At(int64_t t) { return r_.submit_time = t, *this; }
  J& Limit(int64_t s) { return r_.time_limit = s, *this; }
  J& Duration(int64_t s) { return r_.duration = s, *this; }
  J& Queue(const std::string& q) { return r_.queue = q, *this; }
  // Elastic from `min_workers` up to its workers.
  J& Elastic(int64_t min_workers) {
    return r_.elastic = ElasticRange{min_workers, r_.gang.workers}, *this;
  }
  J& Model(const std::string& m) {
    r_.gang.node_selector[kGpuProductLabel] = m;
    r_.gang.gpu_model = m;
    return *this;
  }
  operator JobRequest() const { return r_; }  // NOLINT(google-explicit-constructor)

 private:
  JobRequest r_;
};

inline PlacementPolicyPtr Policy(const std::string& name = "first-fit") {
  Result<PlacementPolicyPtr> p = MakePlacementPolicy(name);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::move(p).value();
}

// A job already running on `nodes` (one name a worker) since `start`.
struct Running {
  JobRequest job;
  std::vector<std::string> nodes;
  int64_t start = 0;
};

// A queue over `nodes` with `running` jobs already placed: their usage is added to the nodes, as
// the operator's nodes would count their pods.
inline std::unique_ptr<JobQueue> MakeQueue(const std::vector<QueueSpec>& queues,
                                           const PlacementPolicy& policy, QueueOptions options,
                                           std::vector<Node> nodes,
                                           const std::vector<Running>& running = {}) {
  auto q = std::make_unique<JobQueue>(queues, policy, std::move(options));
  for (const Running& r : running) {
    for (const std::string& name : r.nodes) {
      for (Node& n : nodes) {
        if (n.name != name) continue;
        n.used.gpus += r.job.gang.per_worker.gpus;
        n.used.cpu_milli += r.job.gang.per_worker.cpu_milli;
        n.used.memory_mib += r.job.gang.per_worker.memory_mib;
        n.used.pods += 1;
      }
    }
  }
  q->SetNodes(std::move(nodes));
  for (const Running& r : running) {
    Status s = q->AddRunning(r.job, Placement{r.nodes}, r.start);
    EXPECT_TRUE(s.ok()) << s.message();
  }
  return q;
}

inline std::vector<std::string> Names(const std::vector<StartAction>& starts) {
  std::vector<std::string> out;
  for (const StartAction& s : starts) out.push_back(s.job);
  return out;
}
inline std::vector<std::string> Names(const std::vector<PreemptAction>& preempts) {
  std::vector<std::string> out;
  for (const PreemptAction& p : preempts) out.push_back(p.job);
  return out;
}

struct RandomTrace {
  std::vector<Node> nodes;
  std::vector<QueueSpec> queues;
  std::vector<JobRequest> jobs;
};

// 2–6 nodes of 4 or 8 GPUs, three queues (unlimited, or random quotas), 10–40 jobs of 1–16 GPUs
// with random priorities and queues; three in four with a time limit that holds their run.
inline RandomTrace MakeTrace(uint32_t seed, bool quotas) {
  std::mt19937 rng(seed);
  RandomTrace t;
  const int n = 2 + rng() % 5;
  int64_t total = 0;
  int64_t largest = 0;
  for (int i = 0; i < n; ++i) {
    t.nodes.push_back(GpuNode("n" + std::to_string(i), (rng() % 2) ? 8 : 4));
    total += t.nodes.back().allocatable.gpus;
    largest = std::max(largest, t.nodes.back().allocatable.gpus);
  }
  for (const char* q : {"a", "b", "c"}) {
    QueueSpec spec{q, {{"", {kUnlimited, 0}}}};
    if (quotas) {
      spec.quotas[""] = {static_cast<int64_t>(rng() % (total / 2 + 1)),
                         static_cast<int64_t>(rng() % 9)};
    }
    t.queues.push_back(spec);
  }
  const int jobs = 10 + rng() % 30;
  int64_t at = 0;
  for (int i = 0; i < jobs; ++i) {
    at += rng() % 20;
    const int64_t sizes[] = {1, 2, 4, 8, 16};
    int64_t gpus = sizes[rng() % 5];
    while (gpus > total) gpus /= 2;
    // Workers no bigger than a node and gangs that fit the idle cluster.
    int64_t per_worker = gpus >= 8 ? (rng() % 2 ? 8 : 4) : gpus;
    while (per_worker > largest) per_worker /= 2;
    auto room = [&](int64_t w) {
      int64_t r = 0;
      for (const Node& node : t.nodes) r += node.allocatable.gpus / w;
      return r;
    };
    while (gpus / per_worker > room(per_worker)) gpus /= 2;
    per_worker = std::min(per_worker, gpus);
    J j("j" + std::to_string(i), gpus, per_worker);
    j.At(at).Duration(1 + rng() % 200).Priority(rng() % 3).Queue(std::string(1, "abc"[rng() % 3]));
    JobRequest r = j;
    if (rng() % 4) r.time_limit = *r.duration + rng() % 50;
    t.jobs.push_back(r);
  }
  return t;
}

struct Variant {
  const char* name;
  JobOrdering ordering;
  Backfill backfill;
  bool preemption;
};
inline const Variant kVariants[] = {
    {"fifo", JobOrdering::kPriorityFifo, Backfill::kNone, false},
    {"dljob", JobOrdering::kPriorityFifo, Backfill::kReservation, true},
    {"greedy", JobOrdering::kPriorityFifo, Backfill::kGreedy, false},
    {"las", JobOrdering::kLeastAttained, Backfill::kGreedy, true},
    {"sjf", JobOrdering::kShortestRemaining, Backfill::kGreedy, true},
};

inline QueueOptions OptionsOf(const Variant& v, bool explain) {
  QueueOptions o;
  o.ordering = v.ordering;
  o.backfill = v.backfill;
  o.preemption = v.preemption;
  o.min_run_time = 15;
  o.las_thresholds = {50, 400};
  o.explain = explain;
  return o;
}

// What happened to one job in a replay.
struct Replayed {
  std::optional<int64_t> first_start;
  std::optional<int64_t> end;
  int64_t suspensions = 0;
};

// Where a replay starts when the queue already holds jobs: the first pass at `now`; the jobs the
// queue runs end at their `running_ends` (none: never; a suspended one resumes with what it had
// left); the jobs it holds pending run `pending_runs` seconds once started.
struct ReplayStart {
  std::optional<int64_t> now;
  std::map<std::string, std::optional<int64_t>> running_ends;
  std::map<std::string, int64_t> pending_runs;
};

// Runs `jobs` (each with a duration; it runs exactly that long in total, resuming where it was
// suspended) through `queue` from their submit times until no event is left, calling
// invariant(queue, decision, now, running) after every pass (`running`: the jobs running before
// the pass, after the finishes at `now`). Returns each job's record.
template <typename Invariant>
std::map<std::string, Replayed> Replay(JobQueue& queue, std::vector<JobRequest> jobs,
                                       Invariant invariant, const ReplayStart& from = {}) {
  std::sort(jobs.begin(), jobs.end(), [](const JobRequest& a, const JobRequest& b) {
    return std::tie(a.submit_time, a.name) < std::tie(b.submit_time, b.name);
  });
  std::map<std::string, Replayed> out;
  std::map<std::string, int64_t> remaining, run_end, started_at;
  std::set<std::string> running;
  using Event = std::tuple<int64_t, std::string>;  // end, job
  std::priority_queue<Event, std::vector<Event>, std::greater<>> ends;
  size_t next = 0;
  std::optional<int64_t> wake = from.now;
  for (const JobRequest& j : jobs) remaining[j.name] = j.duration.value_or(1);
  for (const auto& [name, run] : from.pending_runs) remaining[name] = run;
  for (const auto& [name, end] : from.running_ends) {
    running.insert(name);
    started_at[name] = *from.now;
    remaining[name] = end ? *end - *from.now : int64_t{1} << 50;
    if (!end) continue;
    run_end[name] = *end;
    ends.emplace(*end, name);
  }
  for (int guard = 0; guard < 1000000; ++guard) {
    while (!ends.empty() && !run_end.count(std::get<1>(ends.top()))) ends.pop();
    std::optional<int64_t> t;
    if (next < jobs.size()) t = jobs[next].submit_time;
    if (!ends.empty() && (!t || std::get<0>(ends.top()) < *t)) t = std::get<0>(ends.top());
    if (wake && (!t || *wake < *t)) t = wake;
    if (!t) break;
    while (!ends.empty() && std::get<0>(ends.top()) == *t) {
      const std::string name = std::get<1>(ends.top());
      ends.pop();
      if (!run_end.count(name) || run_end[name] != *t) continue;
      run_end.erase(name);
      out[name].end = *t;
      running.erase(name);
      EXPECT_TRUE(queue.Finish(name, *t).ok());
    }
    while (next < jobs.size() && jobs[next].submit_time == *t) {
      EXPECT_TRUE(queue.AddPending(jobs[next]).ok());
      ++next;
    }
    Decision d = queue.Schedule(*t);
    invariant(queue, d, *t, running);
    for (const PreemptAction& p : d.preempt) {
      running.erase(p.job);
      remaining[p.job] -= *t - started_at[p.job];
      run_end.erase(p.job);
      ++out[p.job].suspensions;
    }
    for (const StartAction& s : d.start) {
      if (!out[s.job].first_start) out[s.job].first_start = *t;
      running.insert(s.job);
      started_at[s.job] = *t;
      run_end[s.job] = *t + remaining[s.job];
      ends.emplace(*t + remaining[s.job], s.job);
    }
    wake = d.next_change;
  }
  return out;
}

}  // namespace dljob::scheduler::queue_testing
