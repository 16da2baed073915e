// (d2) The Kueue-shaped case: 15,000 one-worker DLJobs through 30 DLQueues in 5 cohorts × 6
// (queue_shape.h), created over 60 s as Kueue's scheduler performance test creates its
// workloads, each "running" for its class's runtime once its launcher is Running, until all have
// Succeeded. Against a fresh test API server, or with --kubeconfig any server whose nodes run
// bound pods by themselves (the real kube-apiserver with dljob-sim-nodes:
// bench/operator_real.sh --queue).
//
// This program plays Kueue's runner: it creates the queues and jobs on schedule and ends each
// launcher pod its runtime after it started (annotation sim.dljob.io/exit-code=0, which the
// simulated kubelets of both servers honour). dljob-operator does everything else: admission by
// quota and priority, borrowing within a cohort, preemption, placement, pods, status.
//
// Reported: the wall time until every job finished, admitted jobs/s, time to admission and to
// Running per size class (mean, p50, p90, p99), preemptions, the operator's CPU, and its RSS
// over time. --max-wall-seconds and --max-peak-rss-mib make it a check (exit 3 past either).
//
//   queue_bench [--scale 1] [--kubeconfig FILE] [--nodes 40 --gpus-per-node 32]
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <queue>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/mutex.h"
#include "bench/bench_kube.h"
#include "bench/queue_shape.h"
#include "testing/command.h"

namespace dljob::bench {
namespace {

using Json = nlohmann::json;
using dljob::testing::Background;
using dljob::testing::TempDir;

constexpr char kNamespace[] = "kueue-shape";

// Ends launcher pods when their job's runtime is over: Finish(pod, after) schedules it, a thread
// of its own patches the pod (annotation sim.dljob.io/exit-code=0, for that uid only).
class Finisher {
 public:
  explicit Finisher(kube::Api& api) : api_(api), thread_([this](std::stop_token s) { Run(s); }) {}
  ~Finisher() {
    thread_.request_stop();
    {
      MutexLock lock(mu_);
      cv_.notify_all();
    }
  }
  void Finish(const std::string& pod, const std::string& uid, Clock::duration after) {
    MutexLock lock(mu_);
    due_.push({Clock::now() + after, pod, uid});
    cv_.notify_all();
  }
  int failed() const { return failed_.load(); }

 private:
  struct Due {
    Clock::time_point at;
    std::string pod, uid;
    bool operator>(const Due& o) const { return at > o.at; }
  };
  void Run(std::stop_token stop) {
    for (;;) {
      Due next;
      {
        MutexLock lock(mu_);
        for (;;) {
          if (stop.stop_requested()) return;
          if (!due_.empty() && due_.top().at <= Clock::now()) break;
          if (due_.empty()) {
            cv_.wait_for(mu_, std::chrono::milliseconds(200));
          } else {
            cv_.wait_until(mu_, due_.top().at);
          }
        }
        next = due_.top();
        due_.pop();
      }
      const Json patch = {
          {"metadata", {{"uid", next.uid}, {"annotations", {{"sim.dljob.io/exit-code", "0"}}}}}};
      auto r = api_.MergePatch(kube::resources::kPods, kNamespace, next.pod, patch);
      // 404/409: the pod went away or was replaced (its job was preempted): nothing to end.
      if (!r.ok() && !r.error().IsNotFound() && !r.error().IsConflict()) ++failed_;
    }
  }

