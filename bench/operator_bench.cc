// (d) The operator at scale: N DLJobs of 5 pods (4 workers + launcher) submitted at once against
// the test API server with simulated kubelets, until every job is Running.
//
// Two phases in one run, on the same fresh API server:
//   baseline  this program creates the same pods itself (4 bound worker pods per job, then the
//             launcher once they run) — the cost of the API server and kubelets alone;
//   operator  dljob-operator does the work from N DLJob objects: keys, service, config map,
//             secret, placement, binding, launcher after every worker is Ready, status.
// Reported: time until all are Running, jobs/s, p50/p99 submit-to-Running latency (operator
// phase), the operator's peak memory and that memory per 10,000 pods, and the ratio of operator
// time to baseline time.
//
//   operator_bench [--jobs 1000] [--operator-workers 8] [--submitters 8]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/mutex.h"
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

// Counts pods in `ns` with phase Running.
int RunningPods(kube::Api& api, const std::string& ns, const std::string& selector) {
  kube::ListOptions o;
  o.label_selector = selector;
  auto list = kube::ListAll(api, kube::resources::kPods, ns, o);
  if (!list.ok()) return -1;
  int n = 0;
  for (const Json& pod : (*list)["items"]) {
    if (pod.contains("status") && pod["status"].value("phase", "") == "Running") ++n;
  }
  return n;
}

// The baseline: every job's worker pods created and bound by hand, then its launcher.
double Baseline(kube::Api& api, int jobs, int submitters) {
  const std::string ns = "baseline";
  if (!CreateNamespace(api, ns)) return -1;
  const auto start = Clock::now();
  Parallel(jobs, submitters, [&](int j) {
    for (int w = 0; w < kWorkersPerJob; ++w) {
      const int slot = j * kWorkersPerJob + w;
      Must(api.Create(kube::resources::kPods, ns,
                      Pod(ns, "job-" + std::to_string(j) + "-worker-" + std::to_string(w),
                          "gpu-node-" + std::to_string(slot / kGpusPerNode), 1)),
           "create baseline worker");
    }
  });
  WaitFor([&] { return RunningPods(api, ns, "bench") >= jobs * kWorkersPerJob; }, 1'800'000);
  Parallel(jobs, submitters, [&](int j) {
    Must(api.Create(kube::resources::kPods, ns,
                    Pod(ns, "job-" + std::to_string(j) + "-launcher",
                        "gpu-node-" + std::to_string(j * kWorkersPerJob / kGpusPerNode), 0)),
         "create baseline launcher");
  });
  WaitFor([&] { return RunningPods(api, ns, "bench") >= jobs * (kWorkersPerJob + 1); }, 1'800'000);
  const double seconds = Seconds(Clock::now() - start);
  api.Delete(kNamespaces, "", ns);
  return seconds;
}

struct OperatorRun {
  double seconds = -1;
  std::vector<double> latencies;  // submit → Running, per job
  long peak_rss_kib = -1;
  long rss_kib = -1;
  long idle_rss_kib = -1;  // before the jobs arrive
};

// When each job was submitted and when the watcher first saw it Running.
struct JobTimes {
  explicit JobTimes(int jobs) : submitted(jobs), running(jobs), is_running(jobs, false) {}
  Mutex mu;
  std::vector<Clock::time_point> submitted GUARDED_BY(mu);
  std::vector<Clock::time_point> running GUARDED_BY(mu);
  std::vector<bool> is_running GUARDED_BY(mu);
};

