#include "scheduler/dljob_policy.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

#include "scheduler/feasibility.h"
#include "scheduler/policy_util.h"

namespace dljob::scheduler {
namespace {

constexpr size_t kLevels = 3;  // clique, rack, zone

// A candidate node with what the comparisons read, computed once.
struct Info {
  const Node* node = nullptr;
  int64_t slots = 0;
  int64_t free_gpus = 0;
  int64_t local = 0;                                 // how many of the gang's datasets it caches
  std::array<const std::string*, kLevels> domain{};  // clique, rack, zone label values; or null
};

// The clique, rack and zone label values of the nodes chosen so far, per level.
using Chosen = std::array<std::set<std::string_view>, kLevels>;

// Whether the node's domain at `level` is one a chosen node is in.
bool Joins(const Info* n, size_t level, const Chosen& chosen) {
  return n->domain[level] && chosen[level].count(*n->domain[level]) > 0;
}

// The tighter node first: fewer slots, fewer free GPUs, more cached datasets, then by name.
bool Tighter(const Info* a, const Info* b) {
  return std::make_tuple(a->slots, a->free_gpus, -a->local, std::cref(a->node->name)) <
         std::make_tuple(b->slots, b->free_gpus, -b->local, std::cref(b->node->name));
}

struct Plan {
  std::vector<Take> takes;
  int64_t waste = 0;  // GPUs left free on the nodes used
  int64_t local = 0;  // Σ workers × cached datasets of their node
};

// Better by best fit, then locality (the node count and topology are equal by construction).
bool Better(const Plan& a, const Plan& b) {
  return std::make_tuple(a.waste, -a.local) < std::make_tuple(b.waste, -b.local);
}

// The fewest of `group` whose slots hold `workers`; 0 when all of them do not.
size_t FewestNodes(const std::vector<const Info*>& group, int64_t workers) {
  std::vector<int64_t> slots;
  slots.reserve(group.size());
  for (const Info* i : group) slots.push_back(i->slots);
  std::sort(slots.begin(), slots.end(), std::greater<>());
  int64_t sum = 0;
  for (size_t k = 0; k < slots.size(); ++k) {
    sum += slots[k];
    if (sum >= workers) return k + 1;
  }
  return 0;
}

// Chooses `k` nodes of `group` for the gang: each step the node `prefer` ranks first among those
// that leave the rest placeable on the k − 1 − step roomiest remaining nodes; it takes as many
// workers as it can. REQUIRES: the k roomiest nodes of group hold the gang.
// `prefer(a, b, chosen)`: whether a goes before b given the domains of the nodes chosen so far.
template <typename Prefer>
Plan Greedy(const Gang& gang, std::vector<const Info*> group, size_t k, const Prefer& prefer) {
  std::vector<int64_t> desc;  // slots of the unchosen nodes, largest first
  for (const Info* i : group) desc.push_back(i->slots);
  std::sort(desc.begin(), desc.end(), std::greater<>());
  Plan plan;
  Chosen chosen;
  int64_t left = gang.workers;
  for (size_t m = k; m > 0 && left > 0; --m) {
    // The room of the m − 1 roomiest unchosen nodes other than one with `v` slots.
    const int64_t top_m = std::accumulate(desc.begin(), desc.begin() + m, int64_t{0});
    auto others = [&](int64_t v) {
      if (m == 1) return int64_t{0};
      return v >= desc[m - 2] ? top_m - v : top_m - desc[m - 1];
    };
    size_t best = group.size();
    for (size_t i = 0; i < group.size(); ++i) {
      const int64_t v = group[i]->slots;
      if (std::min(v, left) + others(v) < left) continue;
      if (best == group.size() || prefer(group[i], group[best], chosen)) best = i;
    }
    const Info* pick = group[best];
    const int64_t take = std::min(pick->slots, left);
    plan.takes.push_back({pick->node, take});
    plan.waste += pick->free_gpus - take * gang.per_worker.gpus;
    plan.local += take * pick->local;
    left -= take;
    for (size_t level = 0; level < kLevels; ++level) {
      if (pick->domain[level]) chosen[level].insert(*pick->domain[level]);
    }
    desc.erase(std::find(desc.begin(), desc.end(), pick->slots));
    group.erase(group.begin() + static_cast<std::ptrdiff_t>(best));
  }
  return plan;
}

// For Pack, within one domain of `level` (kLevels: the whole cluster): nodes that share a smaller
// domain (zone, then rack, then clique) with the nodes chosen so far first, then the tighter.
Plan PackWithin(const Gang& gang, const std::vector<const Info*>& group, size_t k, size_t level) {
  return Greedy(gang, group, k, [level](const Info* a, const Info* b, const Chosen& chosen) {
    for (size_t l = level; l-- > 0;) {
      const bool ja = Joins(a, l, chosen), jb = Joins(b, l, chosen);
      if (ja != jb) return ja;
    }
    return Tighter(a, b);
  });
}

// For Spread: a node in a zone (then rack, then clique) none of the chosen nodes is in first.
Plan SpreadAcross(const Gang& gang, const std::vector<const Info*>& all, size_t k) {
  return Greedy(gang, all, k, [](const Info* a, const Info* b, const Chosen& chosen) {
    for (size_t l = kLevels; l-- > 0;) {
      const bool fa = a->domain[l] && !Joins(a, l, chosen);
      const bool fb = b->domain[l] && !Joins(b, l, chosen);
      if (fa != fb) return fa;
    }
    return Tighter(a, b);
  });
}

class DljobPolicy : public PlacementPolicy {
 public:
  explicit DljobPolicy(PlacementOptions options) : options_(std::move(options)) {}
  std::string_view Name() const override { return "dljob"; }

