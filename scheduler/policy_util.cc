#include "scheduler/policy_util.h"

#include <cassert>

namespace dljob::scheduler {

Placement Expand(const std::vector<Take>& takes) {
  Placement p;
  for (const Take& t : takes) p.worker_nodes.insert(p.worker_nodes.end(), t.workers, t.node->name);
  return p;
}

double FreeFractionAfter(const Node& n, const Resources& w, int64_t placed) {
  double sum = 0;
  int counted = 0;
  auto add = [&](int64_t allocatable, int64_t used, int64_t asked) {
    if (allocatable <= 0 || asked <= 0) return;
    sum += static_cast<double>(allocatable - used - placed * asked) / allocatable;
    ++counted;
  };
  add(n.allocatable.gpus, n.used.gpus, w.gpus);
  add(n.allocatable.cpu_milli, n.used.cpu_milli, w.cpu_milli);
  add(n.allocatable.memory_mib, n.used.memory_mib, w.memory_mib);
  return counted == 0 ? 0 : sum / counted;
}

Placement PlaceOneByOne(const Gang& gang, const std::vector<Candidate>& candidates,
                        bool most_free) {
  std::vector<int64_t> placed(candidates.size(), 0);
  std::vector<size_t> first_use;  // candidates in the order they got their first worker
  for (int64_t worker = 0; worker < gang.workers; ++worker) {
    size_t best = candidates.size();
    double best_score = 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (placed[i] >= candidates[i].slots) continue;
      double score = FreeFractionAfter(*candidates[i].node, gang.per_worker, placed[i] + 1);
      if (best == candidates.size() || (most_free ? score > best_score : score < best_score)) {
        best = i;
        best_score = score;
      }
    }
    assert(best < candidates.size() && "PlaceOneByOne needs room for the whole gang");
    if (placed[best]++ == 0) first_use.push_back(best);
  }
  std::vector<Take> takes;
  for (size_t i : first_use) takes.push_back({candidates[i].node, placed[i]});
  return Expand(takes);
}

}  // namespace dljob::scheduler