  kube::Api& api_;
  Mutex mu_;
  std::condition_variable_any cv_;
  std::priority_queue<Due, std::vector<Due>, std::greater<>> due_ GUARDED_BY(mu_);
  std::atomic<int> failed_{0};
  std::jthread thread_;  // last: it uses the members above
};

int Main(int argc, char** argv) {
  double scale = 1.0;
  std::string kubeconfig;
  int nodes = 40;
  int gpus_per_node = 32;
  int workers = 8;
  int submitters = 8;
  double sample_seconds = 5;
  double max_wall = 0;
  double max_rss_mib = 0;
  std::string spans;
  std::string operator_log;
  std::string binary = dljob::testing::BinDir() + "/dljob-operator";
  CLI::App app("queue_bench: the Kueue-shaped case, 15,000 one-worker DLJobs through 30 DLQueues",
               "queue_bench");
  app.add_option("--scale", scale, "multiply every class's job count (0.1: 1,500 jobs)")
      ->capture_default_str();
  app.add_option("--kubeconfig", kubeconfig,
                 "run against this server (nodes that run bound pods by themselves, the DLJob and "
                 "DLQueue CRDs installed, no DLQueues yet) instead of a fresh test API server");
  app.add_option("--nodes", nodes, "the test API server's nodes")->capture_default_str();
  app.add_option("--gpus-per-node", gpus_per_node, "the test API server's GPUs per node")
      ->capture_default_str();
  app.add_option("--operator", binary, "the dljob-operator to measure")->capture_default_str();
  app.add_option("--operator-workers", workers, "the operator's --workers")->capture_default_str();
  app.add_option("--submitters", submitters, "client threads creating DLJobs")
      ->capture_default_str();
  app.add_option("--sample-seconds", sample_seconds, "how often the operator's RSS is sampled")
      ->capture_default_str();
  app.add_option("--trace-spans", spans,
                 "the operator's --trace-spans file (bench/operator_phases reads it)");
  app.add_option("--operator-log", operator_log, "keep the operator's stderr in this file");
  app.add_option("--max-wall-seconds", max_wall, "fail (exit 3) when the run takes longer");
  app.add_option("--max-peak-rss-mib", max_rss_mib,
                 "fail (exit 3) when the operator's peak RSS "
                 "is larger");
  CLI11_PARSE(app, argc, argv);
  StopOnSignals();

  const QueueShape shape = Scaled(QueueShape{}, scale);
  const std::vector<PlannedJob> plan = Plan(shape);
  const int total = static_cast<int>(plan.size());
  std::unordered_map<std::string, int> index;
  for (int i = 0; i < total; ++i) index[plan[i].name] = i;

  TempDir dir;
  std::optional<BenchServer> server = kubeconfig.empty()
                                          ? StartTestServer(dir.path(), nodes, gpus_per_node)
                                          : ConnectServer(kubeconfig);
  if (!server) return 1;
  kube::Api& api = *server->api;
  const std::vector<GpuNode> gpu_nodes = ListGpuNodes(api);
  int gpus = 0, biggest = 0;
  for (const GpuNode& n : gpu_nodes) {
    gpus += n.gpus;
    biggest = std::max(biggest, n.gpus);
  }
  const int quota = shape.cohorts * shape.queues_per_cohort * shape.nominal;
  std::printf(
      "queue_bench: %d DLJobs (%d small, %d medium, %d large per queue) through %d DLQueues "
      "(%d cohorts x %d, %d GPUs each, borrowing up to %d), %zu nodes with %d GPUs on %s, "
      "operator --workers=%d, %u cores\n",
      total, shape.classes[0].count, shape.classes[1].count, shape.classes[2].count,
      shape.cohorts * shape.queues_per_cohort, shape.cohorts, shape.queues_per_cohort,
      shape.nominal, shape.borrowing_limit, gpu_nodes.size(), gpus,
      server->real ? kubeconfig.c_str() : "dljob-test-apiserver", workers,
      std::thread::hardware_concurrency());
  if (gpus < quota || biggest < shape.classes.back().gpus) {
    std::fprintf(stderr,
                 "queue_bench: the nodes hold %d GPUs (at most %d on one); the queues own %d and "
                 "a large job needs %d on one node\n",
                 gpus, biggest, quota, shape.classes.back().gpus);
    return 1;
  }
  if (!CreateNamespace(api, kNamespace, server->real)) return 1;
  for (int c = 0; c < shape.cohorts; ++c) {
    for (int q = 0; q < shape.queues_per_cohort; ++q) {
      if (!Must(api.Create(kube::resources::kDLQueues, "", QueueObject(shape, c, q)),
                "create DLQueue " + QueueName(c, q))) {
        return 1;
      }
    }
  }

  std::vector<std::string> op_argv = {binary,
                                      "--kubeconfig",
                                      server->kubeconfig,
                                      "--leader-elect=false",
                                      "--metrics-port=-1",
                                      "--qps=2000",
                                      "--burst=2000",
                                      "--workers=" + std::to_string(workers)};
  if (!spans.empty()) op_argv.insert(op_argv.end(), {"--trace-spans", spans});
  Background op(op_argv, {}, dir.path() + "/operator.out",
                operator_log.empty() ? dir.path() + "/operator.err" : operator_log);
  Finisher finisher(api);
  PhaseWatch pods(api, kube::resources::kPods, kNamespace, {"Running"},
                  [&](const Json& pod, const std::string&) {
                    const std::string name = pod["metadata"].value("name", "");
                    if (!name.ends_with("-launcher")) return;
                    auto it = index.find(name.substr(0, name.size() - 9));
                    if (it == index.end()) return;
                    const SizeClass& size = shape.classes[plan[it->second].size];
                    finisher.Finish(name, pod["metadata"].value("uid", ""),
                                    std::chrono::milliseconds(size.runtime_ms));
                  });
  PhaseWatch jobs(api, kube::resources::kDLJobs, kNamespace,
                  {"Scheduled", "Running", "Succeeded", "Failed", "Suspended"});
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the operator lists and watches
  const long idle_rss = StatusKiB(op.pid(), "VmRSS");
  const double cpu_before = CpuSeconds(op.pid());
  // The rest of the machine's work, beside the operator's: the test API server and this bench.
  const pid_t server_pid = server->process ? server->process->pid() : -1;
  const double server_cpu_before = server_pid > 0 ? CpuSeconds(server_pid) : 0;
  const double bench_cpu_before = CpuSeconds(getpid());

  std::vector<Clock::time_point> submitted(total);
  const auto start = Clock::now();
  std::atomic<int> created{0};
  RssSampler sampler(op.pid(), sample_seconds, [&] {
    return std::pair{created.load(), jobs.Count("Succeeded") + jobs.Count("Failed")};
  });
  std::jthread submit([&] {
    Parallel(total, submitters, [&](int i) {
      std::this_thread::sleep_until(start + std::chrono::milliseconds(plan[i].submit_ms));
      submitted[i] = Clock::now();
      CreateRetrying(api, kube::resources::kDLJobs, kNamespace,
                     JobObject(shape, plan[i], kNamespace), "create DLJob " + plan[i].name);
      ++created;
    });
    std::printf("  submitted %d DLJobs in %.1f s (planned: %.1f s)\n", total,
                Seconds(Clock::now() - start), plan.back().submit_ms / 1000.0);
  });
  const bool done = WaitPrinting(
      "finished", total, [&] { return jobs.Count("Succeeded") + jobs.Count("Failed"); }, 3'600'000);
  const double wall = Seconds(Clock::now() - start);
  const double cpu = CpuSeconds(op.pid()) - cpu_before;
  const double server_cpu = server_pid > 0 ? CpuSeconds(server_pid) - server_cpu_before : -1;
  const double bench_cpu = CpuSeconds(getpid()) - bench_cpu_before;
  const long peak_rss = StatusKiB(op.pid(), "VmHWM");
  const long end_rss = StatusKiB(op.pid(), "VmRSS");
  sampler.Stop();
  submit.join();
  pods.Stop();
  jobs.Stop();
  op.Signal(SIGTERM);
  op.Wait(30'000);
  if (!done) {
    std::printf("only %d of %d jobs finished\n", jobs.Count("Succeeded") + jobs.Count("Failed"),
                total);
    return 1;
  }

  std::vector<int> sizes;
  std::vector<double> to_admission, to_running;
  Clock::time_point last_start = start;
  for (int i = 0; i < total; ++i) {
    // Started: its launcher first Running (a job that ends within a pass may go from Scheduled
    // to Succeeded in its status). Admitted: its first status past Queued.
    const auto running = pods.When(plan[i].name + "-launcher", "Running");
    if (!running) continue;  // failed before it ran
    Clock::time_point admitted = *running;
    for (const char* phase : {"Scheduled", "Running", "Succeeded"}) {
      if (auto at = jobs.When(plan[i].name, phase)) admitted = std::min(admitted, *at);
    }
    sizes.push_back(plan[i].size);
    to_admission.push_back(Seconds(admitted - submitted[i]));
    to_running.push_back(Seconds(*running - submitted[i]));
    last_start = std::max(last_start, *running);
  }
  const double started_in = Seconds(last_start - start);
  std::printf("\n%-40s %10.1f s\n", "all jobs finished after", wall);
  std::printf("%-40s %10.1f s  (%.1f jobs/s)\n", "last job Running after", started_in,
              sizes.size() / started_in);
  std::printf("%-40s %10d / %d\n", "Succeeded / Failed", jobs.Count("Succeeded"),
              jobs.Count("Failed"));
  std::printf("%-40s %10d\n", "jobs suspended at least once", jobs.Count("Suspended"));
  std::printf("%-40s %10.1f s  (%.1f ms per job)\n", "operator CPU", cpu, cpu * 1e3 / total);
  if (server_cpu >= 0) {
    std::printf("%-40s %10.1f s  (%.1f ms per job)\n", "test API server CPU", server_cpu,
                server_cpu * 1e3 / total);
  }
  std::printf("%-40s %10.1f s  (%.1f ms per job)\n", "bench CPU (clients, watches)", bench_cpu,
              bench_cpu * 1e3 / total);
  std::printf("%-40s %10.1f MiB (idle %.1f, at the end %.1f)\n", "operator peak RSS",
              peak_rss / 1024.0, idle_rss / 1024.0, end_rss / 1024.0);
  if (finisher.failed() > 0) std::printf("launcher ends that failed: %d\n", finisher.failed());
  for (const auto& [title, times] :
       {std::pair{"submit to admission (status Scheduled)", &to_admission},
        std::pair{"submit to start (launcher Running)", &to_running}}) {
    std::printf("\n%s, seconds:\n%-8s %6s %8s %8s %8s %8s %8s\n", title, "class", "jobs", "mean",
                "p50", "p90", "p99", "max");
    for (const ClassSummary& s : SummarizeByClass(shape, sizes, *times)) {
      std::printf("%-8s %6d %8.2f %8.2f %8.2f %8.2f %8.2f\n", s.name.c_str(), s.jobs, s.mean, s.p50,
                  s.p90, s.p99, s.max);
    }
  }
  std::printf("\n%s", sampler.Table("operator RSS over time", "submitted", "finished").c_str());

  int status = 0;
  if (jobs.Count("Failed") > 0) {  // nothing here makes a job fail
    std::printf("FAILED: %d jobs Failed (the operator's log: --operator-log FILE)\n",
                jobs.Count("Failed"));
    status = 3;
  }
  if (max_wall > 0 && wall > max_wall) {
    std::printf("FAILED: the run took %.1f s, more than --max-wall-seconds %.1f\n", wall, max_wall);
    status = 3;
  }
  if (max_rss_mib > 0 && peak_rss / 1024.0 > max_rss_mib) {
    std::printf("FAILED: the operator's peak RSS %.1f MiB is more than --max-peak-rss-mib %.1f\n",
                peak_rss / 1024.0, max_rss_mib);
    status = 3;
  }
  if (!server->real) return status;
  for (int c = 0; c < shape.cohorts; ++c) {
    for (int q = 0; q < shape.queues_per_cohort; ++q) {
      (void)api.Delete(kube::resources::kDLQueues, "", QueueName(c, q));
    }
  }
  DeleteNamespace(api, kNamespace);
  return status;
}

}  // namespace
}  // namespace dljob::bench

int main(int argc, char** argv) { return dljob::bench::Main(argc, argv); }
