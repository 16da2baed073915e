#include "tools/sim/trace_gen.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "base/random.h"
#include "scheduler/queue/quota.h"

namespace dljob::scheduler::sim {
namespace {

template <typename T>
T Pick(Rng& rng, const std::vector<std::pair<T, double>>& weighted) {
  double total = 0;
  for (const auto& [v, w] : weighted) total += w;
  double u = Uniform01(rng) * total;
  for (const auto& [v, w] : weighted) {
    if (u < w) return v;
    u -= w;
  }
  return weighted.back().first;
}

const char* const kModels[] = {"A100", "V100", "T4"};
constexpr int kNodesPerRack = 16;
constexpr int kZones = 4;
constexpr int kNodesPerClique = 2;

std::vector<Node> MakeNodes(int64_t gpus) {
  const int64_t count = std::max<int64_t>(1, gpus / 8);
  const int64_t racks = (count + kNodesPerRack - 1) / kNodesPerRack;
  std::vector<Node> nodes;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t rack = i / kNodesPerRack;
    // Racks in order: the first half A100, the next 30% V100, the rest T4.
    const double at = double(rack) / double(racks);
    const char* model = at < 0.5 ? kModels[0] : at < 0.8 ? kModels[1] : kModels[2];
    char name[32];
    std::snprintf(name, sizeof name, "node-%04lld", static_cast<long long>(i));
    Node n;
    n.name = name;
    n.allocatable = Resources{8, 128000, 1024 * 1024, 0};
    n.labels[kGpuProductLabel] = model;
    n.labels[kGpuCliqueLabel] = "clique-" + std::to_string(i / kNodesPerClique);
    n.labels[kDefaultRackLabel] = "rack-" + std::to_string(rack);
    n.labels[kZoneLabel] = "zone-" + std::to_string(rack % kZones);
    nodes.push_back(std::move(n));
  }
  return nodes;
}

}  // namespace

Trace GenerateTrace(const TraceShape& shape) {
  Rng rng(shape.seed);
  Trace trace;
  trace.nodes = MakeNodes(shape.gpus);
  std::map<std::string, int64_t> model_gpus;
  int64_t total_gpus = 0;
  for (const Node& n : trace.nodes) {
    model_gpus[n.labels.at(kGpuProductLabel)] += n.allocatable.gpus;
    total_gpus += n.allocatable.gpus;
  }
  std::vector<std::pair<std::string, double>> models;
  for (const auto& [m, g] : model_gpus) models.emplace_back(m, double(g));

  const std::vector<std::pair<int64_t, double>> sizes = {{1, .45},  {2, .12},  {4, .15}, {8, .18},
                                                         {16, .05}, {32, .03}, {64, .02}};
  const std::vector<std::pair<int64_t, double>> priorities = {{0, .85}, {1, .12}, {2, .03}};
  const std::vector<std::pair<std::string, double>> queues = {
      {"team-a", 1}, {"team-b", 1}, {"team-c", 1}, {"team-d", 1}};
  double work = 0;
  for (int64_t i = 0; i < shape.jobs; ++i) {
    TraceJob j;
    char name[32];
    std::snprintf(name, sizeof name, "job-%05lld", static_cast<long long>(i));
    j.name = name;
    j.num_gpu = Pick(rng, sizes);
    j.gpus_per_worker = std::min<int64_t>(j.num_gpu, 8);
    const double d = 900.0 * std::exp(1.9 * Normal(rng));
    j.duration = std::clamp<int64_t>(std::llround(d), 60, 7 * 86400);
    j.priority = Pick(rng, priorities);
    j.queue = Pick(rng, queues);
    if (Uniform01(rng) < 0.4) j.gpu_model = Pick(rng, models);
    // A model's gang must fit its nodes.
    const int64_t room = j.gpu_model.empty() ? total_gpus : model_gpus[j.gpu_model];
    while (j.num_gpu > room) j.num_gpu /= 2;
    j.gpus_per_worker = std::min<int64_t>(j.num_gpu, 8);
    const double limit = double(j.duration) * (1.2 + 1.8 * Uniform01(rng)) + 600;
    j.time_limit = (static_cast<int64_t>(std::ceil(limit / 600.0))) * 600;
    work += double(j.num_gpu) * double(j.duration);
    trace.jobs.push_back(std::move(j));
  }
  // Poisson arrivals at the offered load over the arrival span: the span where the GPU-seconds
  // the jobs need within it (a job longer than the span counts only the span) are load × the
  // cluster's. A fixed point, reached from above.
  const double capacity = shape.load * double(std::max<int64_t>(1, total_gpus));
  double span = work / capacity;
  for (int i = 0; i < 100; ++i) {
    double within = 0;
    for (const TraceJob& j : trace.jobs)
      within += double(j.num_gpu) * std::min(double(j.duration), span);
    span = within / capacity;
  }
  const double rate = double(shape.jobs) / std::max(1.0, span);
  double t = 0;
  for (TraceJob& j : trace.jobs) {
    j.submit_time = std::llround(t);
    t += -std::log(1.0 - Uniform01(rng)) / rate;
  }
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    TraceJob& j = trace.jobs[i];
    const double u = static_cast<double>(MixSeed(shape.seed, i, 0xe1a5) >> 11) * 0x1.0p-53;
    if (j.num_gpu / j.gpus_per_worker < 2 || u >= shape.elastic_share) continue;
    j.min_gpu = std::max(j.gpus_per_worker, j.num_gpu / 4 / j.gpus_per_worker * j.gpus_per_worker);
    // Its user expects it may run on its minimum throughout (num_gpu / min_gpu times as long) and
    // sets the time limit for that: a limit for its max would kill it part-way whenever it
    // starts small and finds no idle GPUs to grow onto, as in a cluster that keeps a queue.
    const int64_t at_min = (j.time_limit.value_or(0) * j.num_gpu + *j.min_gpu - 1) / *j.min_gpu;
    if (j.time_limit) j.time_limit = (at_min + 599) / 600 * 600;
  }
  for (const auto& [queue, w] : queues) {
    QueueSpec q;
    q.name = queue;
    q.quotas[""] = QueueQuota{total_gpus / int64_t(queues.size()), total_gpus};
    trace.queues.push_back(q);
  }
  return trace;
}

}  // namespace dljob::scheduler::sim
