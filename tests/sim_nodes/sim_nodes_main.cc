// dljob-sim-nodes: simulated GPU nodes on a real Kubernetes API server, in the manner of KWOK. It
// registers N nodes (GPU capacity and kube-up's labels), keeps their Leases and status fresh as
// 1.20 kubelets do (NodeKeeper), and runs the pods bound to them through the API (PodRunner):
// Running and Ready, Succeeded or Failed when annotated sim.dljob.io/exit-code, removed after a
// graceful delete; and it serves their containers' logs as a kubelet does (KubeletLogs), so that
// pods/log through the API server works. On SIGINT or SIGTERM it deletes its Leases and Nodes
// (unless --keep-nodes).
//
//   dljob-sim-nodes --kubeconfig /tmp/apiserver-only/kubeconfig --nodes 1000
//
// docs/development/simulated-nodes.md has the flags, what is simulated and the measured rates.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <unordered_map>

#include <CLI/CLI.hpp>

#include "base/env.h"
#include "kube/config.h"
#include "kube/http_api.h"
#include "tests/sim_nodes/kubelet_logs.h"
#include "tests/sim_nodes/node_keeper.h"
#include "tests/sim_nodes/pod_runner.h"

namespace dljob::sim_nodes {
namespace {

struct Flags {
  std::string kubeconfig;
  std::string context;
  NodeKeeper::Options keeper;
  int renew_seconds = 10;
  int status_seconds = 60;
  int pod_threads = 8;
  double qps = 0;
  bool keep_nodes = false;
  int progress_seconds = 10;
  std::string ready_file;
  int kubelet_port = 0;  // -1: no kubelet endpoint
};

void Say(const char* format, auto... args) {
  std::printf("dljob-sim-nodes: ");
  std::printf(format, args...);
  std::printf("\n");
  std::fflush(stdout);
}

void Progress(const NodeKeeper& keeper, const PodRunner& runner,
              std::chrono::steady_clock::time_point start, long& last_updates,
              std::chrono::steady_clock::time_point& last) {
  const NodeKeeper::Stats n = keeper.stats();
  const PodRunner::Stats p = runner.stats();
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - last).count();
  const double rate = seconds > 0 ? (p.status_updates - last_updates) / seconds : 0;
  last_updates = p.status_updates;
  last = now;
  Say("[%.1fs] %zu nodes; leases renewed %ld (latest %.1fs late), heartbeats %ld; pods started "
      "%ld, "
      "finished %ld, removed %ld, queued %ld; %ld status updates (%.0f/s); %ld failed calls",
      std::chrono::duration<double>(now - start).count(), keeper.names().size(), n.renewals,
      n.max_late_seconds, n.heartbeats, p.started, p.finished, p.removed, p.queued,
      p.status_updates, rate, n.failures + p.failures);
  if (!n.last_error.empty()) Say("last node error: %s", n.last_error.c_str());
  if (!p.last_error.empty()) Say("last pod error: %s", p.last_error.c_str());
}

int Run(Flags flags) {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);  // before any thread starts

  kube::ConfigSource source;
  source.kubeconfig = flags.kubeconfig;
  source.context = flags.context;
  Result<kube::Config> config = kube::LoadConfig(source);
  if (!config.ok()) {
    std::fprintf(stderr, "dljob-sim-nodes: %s\n", config.status().message().c_str());
    return 2;
  }
  kube::ApiOptions options;
  options.user_agent = "dljob-sim-nodes";
  // Unlimited by default: the server's own limits (max-requests-inflight) are what is measured.
  options.qps = flags.qps > 0 ? flags.qps : 1e9;
  options.burst = flags.qps > 0 ? static_cast<int>(flags.qps) : 1'000'000;
  options.watch_timeout = std::chrono::seconds(300);
  Result<std::unique_ptr<kube::Api>> api = kube::MakeApi(*config, options);
  if (!api.ok()) {
    std::fprintf(stderr, "dljob-sim-nodes: %s\n", api.status().message().c_str());
    return 2;
  }

  flags.keeper.renew_period = std::chrono::seconds(flags.renew_seconds);
  flags.keeper.status_period = std::chrono::seconds(flags.status_seconds);
  std::optional<KubeletLogs> logs;
  if (flags.kubelet_port >= 0) {
    logs.emplace(flags.kubelet_port);
    if (Status s = logs->Start(); !s.ok()) {
      std::fprintf(stderr, "dljob-sim-nodes: %s\n", s.message().c_str());
      return 1;
    }
    flags.keeper.table.kubelet_port = logs->port();
  }
  NodeKeeper keeper(**api, flags.keeper);
  const auto t0 = std::chrono::steady_clock::now();
  if (Status s = keeper.Register(); !s.ok()) {
    std::fprintf(stderr, "dljob-sim-nodes: %s (server %s)\n", s.message().c_str(),
                 config->server.c_str());
    if (!flags.keep_nodes) (void)keeper.Deregister();
    return 1;
  }
  Say("[%.1fs] registered %d nodes %s … %s with their leases on %s",
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
      flags.keeper.table.count, keeper.names().front().c_str(), keeper.names().back().c_str(),
      config->server.c_str());

