// (h) Scheduling policies on a 20,000-job trace: dljob-sim's engine (tools/sim) over
// the synthetic Philly/Helios-like trace (trace_gen.h) on 812 nodes × 8 GPUs, every policy in
// the same run, side by side.
//
// Reported per policy: average and p95 job completion time and wait, GPU allocation (overall and
// while jobs queued), fragmentation, preemptions and the wall time of its replay; the JCT and
// wait columns also as ratios against fifo measured in the same run, and the las/sjf ratio.
// Targets (docs/benchmarks/README.md): dljob's average JCT below fifo's (ratio
// < 1.00), las within 1.2× of the sjf oracle, each policy's replay under a minute.
//
// The trace's four team queues (a nominal quarter of the GPUs each, borrowing up to all) are in
// force unless --no-quotas (then one unlimited queue per team, as dljob-sim without --queues).
//
//   sim_bench [--jobs-count 20000] [--gpus 6500] [--seed 1] [--load 1.5] [--no-quotas]
//             [--policies fifo,spread,best-fit,dljob,las,sjf]
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/machine.h"
#include "tools/sim/metrics.h"
#include "tools/sim/report.h"
#include "tools/sim/simulator.h"
#include "tools/sim/trace_gen.h"

namespace dljob::bench {
namespace {

using scheduler::sim::HumanSeconds;
using scheduler::sim::Summary;

std::string Ratio(double a, double b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f×", b > 0 ? a / b : 0.0);
  return buf;
}

std::string Pct(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * f);
  return buf;
}

int Main(int argc, char** argv) {
  scheduler::sim::TraceShape shape;
  std::string policies = "fifo,spread,best-fit,dljob,las,sjf";
  scheduler::sim::SimOptions options;
  CLI::App app("sim_bench: every scheduling policy on one synthetic trace, ratios against fifo",
               "sim_bench");
  app.add_option("--jobs-count", shape.jobs)->capture_default_str();
  app.add_option("--gpus", shape.gpus)->capture_default_str();
  app.add_option("--seed", shape.seed)->capture_default_str();
  app.add_option("--load", shape.load)->capture_default_str();
  app.add_option("--policies", policies)->capture_default_str();
  app.add_option("--min-run-time", options.min_run_time)->capture_default_str();
  app.add_option("--preemption-overhead", options.preemption_overhead)->capture_default_str();
  bool no_quotas = false;
  app.add_flag("--no-quotas", no_quotas, "every team queue unlimited");
  CLI11_PARSE(app, argc, argv);

  std::printf("sim_bench: %s\n", MachineLine(DLJOB_BUILD_TYPE).c_str());
  const auto t0 = std::chrono::steady_clock::now();
  scheduler::sim::Trace trace = scheduler::sim::GenerateTrace(shape);
  if (no_quotas) trace.queues.clear();
  int64_t gpus = 0;
  for (const auto& n : trace.nodes) gpus += n.allocatable.gpus;
  std::printf(
      "trace: %zu jobs (seed %llu, load %.2f) on %zu nodes, %lld GPUs, generated in %.2fs; "
      "min run time %llds, preemption overhead %llds; %s\n",
      trace.jobs.size(), static_cast<unsigned long long>(shape.seed), shape.load,
      trace.nodes.size(), static_cast<long long>(gpus),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
      static_cast<long long>(options.min_run_time),
      static_cast<long long>(options.preemption_overhead),
      no_quotas ? "unlimited queues" : "4 team queues with quotas and borrowing");

  std::vector<Summary> rows;
  std::stringstream names(policies);
  for (std::string name; std::getline(names, name, ',');) {
    auto policy = scheduler::sim::SimPolicyByName(name, options);
    if (!policy.ok()) {
      std::fprintf(stderr, "sim_bench: %s\n", policy.status().message().c_str());
      return 2;
    }
    auto result = scheduler::sim::Simulate(trace, *policy);
    if (!result.ok()) {
      std::fprintf(stderr, "sim_bench: %s: %s\n", name.c_str(), result.status().message().c_str());
      return 1;
    }
    rows.push_back(scheduler::sim::Summarize(trace, *result));
    std::printf("  replayed %s in %.1fs (%lld passes)\n", name.c_str(), result->wall_seconds,
                static_cast<long long>(result->passes));
    std::fflush(stdout);
  }

  const Summary* fifo = nullptr;
  const Summary* las = nullptr;
  const Summary* sjf = nullptr;
  const Summary* dljob = nullptr;
  for (const Summary& s : rows) {
    if (s.policy == "fifo") fifo = &s;
    if (s.policy == "las") las = &s;
    if (s.policy == "sjf") sjf = &s;
    if (s.policy == "dljob") dljob = &s;
  }
  std::printf("\n%-9s %8s %7s %8s %7s %8s %7s %8s %7s %7s %7s %6s %7s %6s\n", "policy", "avg JCT",
              "×fifo", "p95 JCT", "×fifo", "avg wait", "×fifo", "p95 wait", "×fifo", "alloc",
              "queued", "frag", "preempt", "wall");
  for (const Summary& s : rows) {
    std::printf(
        "%-9s %8s %7s %8s %7s %8s %7s %8s %7s %7s %7s %6s %7lld %5.1fs\n", s.policy.c_str(),
        HumanSeconds(s.avg_jct).c_str(), fifo ? Ratio(s.avg_jct, fifo->avg_jct).c_str() : "-",
        HumanSeconds(s.p95_jct).c_str(), fifo ? Ratio(s.p95_jct, fifo->p95_jct).c_str() : "-",
        HumanSeconds(s.avg_wait).c_str(), fifo ? Ratio(s.avg_wait, fifo->avg_wait).c_str() : "-",
        HumanSeconds(s.p95_wait).c_str(), fifo ? Ratio(s.p95_wait, fifo->p95_wait).c_str() : "-",
        Pct(s.gpu_allocation).c_str(), Pct(s.gpu_allocation_queued).c_str(),
        Pct(s.fragmentation).c_str(), static_cast<long long>(s.preemptions), s.wall_seconds);
  }
  std::printf("\n");
  if (dljob && fifo) {
    std::printf("dljob / fifo average JCT: %s (target < 1.00×)\n",
                Ratio(dljob->avg_jct, fifo->avg_jct).c_str());
  }
  if (las && sjf) {
    std::printf("las / sjf average JCT:    %s (target ≤ 1.20×)\n",
                Ratio(las->avg_jct, sjf->avg_jct).c_str());
  }
  double slowest = 0;
  for (const Summary& s : rows) slowest = std::max(slowest, s.wall_seconds);
  std::printf("slowest replay:           %.1fs (target < 60s per policy)\n", slowest);
  for (const Summary& s : rows) {
    if (s.finished != s.jobs) {
      std::printf("note: %s finished %lld of %lld jobs\n", s.policy.c_str(),
                  static_cast<long long>(s.finished), static_cast<long long>(s.jobs));
    }
  }
  return 0;
}

}  // namespace
}  // namespace dljob::bench

int main(int argc, char** argv) { return dljob::bench::Main(argc, argv); }
