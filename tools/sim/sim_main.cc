// dljob-sim: replays a job trace through dljob's queue and placement code on simulated time and
// compares scheduling policies; or writes a synthetic trace (--generate-trace).
//
//   dljob-sim --nodes NODES.csv --jobs JOBS.csv --policy fifo,dljob,las [--queues QUEUES.csv]
//             [--preemption-overhead S] [--min-run-time S] [-o table|json]
//             [--resize-overhead S] [--grow-after S] [--rigid]
//             [--jobs-out per-job.csv] [--events-out events.csv] [--svg allocation.svg]
//             [--estimates [--estimate-sample N] [--estimate-every S] [--estimate-noise F]
//                          [--estimate-max-passes N] [--estimates-out FILE]]
//   dljob-sim --generate-trace --jobs-count 20000 --gpus 6500 --seed 1 [--elastic-share F]
//             --out-dir DIR
//
// Elastic against rigid on one trace: replay it once as it is and once with --rigid.
//
// Exit status: 0 done, 1 a bad input file or a file that cannot be written (the message names
// the file, line and column), 2 a usage error. Progress goes to stderr; results to stdout.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "base/clock.h"
#include "base/env.h"
#include "base/progress_printer.h"
#include "tools/sim/metrics.h"
#include "tools/sim/report.h"
#include "tools/sim/simulator.h"
#include "tools/sim/trace.h"
#include "tools/sim/trace_gen.h"

namespace dljob::scheduler::sim {
namespace {

struct Flags {
  std::string nodes, jobs, queues;
  std::vector<std::string> policies;
  SimOptions options;
  std::string output = "table";
  std::string jobs_out, svg, events_out;
  bool estimates = false;
  EstimateScoring scoring;
  std::string estimates_out;
  bool quiet = false;
  bool generate = false;
  TraceShape shape;
  std::string out_dir;
};

// One status line on stderr per policy: redrawn on a terminal (at most 5 times a second), a line
// per tenth of the jobs elsewhere.
class Progress {
 public:
  Progress(const std::string& policy, bool quiet)
      : policy_(policy), quiet_(quiet), line_(std::cerr, isatty(STDERR_FILENO) != 0) {}
  void Update(size_t ended, size_t total, int64_t now) {
    if (quiet_ || total == 0) return;
    const auto t = RealClock().MonotonicNow();
    const int tenth = static_cast<int>(10 * ended / total);
    if (line_.tty() ? t - last_ < std::chrono::milliseconds(200) && ended < total
                    : tenth == last_tenth_) {
      return;
    }
    last_ = t;
    last_tenth_ = tenth;
    line_.Show("dljob-sim " + policy_ + ": " + std::to_string(ended) + "/" + std::to_string(total) +
               " jobs ended, simulated " + HumanSeconds(double(now)));
  }
  void Done(const SimResult& r) {
    if (quiet_) return;
    std::string estimates;
    if (r.estimate_runs > 0) {
      estimates = ", " + std::to_string(r.estimate_runs) + " estimates taking " +
                  std::to_string(r.estimate_wall_seconds).substr(0, 5) + "s";
    }
    line_.Show("dljob-sim " + policy_ + ": done in " + std::to_string(r.wall_seconds).substr(0, 5) +
               "s (" + std::to_string(r.passes) + " scheduling passes" + estimates + ")");
    line_.Keep();
  }

