// placement_bench: the time each placement policy takes to place a 64-GPU gang (8 workers × 8
// GPUs, 80 CPU and 480Gi each, reading one dataset) on 1,000 8-GPU nodes, as a ratio against
// first-fit measured in the same run (docs/benchmarks/README.md: well under
// 10 ms), and what each placement looks like (nodes, cliques, racks and zones it spans). Also a
// gang 8 times bigger (64 × 8 GPUs) for first-fit and dljob, to show how the time scales. And
// the gang where it does not fit: 600 of the nodes tainted not-ready (as a control plane that
// cannot keep up taints them), so every node is looked at and the refusal says why, as it is for
// each waiting job on each queue pass.
//
//   placement_bench [--benchmark_repetitions=9] [--benchmark_enable_random_interleaving=true]
//
// The cluster (fixed seed): nodes node-0000..node-0999, 5 zones of 200, 25 racks of 40, 250
// NVLink cliques of 4; about half the nodes whole, a quarter partly used, a quarter full, with
// CPU, memory and pods in use in proportion; one node in ten caches the gang's dataset. Each
// policy places the same gang (Pack, and for dljob also Spread) on the same nodes; the figures are
// the medians over repetitions of Google Benchmark's mean real (wall) and CPU time per placement;
// the ratio is of wall times.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "scheduler/cluster.h"
#include "scheduler/placement_policy.h"

namespace {

using namespace dljob::scheduler;

constexpr char kDataset[] = "oss://datasets/imagenet";

std::vector<Node> Cluster() {
  std::mt19937_64 rng(7);
  std::vector<Node> nodes;
  for (int i = 0; i < 1000; ++i) {
    Node n;
    char name[16];
    std::snprintf(name, sizeof name, "node-%04d", i);
    n.name = name;
    n.allocatable = {8, 96000, 1024 * 1024, 110};
    const int kind = static_cast<int>(rng() % 4);  // 0, 1: whole; 2: partly used; 3: full
    const int64_t gpus = kind < 2 ? 0 : kind == 2 ? 1 + static_cast<int64_t>(rng() % 7) : 8;
    n.used = {gpus, 2000 + gpus * 10000, 16384 + gpus * 100000, 3 + (gpus > 0 ? 1 : 0)};
    n.labels[kZoneLabel] = "z" + std::to_string(i / 200);
    n.labels[kDefaultRackLabel] = "r" + std::to_string(i / 40);
    n.labels[kGpuCliqueLabel] = "c" + std::to_string(i / 4);
    n.labels[kGpuProductLabel] = "NVIDIA-H100-80GB-HBM3";
    if (rng() % 10 == 0) n.cached_datasets.insert(kDataset);
    nodes.push_back(std::move(n));
  }
  return nodes;
}

// The cluster with nodes 0..599 tainted node.kubernetes.io/not-ready:NoSchedule and nearly all of
// the others partly used: fewer than 8 whole nodes are left for the gang's workers of 8 GPUs.
std::vector<Node> TaintedCluster() {
  std::vector<Node> nodes = Cluster();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i < 600) {
      nodes[i].taints.push_back({"node.kubernetes.io/not-ready", "", "NoSchedule"});
    } else if (nodes[i].used.gpus == 0 && i % 80 != 0) {
      nodes[i].used.gpus = 1;  // partly used: at most 5 whole nodes left for workers of 8
    }
  }
  return nodes;
}

Gang TheGang(Topology topology, int64_t workers) {
  Gang g;
  g.job = "bench/resnet";
  g.workers = workers;
  g.per_worker = {8, 80000, 480 * 1024, 1};
  g.node_selector[kGpuProductLabel] = "NVIDIA-H100-80GB-HBM3";
  g.gpu_model = "NVIDIA-H100-80GB-HBM3";
  g.topology = topology;
  g.datasets = {kDataset};
  return g;
}

struct Case {
  std::string name;  // "policy", "policy, Spread", "policy, 512 GPUs"
  std::string policy;
  Topology topology;
  int64_t workers;
  std::string baseline;  // first-fit on the same gang
  bool fits = true;      // false: on the cluster with 600 nodes tainted, where it does not
  bool explain = true;   // false: TryPlace, which does not say why (as the queue's passes)
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (std::string_view p : PlacementPolicyNames()) {
    cases.push_back({std::string(p), std::string(p), Topology::kPack, 8, "first-fit"});
  }
  cases.push_back({"dljob, Spread", "dljob", Topology::kSpread, 8, "first-fit"});
  // Scaling: a gang 8 times bigger (512 GPUs on 64 nodes).
  for (const char* p : {"first-fit", "dljob"}) {
    cases.push_back({std::string(p) + ", 512 GPUs", p, Topology::kPack, 64, "first-fit, 512 GPUs"});
  }
  // The refusal: against placing the same gang where it fits.
  for (const char* p : {"first-fit", "dljob"}) {
    cases.push_back({std::string(p) + ", no room", p, Topology::kPack, 8, "first-fit", false});
  }
  // The refusal as the queue meets it for each waiting job on each pass: the reason dropped.
  cases.push_back(
      {"dljob, no room, TryPlace", "dljob", Topology::kPack, 8, "first-fit", false, false});
  return cases;
}

