// (d) The operator at scale: N DLJobs of 5 pods (4 workers + launcher) submitted at once against
// the test API server with simulated kubelets, until every job is Running.
//
// Two phases in one run, on the same fresh API server:
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
//   operator_bench [--jobs 1000] [--operator-workers 8] [--submitters 8]
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/mutex.h"
#include "bench/phase_breakdown.h"
#include "kube/config.h"
#include "kube/http_api.h"
#include "testing/command.h"

namespace dljob::bench {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;
using dljob::testing::Background;
using dljob::testing::TempDir;
using dljob::testing::WaitFor;

constexpr int kWorkersPerJob = 4;
constexpr int kGpusPerNode = 8;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// CPU seconds (user + system) the process has used so far; -1 when it cannot be read.
double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t end = stat.rfind(')');  // the command name may hold spaces
  if (end == std::string::npos) return -1;
  std::istringstream fields(stat.substr(end + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; fields >> field && i <= 15; ++i) {  // fields 14 and 15: utime, stime
    if (i >= 14) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

long StatusKiB(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

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

// Runs fn(i) for i in [0, n) on `threads` threads.
template <typename Fn>
void Parallel(int n, int threads, Fn fn) {
  std::atomic<int> next{0};
  std::vector<std::jthread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i; (i = next++) < n;) fn(i);
    });
  }
}

bool Must(const kube::ApiResult<Json>& r, const std::string& what) {
  if (r.ok()) return true;
  std::fprintf(stderr, "operator_bench: %s: %s\n", what.c_str(), r.error().ToString().c_str());
  return false;
}

const kube::Resource kNamespaces{"", "v1", "namespaces", false, "Namespace"};

bool CreateNamespace(kube::Api& api, const std::string& ns) {
  return Must(
      api.Create(kNamespaces, "",
                 {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}}),
      "create namespace " + ns);
}

// When each of `count` objects (named "<prefix><index>"; for pods, the launcher's or a worker's
// name) was first seen Running, from a watch of `resource` in `ns`; `on_running(name)` is called
// once per object on the watch's thread.
class FirstRunning {
 public:
  using Callback = std::function<void(const std::string& name)>;
  FirstRunning(kube::Api& api, const kube::Resource& resource, const std::string& ns,
               Callback on_running)
      : on_running_(std::move(on_running)),
        thread_(
            [this, &api, resource, ns](std::stop_token stop) { Watch(api, resource, ns, stop); }) {}
  ~FirstRunning() { Stop(); }
  void Stop() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
  }
  // When `name` was first seen Running; nullopt when it has not been.
  std::optional<Clock::time_point> When(const std::string& name) {
    MutexLock lock(mu_);
    auto it = seen_.find(name);
    if (it == seen_.end()) return std::nullopt;
    return it->second;
  }

 private:
  void Watch(kube::Api& api, const kube::Resource& resource, const std::string& ns,
             std::stop_token stop) {
    std::string rv;
    while (!stop.stop_requested()) {
      kube::ListOptions o;
      o.resource_version = rv;
      o.timeout_seconds = 5;  // so that Stop() does not wait long
      auto watch = api.Watch(resource, ns, o);
      if (!watch.ok()) {
        rv.clear();
        continue;
      }
      for (;;) {
        auto event = (*watch)->Next();
        if (!event.ok() || !event->has_value()) break;
        const Json& object = (**event).object;
        if (object.contains("metadata")) rv = object["metadata"].value("resourceVersion", rv);
        if (!object.contains("status") || object["status"].value("phase", "") != "Running") {
          continue;
        }
        const std::string name = object["metadata"].value("name", "");
        {
          MutexLock lock(mu_);
          if (!seen_.emplace(name, Clock::now()).second) continue;
        }
        on_running_(name);
      }
    }
  }

  Callback on_running_;
  Mutex mu_;
  std::map<std::string, Clock::time_point> seen_ GUARDED_BY(mu_);
  std::jthread thread_;  // last: it uses the members above
};

struct PhaseRun {
  double seconds = -1;            // all jobs Running
  std::vector<double> latencies;  // submit → Running per job, sorted
};

std::string JobName(int j) { return "job-" + std::to_string(j); }
int JobIndex(const std::string& name) {  // "job-12" and "job-12-worker-3" → 12
  size_t start = name.find('-') + 1;
  return std::stoi(name.substr(start, name.find('-', start) - start));
}

