// (d) The operator at scale: N DLJobs of 5 pods (4 workers + launcher) submitted at once, until
// every job is Running, against a fresh test API server with simulated kubelets, or with
// --kubeconfig against any server whose nodes run bound pods by themselves (the real
// kube-apiserver with dljob-sim-nodes: bench/operator_real.sh).
//
// Two phases in one run, on the same API server:
//   baseline  this program creates the same pods itself (4 bound worker pods per job, then the
//             job's launcher as soon as its workers run) — the cost of the API server and
//             kubelets alone;
//   operator  dljob-operator does the work from N DLJob objects: keys, service, config map,
//             secret, placement, binding, launcher after every worker is Ready, status.
// Reported: time until all are Running, jobs/s, p50/p99 submit-to-Running latency (both phases;
// a baseline job is Running when its launcher is), the operator's peak memory and that memory
// per 10,000 pods, the ratios of operator to baseline (total time, p99), and where the
// operator's jobs spent their time, by phase, from its --trace-spans (phase_breakdown.h).
//
//   operator_bench [--jobs 1000] [--operator-workers 8] [--submitters 8] [--kubeconfig FILE]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/mutex.h"
#include "bench/bench_kube.h"
#include "bench/phase_breakdown.h"
#include "testing/command.h"

namespace dljob::bench {
namespace {

using Json = nlohmann::json;
using dljob::testing::Background;
using dljob::testing::TempDir;

constexpr int kWorkersPerJob = 4;
constexpr int kGpusPerNode = 8;  // the test API server's nodes

Json Job(const std::string& ns, const std::string& name) {
  return {{"apiVersion", "dljob.io/v1alpha1"},
          {"kind", "DLJob"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec",
           {{"image", "dljob/trainer:cpu"},
            {"command", {"dljob-train", "--model=resnet50", "--data_name=synthetic"}},
            {"gpus", kWorkersPerJob},
            {"gpusPerWorker", 1}}}};
}

Json Pod(const std::string& ns, const std::string& name, const std::string& node, int gpus) {
  Json limits = Json::object();
  if (gpus > 0) limits["nvidia.com/gpu"] = std::to_string(gpus);
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{"bench", "baseline"}}}}},
          {"spec",
           {{"nodeName", node},
            {"containers",
             {{{"name", "main"},
               {"image", "dljob/trainer:cpu"},
               {"resources", {{"limits", limits}}}}}}}}};
}

struct PhaseRun {
  double seconds = -1;             // all jobs Running
  std::vector<double> latencies;   // submit → Running per job, sorted
  double server_cpu_seconds = -1;  // the test API server's over the same time; -1 for another
};

// The test API server's CPU seconds so far; -1 for a server that is not our process.
double ServerCpuSeconds(const BenchServer& server) {
  return server.process ? CpuSeconds(server.process->pid()) : -1;
}

std::string JobName(int j) { return "job-" + std::to_string(j); }
int JobIndex(const std::string& name) {  // "job-12" and "job-12-worker-3" → 12
  size_t start = name.find('-') + 1;
  return std::stoi(name.substr(start, name.find('-', start) - start));
}

// One node name per GPU, node by node: slot s of the baseline goes to slots[s].
std::vector<std::string> GpuSlots(const std::vector<GpuNode>& nodes) {
  std::vector<std::string> slots;
  for (const GpuNode& node : nodes) slots.insert(slots.end(), node.gpus, node.name);
  return slots;
}