  Result<Placement> PlaceGang(const Gang& gang, const std::vector<Node>& nodes,
                              bool explain) const override {
    std::vector<Candidate> candidates = Candidates(gang, nodes);
    if (Room(candidates) < gang.workers) return Unplaceable(gang, nodes, explain);
    std::vector<Info> infos = Describe(gang, candidates);
    std::vector<const Info*> all;
    for (const Info& i : infos) all.push_back(&i);
    const size_t k = FewestNodes(all, gang.workers);
    if (gang.topology == Topology::kSpread) return Expand(SpreadAcross(gang, all, k).takes);
    // Pack: the first level (clique, rack, zone) with a domain that holds the gang on k nodes,
    // its best domain; else the whole cluster. One node is a domain of its own.
    for (size_t level = 0; k > 1 && level < kLevels; ++level) {
      std::map<std::string_view, std::vector<const Info*>> domains;
      for (const Info* i : all) {
        if (i->domain[level]) domains[*i->domain[level]].push_back(i);
      }
      std::optional<Plan> best;
      for (const auto& [name, group] : domains) {
        if (group.size() < k || FewestNodes(group, gang.workers) != k) continue;
        Plan plan = PackWithin(gang, group, k, level);
        if (!best || Better(plan, *best)) best = std::move(plan);
      }
      if (best) return Expand(best->takes);
    }
    return Expand(PackWithin(gang, all, k, kLevels).takes);
  }

 private:
  std::vector<Info> Describe(const Gang& gang, const std::vector<Candidate>& candidates) const {
    // Strings made once: a lookup by `const char*` would make one per node.
    const std::array<std::string, kLevels> keys = {kGpuCliqueLabel, options_.rack_label,
                                                   kZoneLabel};
    std::vector<Info> infos;
    infos.reserve(candidates.size());
    for (const Candidate& c : candidates) {
      Info i{c.node, c.slots, Free(*c.node).gpus, 0, {}};
      for (const std::string& d : gang.datasets) i.local += c.node->cached_datasets.count(d);
      for (size_t level = 0; level < keys.size(); ++level) {
        if (auto it = c.node->labels.find(keys[level]); it != c.node->labels.end())
          i.domain[level] = &it->second;
      }
      infos.push_back(i);
    }
    return infos;
  }

  const PlacementOptions options_;
};

}  // namespace

PlacementPolicyPtr NewDljobPolicy(const PlacementOptions& options) {
  return std::make_unique<DljobPolicy>(options);
}

}  // namespace dljob::scheduler