// Blocks until `done()`, printing progress; false after 30 minutes.
bool WaitPrinting(int jobs, const std::function<int()>& running) {
  int last = -1;
  return WaitFor(
      [&] {
        int now = running();
        if (now / 100 != last / 100) std::printf("  running: %d/%d\n", now, jobs);
        last = now;
        return now >= jobs;
      },
      1'800'000);
}

// The baseline: what the operator does, done by a client that needs no decisions: each job's 4
// worker pods created bound to their node, and its launcher created as soon as those 4 run.
PhaseRun Baseline(kube::Api& api, int jobs, int submitters) {
  PhaseRun run;
  const std::string ns = "baseline";
  if (!CreateNamespace(api, ns)) return run;
  std::vector<Clock::time_point> submitted(jobs);
  Mutex mu;
  std::condition_variable_any ready_cv;
  std::deque<int> ready;  // guarded by mu: jobs whose workers all run: their launcher is next
  std::vector<int> workers_running(jobs, 0);
  std::atomic<int> jobs_running{0};
  FirstRunning watch(api, kube::resources::kPods, ns, [&](const std::string& name) {
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
        Must(api.Create(kube::resources::kPods, ns,
                        Pod(ns, JobName(j) + "-launcher",
                            "gpu-node-" + std::to_string(j * kWorkersPerJob / kGpusPerNode), 0)),
             "create baseline launcher");
      }
    });
  }
  const auto start = Clock::now();
  Parallel(jobs, submitters, [&](int j) {
    submitted[j] = Clock::now();
    for (int w = 0; w < kWorkersPerJob; ++w) {
      const int slot = j * kWorkersPerJob + w;
      Must(api.Create(kube::resources::kPods, ns,
                      Pod(ns, JobName(j) + "-worker-" + std::to_string(w),
                          "gpu-node-" + std::to_string(slot / kGpusPerNode), 1)),
           "create baseline worker");
    }
  });
  const bool done = WaitPrinting(jobs, [&] { return jobs_running.load(); });
  run.seconds = Seconds(Clock::now() - start);
  {
    MutexLock lock(mu);
    stop_launchers = true;
    ready_cv.notify_all();
  }
  launchers.clear();
  watch.Stop();
  if (done) {
    for (int j = 0; j < jobs; ++j) {
      run.latencies.push_back(Seconds(*watch.When(JobName(j) + "-launcher") - submitted[j]));
    }
    std::sort(run.latencies.begin(), run.latencies.end());
  }
  api.Delete(kNamespaces, "", ns);
  return run;
}

struct OperatorRun : PhaseRun {
  double cpu_seconds = -1;  // the operator's, from the first submission until all run
  long peak_rss_kib = -1;
  long rss_kib = -1;
  long idle_rss_kib = -1;  // before the jobs arrive
  std::string breakdown;   // from the operator's spans (phase_breakdown.h)
};

// Converts a steady-clock instant to wall time (the spans' clock), through `now` in both.
WallTime ToWall(Clock::time_point t, Clock::time_point steady_now, WallTime wall_now) {
  return wall_now + std::chrono::duration_cast<WallTime::duration>(t - steady_now);
}