// The baseline: what the operator does, done by a client that needs no decisions: each job's 4
// worker pods created bound to their node (the GPUs of `slots` in turn), and its launcher created
// on its first worker's node as soon as those 4 run.
PhaseRun Baseline(BenchServer& server, const std::vector<std::string>& slots, int jobs,
                  int submitters) {
  kube::Api& api = *server.api;
  PhaseRun run;
  const std::string ns = "baseline";
  if (!CreateNamespace(api, ns, server.real)) return run;
  std::vector<Clock::time_point> submitted(jobs);
  Mutex mu;
  std::condition_variable_any ready_cv;
  std::deque<int> ready;  // guarded by mu: jobs whose workers all run: their launcher is next
  std::vector<int> workers_running(jobs, 0);
  std::atomic<int> jobs_running{0};
  PhaseWatch watch(api, kube::resources::kPods, ns, {"Running"},
                   [&](const Json& pod, const std::string&) {
                     const std::string name = pod["metadata"].value("name", "");
                     const int j = JobIndex(name);
                     if (name.ends_with("-launcher")) {
                       ++jobs_running;
                       return;
                     }
                     MutexLock lock(mu);
                     if (++workers_running[j] == kWorkersPerJob) {
                       ready.push_back(j);
                       ready_cv.notify_one();
                     }
                   });
  std::atomic<bool> stop_launchers{false};
  std::vector<std::jthread> launchers;
  for (int t = 0; t < submitters; ++t) {
    launchers.emplace_back([&] {
      for (;;) {
        int j;
        {
          MutexLock lock(mu);
          ready_cv.wait(mu, [&] { return stop_launchers || !ready.empty(); });
          if (ready.empty()) return;
          j = ready.front();
          ready.pop_front();
        }
        CreateRetrying(api, kube::resources::kPods, ns,
                       Pod(ns, JobName(j) + "-launcher", slots[j * kWorkersPerJob], 0),
                       "create baseline launcher");
      }
    });
  }
  const double server_cpu_before = ServerCpuSeconds(server);
  const auto start = Clock::now();
  Parallel(jobs, submitters, [&](int j) {
    submitted[j] = Clock::now();
    for (int w = 0; w < kWorkersPerJob; ++w) {
      CreateRetrying(
          api, kube::resources::kPods, ns,
          Pod(ns, JobName(j) + "-worker-" + std::to_string(w), slots[j * kWorkersPerJob + w], 1),
          "create baseline worker");
    }
  });
  const bool done = WaitPrinting("running", jobs, [&] { return jobs_running.load(); });
  run.seconds = Seconds(Clock::now() - start);
  if (server.process) run.server_cpu_seconds = ServerCpuSeconds(server) - server_cpu_before;
  {
    MutexLock lock(mu);
    stop_launchers = true;
    ready_cv.notify_all();
  }
  launchers.clear();
  watch.Stop();
  if (done) {
    for (int j = 0; j < jobs; ++j) {
      run.latencies.push_back(
          Seconds(*watch.When(JobName(j) + "-launcher", "Running") - submitted[j]));
    }
    std::sort(run.latencies.begin(), run.latencies.end());
  }
  // On a real server the namespace controller takes minutes to delete thousands of pods: the
  // operator phase waits, so that it starts on a server with nothing left to delete (and the
  // operator's first lists do not hold the baseline's terminating pods).
  if (server.real) {
    std::printf("  waiting for the baseline's namespace to be deleted\n");
    (void)DeleteNamespaceAndWait(api, ns, 30 * 60);
  } else {
    DeleteNamespace(api, ns);
  }
  return run;
}

struct OperatorRun : PhaseRun {
  double cpu_seconds = -1;  // the operator's, from the first submission until all run
  long peak_rss_kib = -1;
  long rss_kib = -1;
  long idle_rss_kib = -1;     // before the jobs arrive
  long settled_rss_kib = -1;  // settle_seconds after all ran; -1 when not measured
  std::string breakdown;      // from the operator's spans (phase_breakdown.h)
  std::string rss_over_time;  // RssSampler's table
};

// Converts a steady-clock instant to wall time (the spans' clock), through `now` in both.
WallTime ToWall(Clock::time_point t, Clock::time_point steady_now, WallTime wall_now) {
  return wall_now + std::chrono::duration_cast<WallTime::duration>(t - steady_now);
}