 private:
  std::string policy_;
  bool quiet_;
  StatusLine line_;
  Clock::MonotonicTime last_{};
  int last_tenth_ = -1;
};

int Generate(const Flags& f) {
  std::error_code ec;
  std::filesystem::create_directories(f.out_dir, ec);
  if (ec) {
    std::cerr << "dljob-sim: error: " << f.out_dir << ": cannot create: " << ec.message() << "\n";
    return 1;
  }
  Trace t = GenerateTrace(f.shape);
  const std::string dir = f.out_dir + "/";
  for (const auto& [name, text] :
       {std::pair{"nodes.csv", NodesCsv(t.nodes)}, std::pair{"jobs.csv", JobsCsv(t.jobs)},
        std::pair{"queues.csv", QueuesCsv(t.queues)}}) {
    if (Status s = DefaultEnv().WriteFileAtomically(dir + name, text); !s.ok()) {
      std::cerr << "dljob-sim: error: " << s.message() << "\n";
      return 1;
    }
  }
  int64_t gpus = 0;
  for (const Node& n : t.nodes) gpus += n.allocatable.gpus;
  std::cout << "wrote " << t.jobs.size() << " jobs on " << t.nodes.size() << " nodes (" << gpus
            << " GPUs) to " << f.out_dir << ": nodes.csv, jobs.csv, queues.csv\n";
  return 0;
}

int Replay(const Flags& f) {
  std::vector<SimPolicy> policies;
  for (const std::string& name : f.policies) {
    Result<SimPolicy> p = SimPolicyByName(name, f.options);
    if (!p.ok()) {
      std::cerr << "dljob-sim: error: --policy: " << p.status().message() << "\n";
      return 2;
    }
    policies.push_back(*p);
  }
  Result<Trace> trace = LoadTrace(f.nodes, f.jobs, f.queues);
  if (!trace.ok()) {
    std::cerr << "dljob-sim: error: " << trace.status().message() << "\n";
    return 1;
  }
  std::vector<SimResult> results;
  std::vector<Summary> summaries;
  for (const SimPolicy& p : policies) {
    Progress progress(p.name, f.quiet);
    Result<SimResult> r = Simulate(*trace, p, [&](size_t ended, size_t total, int64_t now) {
      progress.Update(ended, total, now);
    });
    if (!r.ok()) {
      std::cerr << "dljob-sim: error: " << p.name << ": " << r.status().message() << "\n";
      return 1;
    }
    progress.Done(*r);
    summaries.push_back(Summarize(*trace, *r));
    results.push_back(std::move(*r));
  }
  if (f.output == "json") {
    std::cout << SummaryJson(summaries).dump(2) << "\n";
  } else {
    std::cout << FormatTable(summaries);
  }
  if (!f.jobs_out.empty()) {
    if (Status s = DefaultEnv().WriteFileAtomically(f.jobs_out, JobsOutCsv(*trace, results));
        !s.ok()) {
      std::cerr << "dljob-sim: error: --jobs-out: " << s.message() << "\n";
      return 1;
    }
  }
  if (!f.events_out.empty()) {
    if (Status s = DefaultEnv().WriteFileAtomically(f.events_out, EventsOutCsv(*trace, results));
        !s.ok()) {
      std::cerr << "dljob-sim: error: --events-out: " << s.message() << "\n";
      return 1;
    }
  }
  if (!f.svg.empty()) {
    if (Status s = DefaultEnv().WriteFileAtomically(f.svg, AllocationSvg(results)); !s.ok()) {
      std::cerr << "dljob-sim: error: --svg: " << s.message() << "\n";
      return 1;
    }
  }
  if (!f.estimates_out.empty()) {
    if (Status s =
            DefaultEnv().WriteFileAtomically(f.estimates_out, EstimatesOutCsv(*trace, results));
        !s.ok()) {
      std::cerr << "dljob-sim: error: --estimates-out: " << s.message() << "\n";
      return 1;
    }
  }
  return 0;
}

int Main(int argc, char** argv) {
  Flags f;
  std::string policy_names = "fifo,dljob";
  CLI::App app(
      "dljob-sim: replays a job trace through dljob's queue and placement code on simulated "
      "time and compares scheduling policies (average and p95 job completion time and wait, "
      "makespan, GPU allocation, fragmentation, preemptions; with --estimates, how far "
      "start-time estimates were off). Exit status: 0 done, 1 bad input file, 2 usage error.",
      "dljob-sim");
  app.add_option("--nodes", f.nodes,
                 "nodes CSV: name,num_gpu,gpu_model,cpu_milli,memory_mib[,labels k=v;k=v]");
  app.add_option("--jobs", f.jobs,
                 "jobs CSV: name,submit_time,duration,num_gpu,gpus_per_worker,queue,priority,"
                 "gpu_model[,time_limit] (seconds)");
  app.add_option("--queues", f.queues,
                 "queues CSV: name,gpu_model,nominal,borrowing_limit[,cohort] (default: every "
                 "queue the jobs name, unlimited)");
  app.add_option("--policy", policy_names,
                 "policies to compare, comma-separated: fifo, spread, best-fit, dljob, las, sjf")
      ->capture_default_str();
  app.add_option("--preemption-overhead", f.options.preemption_overhead,
                 "seconds a suspended job spends restoring when it resumes")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--min-run-time", f.options.min_run_time,
                 "seconds a job runs before it may be suspended")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--resize-overhead", f.options.resize_overhead,
                 "seconds a resized elastic job spends checkpointing and restarting")
      ->capture_default_str();
  app.add_option("--grow-after", f.options.grow_after,
                 "seconds GPUs stay idle before an elastic job may grow onto them")
      ->capture_default_str();
  app.add_flag("--rigid", f.options.rigid,
               "run the trace's elastic jobs as rigid ones at their max GPUs (to compare)");
  app.add_option("--las-thresholds", f.options.las_thresholds,
                 "las: attained GPU-second boundaries between levels, ascending")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("-o,--output", f.output, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  app.add_option("--jobs-out", f.jobs_out, "write one CSV row per policy and job here");
  app.add_option("--events-out", f.events_out,
                 "write one CSV row per policy and job event (start, end, deadline, preempt, "
                 "shrink, grow) here");
  app.add_option("--svg", f.svg, "write a plot of GPU allocation over time here");
  app.add_flag("--estimates", f.estimates,
               "score start-time estimates: each scored job's (--estimate-sample) at its "
               "submission and at each change (re-estimated every --estimate-every seconds), "
               "against the start it then gets (each estimate replays the queue: minutes where "
               "a replay takes seconds)");
  app.add_option("--estimate-sample", f.scoring.sample,
                 "with --estimates: score every N-th job of the trace (1: all); each scored "
                 "job's submission triggers an estimate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--estimate-every", f.scoring.every,
                 "with --estimates: simulated seconds between re-estimates while jobs wait")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--estimate-noise", f.scoring.noise,
                 "with --estimates: a running job's reported remaining time is off by a factor "
                 "from U(1-F, 1+F), drawn once per run (0: exact, as a steady images/sec gives)")
      ->check(CLI::Range(0.0, 0.99))
      ->capture_default_str();
  app.add_option("--estimate-max-passes", f.scoring.options.max_passes,
                 "with --estimates: scheduling passes one estimate may replay")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--estimates-out", f.estimates_out,
                 "with --estimates: write one CSV row per policy and estimate here");
  app.add_flag("-q,--quiet", f.quiet, "no progress on stderr");
  app.add_flag("--generate-trace", f.generate,
               "write a synthetic Philly/Helios-like trace to --out-dir instead of replaying");
  app.add_option("--jobs-count", f.shape.jobs, "generated jobs")
      ->check(CLI::Range(int64_t{1}, int64_t{10'000'000}))
      ->capture_default_str();
  app.add_option("--gpus", f.shape.gpus, "generated GPUs (8 a node)")
      ->check(CLI::Range(int64_t{8}, int64_t{10'000'000}))
      ->capture_default_str();
  app.add_option("--seed", f.shape.seed, "generator seed")->capture_default_str();
  app.add_option("--elastic-share", f.shape.elastic_share,
                 "generated: share of the multi-worker jobs made elastic (from a quarter of "
                 "their GPUs up to all)")
      ->capture_default_str();
  app.add_option("--load", f.shape.load, "generated offered load (GPU-seconds per GPU-second)")
      ->check(CLI::Range(0.01, 100.0))
      ->capture_default_str();
  app.add_option("--out-dir", f.out_dir,
                 "where --generate-trace writes nodes.csv, jobs.csv, queues.csv");
  try {
    app.parse(argc, argv);
    if (f.generate) {
      if (f.out_dir.empty())
        throw CLI::ValidationError("--out-dir", "required with --generate-trace");
    } else {
      if (f.nodes.empty() || f.jobs.empty()) {
        throw CLI::ValidationError("--nodes/--jobs", "both are required (or --generate-trace)");
      }
      std::stringstream s(policy_names);
      std::string p;
      while (std::getline(s, p, ',')) {
        if (!p.empty()) f.policies.push_back(p);
      }
      if (f.policies.empty()) throw CLI::ValidationError("--policy", "names no policy");
    }
    if (!f.estimates_out.empty() && !f.estimates) {
      throw CLI::ValidationError("--estimates-out", "needs --estimates");
    }
    if (f.estimates) f.options.estimates = f.scoring;
    f.options.record_events = !f.events_out.empty();
    if (!std::is_sorted(f.options.las_thresholds.begin(), f.options.las_thresholds.end())) {
      throw CLI::ValidationError("--las-thresholds", "must be ascending");
    }
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "dljob-sim: error: " << e.what() << "\nRun dljob-sim --help for the flags.\n";
    return 2;
  }
  return f.generate ? Generate(f) : Replay(f);
}

}  // namespace
}  // namespace dljob::scheduler::sim

int main(int argc, char** argv) {
  try {
    return dljob::scheduler::sim::Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "dljob-sim: internal error: " << e.what() << "\n";
    return 1;
  }
}