  std::unordered_map<std::string, int> numbers;
  for (int i = 0; i < flags.keeper.table.count; ++i) {
    numbers[keeper.names()[i]] = NodeNumber(flags.keeper.table, i);
  }
  if (logs) {
    Say("serving the nodes' container logs at https://%s:%d/containerLogs/",
        flags.keeper.table.kubelet_address.c_str(), logs->port());
  }
  PodRunner::Hooks hooks;
  std::string host_ip;
  if (logs) {
    hooks.started = [&logs](const Json& pod) { logs->Started(pod); };
    hooks.finished = [&logs](const Json& pod, int code) { logs->Finished(pod, code); };
    hooks.removed = [&logs](const Json& pod) { logs->Removed(pod); };
    host_ip = flags.keeper.table.kubelet_address;
  }
  PodRunner runner(**api, std::move(numbers), flags.pod_threads, std::move(hooks), host_ip);
  runner.Start();
  keeper.Start();
  if (!flags.ready_file.empty()) {
    if (Status s = DefaultEnv().WriteFileAtomically(flags.ready_file, "ready\n"); !s.ok()) {
      std::fprintf(stderr, "dljob-sim-nodes: --ready-file: %s\n", s.message().c_str());
    }
  }

  long last_updates = 0;
  auto last = std::chrono::steady_clock::now();
  timespec period{std::max(1, flags.progress_seconds), 0};
  for (;;) {
    int signal = sigtimedwait(&stop_signals, nullptr, &period);
    if (signal == SIGINT || signal == SIGTERM) break;
    Progress(keeper, runner, t0, last_updates, last);
  }
  Say("stopping");
  runner.Stop();
  keeper.Stop();
  if (logs) logs->Stop();
  Progress(keeper, runner, t0, last_updates, last);
  if (flags.keep_nodes) {
    Say("kept %d nodes and their leases (--keep-nodes)", flags.keeper.table.count);
    return 0;
  }
  if (Status s = keeper.Deregister(); !s.ok()) {
    std::fprintf(stderr, "dljob-sim-nodes: deregistering: %s\n", s.message().c_str());
    return 1;
  }
  Say("deleted %d nodes and their leases", flags.keeper.table.count);
  return 0;
}

}  // namespace
}  // namespace dljob::sim_nodes

int main(int argc, char** argv) {
  dljob::sim_nodes::Flags flags;
  dljob::sim_nodes::NodeTable& t = flags.keeper.table;
  CLI::App app{
      "dljob-sim-nodes: simulated GPU nodes on a Kubernetes API server. Registers nodes, renews "
      "their Leases, and turns the pods bound to them Running (Succeeded or Failed when annotated "
      "sim.dljob.io/exit-code=<code>; removed after a graceful delete). Ctrl-C deletes the nodes.",
      "dljob-sim-nodes"};
  app.add_option("--kubeconfig", flags.kubeconfig,
                 "Kubeconfig of the API server (default: $KUBECONFIG, then ~/.kube/config)");
  app.add_option("--context", flags.context, "Kubeconfig context (default: current-context)");
  app.add_option("--nodes", t.count, "Nodes to simulate")
      ->check(CLI::Range(1, 16384))
      ->capture_default_str();
  app.add_option("--name-prefix", t.prefix, "Node names: <prefix><number>")->capture_default_str();
  app.add_option("--first-index", t.first_index,
                 "Number of the first node (for several processes sharing one server)")
      ->check(CLI::Range(0, 16383))
      ->capture_default_str();
  app.add_option("--gpus-per-node", t.gpus, "nvidia.com/gpu capacity and allocatable")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--gpu-product", t.gpu_product, "nvidia.com/gpu.product label")
      ->capture_default_str();
  app.add_option("--cpu", t.cpu, "CPU capacity")->capture_default_str();
  app.add_option("--memory", t.memory, "Memory capacity")->capture_default_str();
  app.add_option("--max-pods", t.max_pods, "Pods capacity")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--nodes-per-clique", t.nodes_per_clique,
                 "Nodes sharing an nvidia.com/gpu.clique label (clique-<number / this>)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--nodes-per-rack", t.nodes_per_rack,
                 "Nodes sharing a dljob.io/rack label (rack-<number / this>)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--zone", t.zone, "topology.kubernetes.io/zone label")->capture_default_str();
  app.add_option("--lease-seconds", flags.keeper.lease_seconds, "Node Lease duration")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--renew-seconds", flags.renew_seconds, "Lease renewal period per node")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--status-seconds", flags.status_seconds, "Node status heartbeat period")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--node-threads", flags.keeper.threads, "Threads renewing leases")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--kubelet-port", flags.kubelet_port,
                 "Port of the nodes' kubelet endpoint (container logs, HTTPS on 127.0.0.1, which "
                 "every node names as its InternalIP); 0: any free port; -1: none")
      ->check(CLI::Range(-1, 65535))
      ->capture_default_str();
  app.add_option("--pod-threads", flags.pod_threads, "Threads writing pod status")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--qps", flags.qps, "Client-side request rate limit (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_flag("--keep-nodes", flags.keep_nodes, "Leave the nodes and leases behind on exit");
  app.add_option("--progress-seconds", flags.progress_seconds, "Seconds between progress lines")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--ready-file", flags.ready_file,
                 "Write this file once every node is registered and pods are watched");
  CLI11_PARSE(app, argc, argv);
  return dljob::sim_nodes::Run(flags);
}