OperatorRun RunOperator(BenchServer& server, const std::string& binary, const TempDir& dir,
                        int jobs, int submitters, int workers, int settle_seconds,
                        double sample_seconds, int limit_minutes) {
  kube::Api& api = *server.api;
  OperatorRun run;
  const std::string ns = "bench";
  if (!CreateNamespace(api, ns, server.real)) return run;
  const std::string spans_path = dir.path() + "/spans.jsonl";
  Background op({binary, "--kubeconfig", server.kubeconfig, "--leader-elect=false",
                 "--metrics-port=-1", "--qps=2000", "--burst=2000",
                 "--workers=" + std::to_string(workers), "--trace-spans", spans_path},
                {}, dir.path() + "/operator.out", dir.path() + "/operator.err");

  std::vector<Clock::time_point> submitted(jobs);
  PhaseWatch watch(api, kube::resources::kDLJobs, ns, {"Running"});
  // Give the operator a moment to list and watch before the flood.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  run.idle_rss_kib = StatusKiB(op.pid(), "VmRSS");
  const double cpu_before = CpuSeconds(op.pid());
  const double server_cpu_before = ServerCpuSeconds(server);
  const auto start = Clock::now();
  std::atomic<int> created{0};
  RssSampler sampler(op.pid(), sample_seconds, [&] {
    return std::pair{created.load(), watch.Count("Running")};
  });
  Parallel(jobs, submitters, [&](int j) {
    submitted[j] = Clock::now();
    CreateRetrying(api, kube::resources::kDLJobs, ns, Job(ns, JobName(j)), "create DLJob");
    ++created;
  });
  std::printf("  submitted %d DLJobs in %.1f s\n", jobs, Seconds(Clock::now() - start));
  const bool done = WaitPrinting(
      "running", jobs, [&] { return watch.Count("Running"); }, limit_minutes * 60'000, &op);
  run.seconds = Seconds(Clock::now() - start);
  run.cpu_seconds = CpuSeconds(op.pid()) - cpu_before;
  if (server.process) run.server_cpu_seconds = ServerCpuSeconds(server) - server_cpu_before;
  run.rss_kib = StatusKiB(op.pid(), "VmRSS");
  run.peak_rss_kib = StatusKiB(op.pid(), "VmHWM");
  if (done && settle_seconds > 0) {
    // The operator still has watch events and log streams to catch up with; what it holds once
    // nothing changes any more is its memory for these jobs.
    std::printf("  all Running; waiting %d s for the operator to settle\n", settle_seconds);
    std::this_thread::sleep_for(std::chrono::seconds(settle_seconds));
    run.settled_rss_kib = StatusKiB(op.pid(), "VmRSS");
  }
  sampler.Stop();
  run.rss_over_time = sampler.Table("operator RSS over time", "submitted", "Running");
  watch.Stop();
  op.Signal(SIGTERM);
  op.Wait(30'000);  // it writes the last spans on the way out
  if (!done) {
    // What the operator had used by the limit, for a run the machine could not finish.
    std::printf(
        "  only %d of %d jobs reached Running (limit %d min); by then the operator had used "
        "%.1f s of CPU, RSS %.1f MiB (peak %.1f, idle %.1f)\n%s",
        watch.Count("Running"), jobs, limit_minutes, run.cpu_seconds, run.rss_kib / 1024.0,
        run.peak_rss_kib / 1024.0, run.idle_rss_kib / 1024.0, run.rss_over_time.c_str());
    return run;
  }
  const Clock::time_point steady_now = Clock::now();
  const WallTime wall_now = std::chrono::system_clock::now();
  std::vector<JobWindow> windows;
  for (int j = 0; j < jobs; ++j) {
    const Clock::time_point running_at = *watch.When(JobName(j), "Running");
    run.latencies.push_back(Seconds(running_at - submitted[j]));
    windows.push_back({ns + "/" + JobName(j), ToWall(submitted[j], steady_now, wall_now),
                       ToWall(running_at, steady_now, wall_now)});
  }
  std::sort(run.latencies.begin(), run.latencies.end());
  Result<std::vector<kube::Span>> spans = kube::ReadSpanFile(spans_path);
  run.breakdown = spans.ok() ? FormatBreakdown(Summarize(*spans, windows))
                             : "no breakdown: " + spans.status().message() + "\n";
  return run;
}

int Main(int argc, char** argv) {
  int jobs = 1000;
  int workers = 8;
  int submitters = 8;
  bool skip_baseline = false;
  double max_ratio = 0;
  double max_rss_growth_mib = 0;
  int settle_seconds = 0;
  double sample_seconds = 5;
  int limit_minutes = 30;
  std::string kubeconfig;
  std::string apiserver;
  std::string binary = dljob::testing::BinDir() + "/dljob-operator";
  CLI::App app("operator_bench: N DLJobs of 5 pods against an API server", "operator_bench");
  app.add_option("--jobs", jobs, "DLJobs to submit at once")->capture_default_str();
  app.add_option("--operator-workers", workers, "the operator's --workers")->capture_default_str();
  app.add_option("--submitters", submitters, "client threads creating objects")
      ->capture_default_str();
  app.add_flag("--skip-baseline", skip_baseline, "only the operator phase");
  app.add_option("--max-ratio", max_ratio,
                 "fail (exit 3) when operator time / baseline time is larger (a check for CI)");
  app.add_option("--max-rss-growth-mib", max_rss_growth_mib,
                 "fail (exit 3) when the operator's RSS grows by more than this per 10,000 pods");
  app.add_option("--sample-seconds", sample_seconds, "how often the operator's RSS is sampled")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--settle-seconds", settle_seconds,
                 "also report the operator's RSS this long after all jobs run (0: not)")
      ->capture_default_str();
  app.add_option("--limit-minutes", limit_minutes,
                 "how long the operator phase may take; the jobs Running by then are reported")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--operator", binary, "the dljob-operator to measure (another build, to compare)")
      ->capture_default_str();
  app.add_option("--apiserver", apiserver,
                 "the dljob-test-apiserver to run (another build, to compare; default: this "
                 "build's)");
  app.add_option("--kubeconfig", kubeconfig,
                 "run against this server (its nodes must run bound pods by themselves, as "
                 "dljob-sim-nodes' do; the DLJob CRDs installed) instead of a fresh test API "
                 "server");
  CLI11_PARSE(app, argc, argv);
  StopOnSignals();

  TempDir dir;
  const int wanted_nodes = (jobs * kWorkersPerJob + kGpusPerNode - 1) / kGpusPerNode;
  std::optional<BenchServer> server =
      kubeconfig.empty() ? StartTestServer(dir.path(), wanted_nodes, kGpusPerNode, apiserver)
                         : ConnectServer(kubeconfig);
  if (!server) return 1;
  const std::vector<GpuNode> nodes = ListGpuNodes(*server->api);
  const std::vector<std::string> slots = GpuSlots(nodes);
  if (slots.size() < static_cast<size_t>(jobs * kWorkersPerJob)) {
    std::fprintf(stderr, "operator_bench: %zu GPUs on %zu nodes; %d jobs need %d\n", slots.size(),
                 nodes.size(), jobs, jobs * kWorkersPerJob);
    return 1;
  }
  std::printf(
      "operator_bench: %d DLJobs x %d pods on %s, %zu nodes with GPUs (%zu GPUs), operator "
      "--workers=%d, %d submitters, %u cores\n",
      jobs, kWorkersPerJob + 1,
      server->real ? ("the server of " + kubeconfig).c_str() : "dljob-test-apiserver", nodes.size(),
      slots.size(), workers, submitters, std::thread::hardware_concurrency());
  PhaseRun baseline;
  if (!skip_baseline) {
    std::printf(
        "baseline: the same pods created and bound by this program, each job's launcher "
        "once its workers run\n");
    baseline = Baseline(*server, slots, jobs, submitters);
    std::printf("  all %d pods Running after %.1f s; per job p50 %.2f s, p99 %.2f s\n",
                jobs * (kWorkersPerJob + 1), baseline.seconds, Quantile(baseline.latencies, 0.5),
                Quantile(baseline.latencies, 0.99));
  }
  if (StopRequested()) return 1;
  std::printf("operator: DLJobs submitted, dljob-operator does the rest\n");
  OperatorRun run = RunOperator(*server, binary, dir, jobs, submitters, workers, settle_seconds,
                                sample_seconds, limit_minutes);
  if (run.latencies.empty()) return 1;
  auto pct = [&](double p) { return Quantile(run.latencies, p); };
  const double pods = jobs * (kWorkersPerJob + 1.0);
  std::printf("\n%-34s %10.1f s\n", "all jobs Running after", run.seconds);
  std::printf("%-34s %10.1f\n", "jobs/s", jobs / run.seconds);
  std::printf("%-34s %10.2f s\n", "submit-to-Running p50", pct(0.50));
  std::printf("%-34s %10.2f s\n", "submit-to-Running p99", pct(0.99));
  std::printf("%-34s %10.1f s  (%.1f ms per job)\n", "operator CPU", run.cpu_seconds,
              run.cpu_seconds * 1e3 / jobs);
  std::printf("%-34s %10.1f MiB\n", "operator peak RSS", run.peak_rss_kib / 1024.0);
  std::printf("%-34s %10.1f MiB\n", "operator RSS idle", run.idle_rss_kib / 1024.0);
  std::printf("%-34s %10.1f MiB\n", "operator RSS growth per 10,000 pods",
              (run.rss_kib - run.idle_rss_kib) / 1024.0 * 10'000 / pods);
  if (run.settled_rss_kib >= 0) {
    std::printf("%-34s %10.1f MiB  (%d s after all ran)\n", "  ... settled",
                (run.settled_rss_kib - run.idle_rss_kib) / 1024.0 * 10'000 / pods, settle_seconds);
  }
  if (run.server_cpu_seconds >= 0) {
    std::printf("%-34s %10.1f s  (%.1f ms per job)\n", "API server CPU, operator phase",
                run.server_cpu_seconds, run.server_cpu_seconds * 1e3 / jobs);
  }
  if (baseline.server_cpu_seconds >= 0) {
    std::printf("%-34s %10.1f s  (%.1f ms per job)\n", "API server CPU, baseline",
                baseline.server_cpu_seconds, baseline.server_cpu_seconds * 1e3 / jobs);
  }
  if (baseline.seconds > 0 && run.server_cpu_seconds >= 0) {
    // However little the operator itself used, the server had this much to do on these cores.
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    std::printf("%-34s %10.2f x  (server CPU of the operator phase / %u cores / baseline)\n",
                "ratio floor, the server alone", run.server_cpu_seconds / cores / baseline.seconds,
                cores);
  }
  if (baseline.seconds > 0 && !baseline.latencies.empty()) {
    std::printf("%-34s %10.2f x  (operator %.1f s / baseline %.1f s)\n",
                "operator time vs baseline", run.seconds / baseline.seconds, run.seconds,
                baseline.seconds);
    std::printf("%-34s %10.2f x  (operator %.2f s / baseline %.2f s)\n",
                "p99 submit-to-Running vs baseline", pct(0.99) / Quantile(baseline.latencies, 0.99),
                pct(0.99), Quantile(baseline.latencies, 0.99));
  }
  std::printf("\n%s", run.breakdown.c_str());
  std::printf("\n%s", run.rss_over_time.c_str());
  int status = 0;
  const double growth = (run.rss_kib - run.idle_rss_kib) / 1024.0 * 10'000 / pods;
  if (max_ratio > 0 && baseline.seconds > 0 && run.seconds / baseline.seconds > max_ratio) {
    std::printf("FAILED: operator time is %.2fx the baseline's, more than --max-ratio %.2f\n",
                run.seconds / baseline.seconds, max_ratio);
    status = 3;
  }
  if (max_rss_growth_mib > 0 && growth > max_rss_growth_mib) {
    std::printf("FAILED: RSS grew %.1f MiB per 10,000 pods, more than --max-rss-growth-mib %.1f\n",
                growth, max_rss_growth_mib);
    status = 3;
  }
  return status;
}

}  // namespace
}  // namespace dljob::bench

int main(int argc, char** argv) { return dljob::bench::Main(argc, argv); }