void Place(benchmark::State& state, const Case& c) {
  static const std::vector<Node> whole = Cluster(), tainted = TaintedCluster();
  const std::vector<Node>& nodes = c.fits ? whole : tainted;
  PlacementPolicyPtr policy = std::move(MakePlacementPolicy(c.policy).value());
  const Gang gang = TheGang(c.topology, c.workers);
  for (auto _ : state) {
    if (!c.explain) {
      std::optional<Placement> p = policy->TryPlace(gang, nodes);
      benchmark::DoNotOptimize(p);
      if (p.has_value() != c.fits) state.SkipWithError(c.fits ? "it does not fit" : "it fits");
      continue;
    }
    dljob::Result<Placement> p = policy->Place(gang, nodes);
    benchmark::DoNotOptimize(p);
    if (p.ok() != c.fits) {
      state.SkipWithError(c.fits ? p.status().message().c_str() : "it fits");
    }
  }
}

// Collects each benchmark's per-repetition mean real and CPU time (ns) for the ratio table.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      const double to_ns = benchmark::GetTimeUnitMultiplier(benchmark::kNanosecond) /
                           benchmark::GetTimeUnitMultiplier(r.time_unit);
      ns_[r.run_name.function_name].push_back(r.GetAdjustedRealTime() * to_ns);
      cpu_ns_[r.run_name.function_name].push_back(r.GetAdjustedCPUTime() * to_ns);
    }
  }
  // Median over repetitions; 0 when it never ran.
  double MedianNs(const std::string& name) { return Median(ns_[name]); }
  double MedianCpuNs(const std::string& name) { return Median(cpu_ns_[name]); }

 private:
  static double Median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }
  std::map<std::string, std::vector<double>> ns_, cpu_ns_;
};

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

// Nodes, cliques, racks and zones a placement spans.
std::string Shape(const Case& c, const std::vector<Node>& nodes) {
  dljob::Result<Placement> p = std::move(MakePlacementPolicy(c.policy).value())
                                   ->Place(TheGang(c.topology, c.workers), nodes);
  if (!p.ok()) return "refused: " + p.status().message().substr(0, 90) + "…";
  std::set<std::string> names(p->worker_nodes.begin(), p->worker_nodes.end());
  std::map<std::string, std::set<std::string>> domains;
  int64_t local = 0;
  for (const Node& n : nodes) {
    if (!names.count(n.name)) continue;
    for (const char* key : {kGpuCliqueLabel, kDefaultRackLabel, kZoneLabel}) {
      domains[key].insert(n.labels.at(key));
    }
    local += n.cached_datasets.count(kDataset);
  }
  char out[160];
  std::snprintf(out, sizeof out, "%zu nodes, %zu cliques, %zu racks, %zu zones, %lld caching",
                names.size(), domains[kGpuCliqueLabel].size(), domains[kDefaultRackLabel].size(),
                domains[kZoneLabel].size(), static_cast<long long>(local));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const std::vector<Case> cases = Cases();
  for (const Case& c : cases) {
    benchmark::RegisterBenchmark(c.name.c_str(), Place, c)->Unit(benchmark::kMicrosecond);
  }
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  const std::vector<Node> nodes = Cluster(), tainted = TaintedCluster();
  std::printf(
      "\nPlacing 8 workers × 8 GPUs (and 64 × 8) on 1,000 8-GPU nodes. Machine: %u vCPU, %s; load "
      "average %s (after the run).\n",
      std::thread::hardware_concurrency(), CpuModel().c_str(), LoadAverage().c_str());
  std::printf("%-24s %9s %12s %9s  %s\n", "policy", "wall µs", "vs first-fit", "CPU µs",
              "placement");
  for (const Case& c : cases) {
    const double ns = reporter.MedianNs(c.name), baseline = reporter.MedianNs(c.baseline);
    std::printf("%-24s %9.1f %11.2f× %9.1f  %s\n", c.name.c_str(), ns / 1000,
                baseline > 0 ? ns / baseline : 0.0, reporter.MedianCpuNs(c.name) / 1000,
                Shape(c, c.fits ? nodes : tainted).c_str());
  }
  benchmark::Shutdown();
  return 0;
}