OperatorRun RunOperator(kube::Api& api, const std::string& kubeconfig, const TempDir& dir, int jobs,
                        int submitters, int workers) {
  OperatorRun run;
  const std::string ns = "bench";
  if (!CreateNamespace(api, ns)) return run;
  Background op({dljob::testing::BinDir() + "/dljob-operator", "--kubeconfig", kubeconfig,
                 "--leader-elect=false", "--metrics-port=-1", "--qps=2000", "--burst=2000",
                 "--workers=" + std::to_string(workers)},
                {}, dir.path() + "/operator.out", dir.path() + "/operator.err");

  JobTimes times(jobs);
  std::atomic<int> running_count{0};
  std::jthread watcher([&](std::stop_token stop) {
    std::string rv;
    while (!stop.stop_requested() && running_count < jobs) {
      kube::ListOptions o;
      o.resource_version = rv;
      o.timeout_seconds = 60;
      auto watch = api.Watch(kube::resources::kDLJobs, ns, o);
      if (!watch.ok()) {
        rv.clear();
        continue;
      }
      std::stop_callback cancel(stop, [&] { (*watch)->Cancel(); });
      for (;;) {
        auto event = (*watch)->Next();
        if (!event.ok() || !event->has_value()) break;
        const Json& job = (**event).object;
        if (job.contains("metadata")) rv = job["metadata"].value("resourceVersion", rv);
        if (!job.contains("status") || job["status"].value("phase", "") != "Running") continue;
        const std::string name = job["metadata"].value("name", "");
        const int index = std::stoi(name.substr(name.rfind('-') + 1));
        MutexLock lock(times.mu);
        if (!times.is_running[index]) {
          times.is_running[index] = true;
          times.running[index] = Clock::now();
          ++running_count;
        }
      }
    }
  });
  // Give the operator a moment to list and watch before the flood.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  run.idle_rss_kib = StatusKiB(op.pid(), "VmRSS");
  const auto start = Clock::now();
  Parallel(jobs, submitters, [&](int j) {
    {
      MutexLock lock(times.mu);
      times.submitted[j] = Clock::now();
    }
    Must(api.Create(kube::resources::kDLJobs, ns, Job(ns, "job-" + std::to_string(j))),
         "create DLJob");
  });
  const double submit_seconds = Seconds(Clock::now() - start);
  std::printf("  submitted %d DLJobs in %.1f s\n", jobs, submit_seconds);
  int last = -1;
  const bool done = WaitFor(
      [&] {
        int now = running_count.load();
        if (now / 100 != last / 100) std::printf("  running: %d/%d\n", now, jobs);
        last = now;
        return now >= jobs;
      },
      1'800'000);
  run.seconds = Seconds(Clock::now() - start);
  run.rss_kib = StatusKiB(op.pid(), "VmRSS");
  run.peak_rss_kib = StatusKiB(op.pid(), "VmHWM");
  watcher.request_stop();
  if (!done) {
    std::printf("  only %d of %d jobs reached Running\n", running_count.load(), jobs);
    return run;
  }
  {
    MutexLock lock(times.mu);  // the watcher may still be inside Next()
    for (int j = 0; j < jobs; ++j) {
      run.latencies.push_back(Seconds(times.running[j] - times.submitted[j]));
    }
  }
  std::sort(run.latencies.begin(), run.latencies.end());
  op.Signal(SIGTERM);
  op.Wait(30'000);
  return run;
}

int Main(int argc, char** argv) {
  int jobs = 1000;
  int workers = 8;
  int submitters = 8;
  bool skip_baseline = false;
  CLI::App app("operator_bench: N DLJobs of 5 pods against the test API server", "operator_bench");
  app.add_option("--jobs", jobs, "DLJobs to submit at once")->capture_default_str();
  app.add_option("--operator-workers", workers, "the operator's --workers")->capture_default_str();
  app.add_option("--submitters", submitters, "client threads creating objects")
      ->capture_default_str();
  app.add_flag("--skip-baseline", skip_baseline, "only the operator phase");
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
  double baseline = -1;
  if (!skip_baseline) {
    std::printf("baseline: the same pods created and bound by this program\n");
    baseline = Baseline(**api, jobs, submitters);
    std::printf("  all %d pods Running after %.1f s\n", jobs * (kWorkersPerJob + 1), baseline);
  }
  std::printf("operator: DLJobs submitted, dljob-operator does the rest\n");
  OperatorRun run = RunOperator(**api, dir.path() + "/kubeconfig", dir, jobs, submitters, workers);
  if (run.latencies.empty()) return 1;
  auto pct = [&](double p) {
    return run.latencies[std::min(run.latencies.size() - 1,
                                  static_cast<size_t>(p * run.latencies.size()))];
  };
  const double pods = jobs * (kWorkersPerJob + 1.0);
  std::printf("\n%-34s %10.1f s\n", "all jobs Running after", run.seconds);
  std::printf("%-34s %10.1f\n", "jobs/s", jobs / run.seconds);
  std::printf("%-34s %10.2f s\n", "submit-to-Running p50", pct(0.50));
  std::printf("%-34s %10.2f s\n", "submit-to-Running p99", pct(0.99));
  std::printf("%-34s %10.1f MiB\n", "operator peak RSS", run.peak_rss_kib / 1024.0);
  std::printf("%-34s %10.1f MiB\n", "operator RSS idle", run.idle_rss_kib / 1024.0);
  std::printf("%-34s %10.1f MiB\n", "operator RSS growth per 10,000 pods",
              (run.rss_kib - run.idle_rss_kib) / 1024.0 * 10'000 / pods);
  if (baseline > 0) {
    std::printf("%-34s %10.2f x  (operator %.1f s / baseline %.1f s)\n",
                "operator time vs baseline", run.seconds / baseline, run.seconds, baseline);
  }
  return 0;
}

}  // namespace
}  // namespace dljob::bench

int main(int argc, char** argv) { return dljob::bench::Main(argc, argv); }
