// (i) Start-time estimates: what one estimate of every waiting job costs (EstimateStarts,
// scheduler/queue/start_estimate.h), as a ratio against one plain scheduling pass over the same
// snapshot (ScheduleSnapshot with explanations, the pass the operator runs), measured in the same
// run, for 1,000 and 5,000 waiting jobs.
//
// The snapshot comes from the synthetic 20,000-job trace (tools/sim/trace_gen.h: 812 nodes × 8
// GPUs, three GPU models, four team queues with quotas): a greedy pass fills the cluster from the
// trace's first jobs, each started a random part of its duration ago and expected to end by its
// progress (start + duration, cut at its time limit); the next N jobs of the trace wait, and the
// estimate assumes each runs to its time limit. Reported per policy and N: the median wall time of
// --repeat runs of each, their ratio, the passes the replay ran, and how many estimates are
// unknown (capped or waiting on a job with no expected end).
//
//   estimate_bench [--waiting 1000,5000] [--policies dljob,fifo,las] [--repeat 5] [--seed 1]
//                  [--max-passes 20000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/machine.h"
#include "scheduler/placement_policy.h"
#include "scheduler/queue/job_queue.h"
#include "scheduler/queue/queue_policy.h"
#include "scheduler/queue/start_estimate.h"
#include "tools/sim/trace.h"
#include "tools/sim/trace_gen.h"

namespace dljob::bench {
namespace {

using scheduler::EstimateJob;
using scheduler::JobSnapshot;

constexpr int64_t kNow = 1'000'000;

struct Snapshot {
  std::vector<scheduler::Node> nodes;
  std::vector<EstimateJob> jobs;
  size_t running = 0;
};

// The cluster filled by a greedy pass over the trace's first jobs, then `waiting` more jobs.
Snapshot MakeSnapshot(const scheduler::sim::Trace& trace, size_t waiting,
                      const scheduler::PlacementPolicy& placement, uint64_t seed) {
  scheduler::QueueOptions greedy;
  greedy.backfill = scheduler::Backfill::kGreedy;
  greedy.preemption = false;
  greedy.explain = false;
  scheduler::JobQueue filler(scheduler::sim::QueuesFor(trace), placement, greedy);
  filler.SetNodes(trace.nodes);
  std::mt19937_64 rng(seed);
  Snapshot s;
  // Enough jobs to fill the cluster: the first half of the trace is far more than it holds.
  const size_t fill = trace.jobs.size() / 2;
  for (size_t i = 0; i < fill; ++i) {
    (void)filler.AddPending(scheduler::sim::RequestOf(trace.jobs[i]));
  }
  std::vector<bool> started(trace.jobs.size());
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < fill; ++i) index[trace.jobs[i].name] = i;
  for (const scheduler::StartAction& st : filler.Schedule(0).start) {
    const size_t i = index.at(st.job);
    const scheduler::sim::TraceJob& tj = trace.jobs[i];
    const scheduler::JobRequest r = scheduler::sim::RequestOf(tj);
    const int64_t ran = static_cast<int64_t>(rng() % static_cast<uint64_t>(tj.duration));
    const int64_t start = kNow - ran;
    s.jobs.push_back({JobSnapshot{r, {}, st.placement, start},
                      scheduler::ExpectedEndOf(r, start, start + tj.duration), std::nullopt});
    started[i] = true;
  }
  s.running = s.jobs.size();
  for (size_t i = 0; i < trace.jobs.size() && s.jobs.size() < s.running + waiting; ++i) {
    if (started[i]) continue;
    s.jobs.push_back(
        {JobSnapshot{scheduler::sim::RequestOf(trace.jobs[i]), {}, std::nullopt, 0}, {}, {}});
  }
  s.nodes = filler.nodes();
  return s;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int Main(int argc, char** argv) {
  std::vector<size_t> waiting = {1000, 5000};
  std::string policies = "dljob,fifo,las";
  int repeat = 5;
  uint64_t seed = 1;
  scheduler::EstimateOptions estimate;
  CLI::App app("estimate_bench: one start-time estimate of every waiting job vs one plain pass",
               "estimate_bench");
  app.add_option("--waiting", waiting, "waiting jobs, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--policies", policies)->capture_default_str();
  app.add_option("--repeat", repeat)->check(CLI::Range(1, 100))->capture_default_str();
  app.add_option("--seed", seed)->capture_default_str();
  app.add_option("--max-passes", estimate.max_passes)->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::printf("estimate_bench: %s\n", MachineLine(DLJOB_BUILD_TYPE).c_str());
  scheduler::sim::TraceShape shape;
  shape.seed = seed;
  const scheduler::sim::Trace trace = scheduler::sim::GenerateTrace(shape);
  auto placement = scheduler::MakePlacementPolicy("dljob");
  if (!placement.ok()) return 1;
  std::printf("trace: %zu nodes, %zu jobs (seed %llu); queues: %zu with quotas; max passes %lld\n",
              trace.nodes.size(), trace.jobs.size(), static_cast<unsigned long long>(seed),
              trace.queues.size(), static_cast<long long>(estimate.max_passes));
  std::printf("\n%-7s %7s %7s %12s %12s %8s %8s %8s %7s\n", "policy", "waiting", "running",
              "plain pass", "estimate", "ratio", "passes", "unknown", "capped");
  std::stringstream names(policies);
  for (std::string name; std::getline(names, name, ',');) {
    auto options = scheduler::QueueOptionsByName(name);
    if (!options.ok()) {
      std::fprintf(stderr, "estimate_bench: %s\n", options.status().message().c_str());
      return 2;
    }
    options->min_run_time = 300;
    for (size_t n : waiting) {
      const Snapshot s = MakeSnapshot(trace, n, **placement, seed);
      std::vector<JobSnapshot> plain;
      for (const EstimateJob& j : s.jobs) plain.push_back(j.job);
      std::vector<double> pass_ms, estimate_ms;
      scheduler::StartEstimates last;
      for (int r = 0; r < repeat; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        auto d = scheduler::ScheduleSnapshot(scheduler::sim::QueuesFor(trace), plain, s.nodes, kNow,
                                             **placement, *options);
        auto t1 = std::chrono::steady_clock::now();
        auto e = scheduler::EstimateStarts(scheduler::sim::QueuesFor(trace), s.jobs, s.nodes, kNow,
                                           **placement, *options, estimate);
        auto t2 = std::chrono::steady_clock::now();
        if (!d.ok() || !e.ok()) {
          std::fprintf(stderr, "estimate_bench: the snapshot was refused\n");
          return 1;
        }
        pass_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        estimate_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
        last = std::move(*e);
      }
      size_t unknown = 0;
      for (const auto& est : last.jobs) unknown += !est.time;
      const double p = Median(pass_ms), e = Median(estimate_ms);
      std::printf("%-7s %7zu %7zu %9.1f ms %9.1f ms %7.1fx %8lld %8zu %7s\n", name.c_str(),
                  s.jobs.size() - s.running, s.running, p, e, p > 0 ? e / p : 0.0,
                  static_cast<long long>(last.passes), unknown, last.capped ? "yes" : "no");
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace dljob::bench

int main(int argc, char** argv) { return dljob::bench::Main(argc, argv); }