OperatorRun RunOperator(kube::Api& api, const std::string& binary, const std::string& kubeconfig,
                        const TempDir& dir, int jobs, int submitters, int workers) {
  OperatorRun run;
  const std::string ns = "bench";
  if (!CreateNamespace(api, ns)) return run;
  const std::string spans_path = dir.path() + "/spans.jsonl";
  Background op({binary, "--kubeconfig", kubeconfig, "--leader-elect=false", "--metrics-port=-1",
                 "--qps=2000", "--burst=2000", "--workers=" + std::to_string(workers),
                 "--trace-spans", spans_path},
                {}, dir.path() + "/operator.out", dir.path() + "/operator.err");

  std::vector<Clock::time_point> submitted(jobs);
  std::atomic<int> running{0};
  FirstRunning watch(api, kube::resources::kDLJobs, ns, [&](const std::string&) { ++running; });
  // Give the operator a moment to list and watch before the flood.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  run.idle_rss_kib = StatusKiB(op.pid(), "VmRSS");
  const double cpu_before = CpuSeconds(op.pid());
  const auto start = Clock::now();
  Parallel(jobs, submitters, [&](int j) {
    submitted[j] = Clock::now();
    Must(api.Create(kube::resources::kDLJobs, ns, Job(ns, JobName(j))), "create DLJob");
  });
  std::printf("  submitted %d DLJobs in %.1f s\n", jobs, Seconds(Clock::now() - start));
  const bool done = WaitPrinting(jobs, [&] { return running.load(); });
  run.seconds = Seconds(Clock::now() - start);
  run.cpu_seconds = CpuSeconds(op.pid()) - cpu_before;
  run.rss_kib = StatusKiB(op.pid(), "VmRSS");
  run.peak_rss_kib = StatusKiB(op.pid(), "VmHWM");
  watch.Stop();
  op.Signal(SIGTERM);
  op.Wait(30'000);  // it writes the last spans on the way out
  if (!done) {
    std::printf("  only %d of %d jobs reached Running\n", running.load(), jobs);
    return run;
  }
  const Clock::time_point steady_now = Clock::now();
  const WallTime wall_now = std::chrono::system_clock::now();
  std::vector<JobWindow> windows;
  for (int j = 0; j < jobs; ++j) {
    const Clock::time_point running_at = *watch.When(JobName(j));
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
  std::string binary = dljob::testing::BinDir() + "/dljob-operator";
  CLI::App app("operator_bench: N DLJobs of 5 pods against the test API server", "operator_bench");
  app.add_option("--jobs", jobs, "DLJobs to submit at once")->capture_default_str();
  app.add_option("--operator-workers", workers, "the operator's --workers")->capture_default_str();
  app.add_option("--submitters", submitters, "client threads creating objects")
      ->capture_default_str();
  app.add_flag("--skip-baseline", skip_baseline, "only the operator phase");
  app.add_option("--operator", binary, "the dljob-operator to measure (another build, to compare)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  TempDir dir;
  const int nodes = (jobs * kWorkersPerJob + kGpusPerNode - 1) / kGpusPerNode;
  Background server(
      {dljob::testing::BinDir() + "/dljob-test-apiserver", "--port", "0", "--port-file",
       dir.path() + "/port", "--kubeconfig-out", dir.path() + "/kubeconfig", "--nodes",
       std::to_string(nodes), "--gpus-per-node", std::to_string(kGpusPerNode), "--kubelet-delay-ms",
       "0", "--crd", dljob::testing::SourceDir() + "/charts/dljob/crds/dljob.io_dljobs.yaml",
       "--crd", dljob::testing::SourceDir() + "/charts/dljob/crds/dljob.io_dlqueues.yaml"},
      {}, dir.path() + "/apiserver.out", dir.path() + "/apiserver.err");
  if (!WaitFor([&] { return std::ifstream(dir.path() + "/port").good(); }, 30'000)) {
    std::fprintf(stderr, "operator_bench: the test API server did not start\n");
    return 1;
  }
  auto config = kube::LoadKubeconfig(dir.path() + "/kubeconfig");
  if (!config.ok()) return 1;
  kube::ApiOptions options;
  options.qps = 5000;
  options.burst = 5000;
  options.user_agent = "operator_bench";
  auto api = kube::MakeApi(*config, options);
  if (!api.ok()) return 1;

  std::printf(
      "operator_bench: %d DLJobs x %d pods, %d nodes x %d GPUs, operator --workers=%d, "
      "%d submitters, %u cores\n",
      jobs, kWorkersPerJob + 1, nodes, kGpusPerNode, workers, submitters,
      std::thread::hardware_concurrency());
  PhaseRun baseline;
  if (!skip_baseline) {
    std::printf(
        "baseline: the same pods created and bound by this program, each job's launcher "
        "once its workers run\n");
    baseline = Baseline(**api, jobs, submitters);
    std::printf("  all %d pods Running after %.1f s; per job p50 %.2f s, p99 %.2f s\n",
                jobs * (kWorkersPerJob + 1), baseline.seconds, Quantile(baseline.latencies, 0.5),
                Quantile(baseline.latencies, 0.99));
  }
  std::printf("operator: DLJobs submitted, dljob-operator does the rest\n");
  OperatorRun run =
      RunOperator(**api, binary, dir.path() + "/kubeconfig", dir, jobs, submitters, workers);
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
  if (baseline.seconds > 0 && !baseline.latencies.empty()) {
    std::printf("%-34s %10.2f x  (operator %.1f s / baseline %.1f s)\n",
                "operator time vs baseline", run.seconds / baseline.seconds, run.seconds,
                baseline.seconds);
    std::printf("%-34s %10.2f x  (operator %.2f s / baseline %.2f s)\n",
                "p99 submit-to-Running vs baseline", pct(0.99) / Quantile(baseline.latencies, 0.99),
                pct(0.99), Quantile(baseline.latencies, 0.99));
  }
  std::printf("\n%s", run.breakdown.c_str());
  return 0;
}

}  // namespace
}  // namespace dljob::bench

int main(int argc, char** argv) { return dljob::bench::Main(argc, argv); }
