// Properties every placement policy must have, checked on thousands of random clusters and gangs
// (fixed seeds): it never over-commits a resource, never places part of a gang, puts every worker
// on a node that can take it, answers the same when asked twice or given the nodes in another
// order, and says "does not fit" exactly when a brute-force search finds no placement. The dljob
// policy also uses the fewest nodes any placement can and, for Pack, keeps the gang in one clique
// (else rack, else zone) whenever one can hold it on that few nodes.
#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "scheduler/feasibility.h"
#include "scheduler/placement_policy.h"

namespace dljob::scheduler {
namespace {

constexpr int kClusters = 5000;

class Random {
 public:
  explicit Random(uint64_t seed) : rng_(seed) {}
  int64_t Int(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Int(0, static_cast<int64_t>(v.size()) - 1))];
  }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

std::vector<Node> RandomCluster(Random& r, int64_t max_nodes) {
  const int64_t n = r.Int(1, max_nodes);
  std::vector<Node> nodes;
  for (int64_t i = 0; i < n; ++i) {
    Node node;
    node.name = "node-" + std::to_string(i);
    node.allocatable.gpus = r.Pick<int64_t>({0, 2, 4, 8, 8, 8, 16});
    node.used.gpus = r.Chance(0.05) ? node.allocatable.gpus + 1  // over-committed already
                                    : r.Int(0, node.allocatable.gpus);
    if (r.Chance(0.5)) {
      node.allocatable.cpu_milli = r.Int(1, 64) * 1000;
      node.used.cpu_milli = r.Int(0, node.allocatable.cpu_milli);
    }
    if (r.Chance(0.5)) {
      node.allocatable.memory_mib = r.Int(1, 512) * 1024;
      node.used.memory_mib = r.Int(0, node.allocatable.memory_mib);
    }
    if (r.Chance(0.3)) {
      node.allocatable.pods = r.Int(1, 8);
      node.used.pods = r.Int(0, node.allocatable.pods);
    }
    if (r.Chance(0.7)) node.labels[kZoneLabel] = "z" + std::to_string(r.Int(0, 2));
    if (r.Chance(0.7)) node.labels[kDefaultRackLabel] = "r" + std::to_string(r.Int(0, 3));
    if (r.Chance(0.6)) node.labels[kGpuCliqueLabel] = "c" + std::to_string(r.Int(0, 4));
    if (r.Chance(0.6)) node.labels[kGpuProductLabel] = r.Pick<std::string>({"A100", "H100"});
    if (r.Chance(0.4)) node.labels["tier"] = std::to_string(r.Int(0, 3));
    if (r.Chance(0.15))
      node.taints.push_back({"dedicated", r.Pick<std::string>({"a", "b"}), "NoSchedule"});
    if (r.Chance(0.1)) node.taints.push_back({"soft", "x", "PreferNoSchedule"});
    node.schedulable = !r.Chance(0.1);
    if (r.Chance(0.3)) node.cached_datasets.insert(r.Pick<std::string>({"d0", "d1"}));
    nodes.push_back(std::move(node));
  }
  return nodes;
}

Gang RandomGang(Random& r, int64_t max_workers) {
  Gang g;
  g.job = "ns/j";
  g.workers = r.Int(1, max_workers);
  g.per_worker = {r.Pick<int64_t>({0, 1, 2, 4, 8, 8}), 0, 0, 1};
  if (r.Chance(0.4)) g.per_worker.cpu_milli = r.Int(1, 16) * 500;
  if (r.Chance(0.4)) g.per_worker.memory_mib = r.Int(1, 64) * 1024;
  if (r.Chance(0.3)) {
    g.gpu_model = r.Pick<std::string>({"A100", "H100"});
    g.node_selector[kGpuProductLabel] = g.gpu_model;
  }
  if (r.Chance(0.2)) {
    g.required_affinity.push_back(
        {{{"tier",
           r.Pick<std::string>({"Gt", "Lt", "In", "NotIn", "Exists", "DoesNotExist"}),
           {std::to_string(r.Int(0, 3))}}}});
  }
  if (r.Chance(0.3)) g.tolerations.push_back({"dedicated", "Equal", "a", "NoSchedule", {}});
  g.topology = r.Pick<Topology>({Topology::kAny, Topology::kPack, Topology::kSpread});
  if (r.Chance(0.5)) g.datasets.push_back(r.Pick<std::string>({"d0", "d1"}));
  return g;
}

// Workers of the gang the node can take, by adding one at a time and checking every resource:
// written independently of feasibility.h's Slots.
int64_t Capacity(const Gang& g, const Node& n) {
  if (!Eligible(g, n)) return 0;
  int64_t k = 0;
  auto fits = [&](int64_t alloc, int64_t used, int64_t asked, bool accounted) {
    return !accounted || asked == 0 || used + (k + 1) * asked <= alloc;
  };
  while (k < g.workers && fits(n.allocatable.gpus, n.used.gpus, g.per_worker.gpus, true) &&
         fits(n.allocatable.cpu_milli, n.used.cpu_milli, g.per_worker.cpu_milli,
              n.allocatable.cpu_milli > 0) &&
         fits(n.allocatable.memory_mib, n.used.memory_mib, g.per_worker.memory_mib,
              n.allocatable.memory_mib > 0) &&
         fits(n.allocatable.pods, n.used.pods, g.per_worker.pods, n.allocatable.pods > 0)) {
    ++k;
  }
  return k;
}

// Brute force: every multiset of nodes for the workers (nodes in index order), by depth-first
// search. Returns the fewest distinct nodes of any placement, or -1 when there is none.
int64_t FewestNodesByBruteForce(const Gang& g, const std::vector<Node>& nodes) {
  std::vector<int64_t> cap;
  for (const Node& n : nodes) cap.push_back(Capacity(g, n));
  int64_t best = -1;
  std::vector<int64_t> count(nodes.size(), 0);
  auto dfs = [&](auto& self, size_t from, int64_t left, int64_t used_nodes) -> void {
    if (left == 0) {
      if (best < 0 || used_nodes < best) best = used_nodes;
      return;
    }
    for (size_t i = from; i < nodes.size(); ++i) {
      if (count[i] >= cap[i]) continue;
      ++count[i];
      self(self, i, left - 1, used_nodes + (count[i] == 1 ? 1 : 0));
      --count[i];
    }
  };
  dfs(dfs, 0, g.workers, 0);
  return best;
}

void CheckPlacement(const PlacementPolicy& policy, const Gang& g, const std::vector<Node>& nodes,
                    const Placement& p, const std::string& where) {
  ASSERT_EQ(static_cast<int64_t>(p.worker_nodes.size()), g.workers) << where;
  std::map<std::string, int64_t> per_node;
  for (const std::string& name : p.worker_nodes) ++per_node[name];
  for (const auto& entry : per_node) {
    // Named copies, not a structured binding: clang 14 cannot capture those in a lambda.
    const std::string& name = entry.first;
    const int64_t workers = entry.second;
    auto it =
        std::find_if(nodes.begin(), nodes.end(), [&](const Node& n) { return n.name == name; });
    ASSERT_NE(it, nodes.end()) << where << ": no node " << name;
    const Node& n = *it;
    EXPECT_TRUE(Eligible(g, n)) << where << ": " << name << " cannot take the gang";
    auto within = [&](int64_t alloc, int64_t used, int64_t asked, bool accounted) {
      return !accounted || asked == 0 || used + workers * asked <= alloc;
    };
    EXPECT_TRUE(within(n.allocatable.gpus, n.used.gpus, g.per_worker.gpus, true)) << where << name;
    EXPECT_TRUE(within(n.allocatable.cpu_milli, n.used.cpu_milli, g.per_worker.cpu_milli,
                       n.allocatable.cpu_milli > 0))
        << where << name;
    EXPECT_TRUE(within(n.allocatable.memory_mib, n.used.memory_mib, g.per_worker.memory_mib,
                       n.allocatable.memory_mib > 0))
        << where << name;
    EXPECT_TRUE(within(n.allocatable.pods, n.used.pods, g.per_worker.pods, n.allocatable.pods > 0))
        << where << name;
  }
  // A node's workers are consecutive ranks.
  std::set<std::string> seen;
  for (size_t i = 0; i < p.worker_nodes.size(); ++i) {
    if (i > 0 && p.worker_nodes[i] == p.worker_nodes[i - 1]) continue;
    EXPECT_TRUE(seen.insert(p.worker_nodes[i]).second) << where << ": " << policy.Name();
  }
}

// For Pack: the first level (clique, rack, zone) at which some domain alone holds the gang on
// `fewest` nodes, by brute force; "" when none does (or one node suffices: a node is a domain).
std::string PackLevel(const Gang& g, const std::vector<Node>& nodes, int64_t fewest) {
  if (fewest <= 1) return "";
  for (const char* key : {kGpuCliqueLabel, kDefaultRackLabel, kZoneLabel}) {
    std::map<std::string, std::vector<Node>> domains;
    for (const Node& n : nodes) {
      if (auto it = n.labels.find(key); it != n.labels.end()) domains[it->second].push_back(n);
    }
    for (const auto& [value, members] : domains) {
      if (FewestNodesByBruteForce(g, members) == fewest) return key;
    }
  }
  return "";
}

class PlacementProperties : public ::testing::TestWithParam<std::string_view> {};

TEST_P(PlacementProperties, OnRandomClusters) {
  Result<PlacementPolicyPtr> made = MakePlacementPolicy(GetParam());
  ASSERT_TRUE(made.ok());
  const PlacementPolicy& policy = **made;
  Random r(20261124);
  int placed = 0, refused = 0, packed = 0;
  for (int cluster = 0; cluster < kClusters; ++cluster) {
    const bool small = cluster % 4 != 0;  // brute force on small ones; larger ones too
    std::vector<Node> nodes = RandomCluster(r, small ? 8 : 60);
    Gang g = RandomGang(r, small ? 6 : 24);
    const std::string where = std::string(GetParam()) + " cluster " + std::to_string(cluster);
    Result<Placement> p = policy.Place(g, nodes);
    Result<Placement> again = policy.Place(g, nodes);
    std::vector<Node> shuffled = nodes;
    std::shuffle(shuffled.begin(), shuffled.end(), r.rng());
    Result<Placement> reordered = policy.Place(g, shuffled);
    ASSERT_EQ(p.ok(), again.ok()) << where;
    ASSERT_EQ(p.ok(), reordered.ok()) << where;
    int64_t room = 0;
    for (const Node& n : nodes) room += Capacity(g, n);
    if (!p.ok()) {
      ++refused;
      EXPECT_EQ(p.status().code(), StatusCode::kFailedPrecondition) << where;
      EXPECT_EQ(p.status().message(), reordered.status().message()) << where;
      EXPECT_LT(room, g.workers) << where << ": refused a gang that fits: " << p.status().message();
      if (small) {
        EXPECT_EQ(FewestNodesByBruteForce(g, nodes), -1) << where;
      }
      continue;
    }
    ++placed;
    EXPECT_GE(room, g.workers) << where;
    EXPECT_EQ(*p, *again) << where;
    EXPECT_EQ(*p, *reordered) << where;
    CheckPlacement(policy, g, nodes, *p, where);
    if (small && policy.Name() == "dljob") {
      std::set<std::string> used(p->worker_nodes.begin(), p->worker_nodes.end());
      const int64_t fewest = FewestNodesByBruteForce(g, nodes);
      EXPECT_EQ(static_cast<int64_t>(used.size()), fewest) << where;
      const std::string level = PackLevel(g, nodes, fewest);
      if (g.topology != Topology::kSpread && !level.empty()) {
        ++packed;
        std::set<std::string> domains;
        for (const Node& n : nodes) {
          if (used.count(n.name)) domains.insert(n.labels.count(level) ? n.labels.at(level) : "-");
        }
        EXPECT_EQ(domains.size(), 1u) << where << ": spans " << domains.size() << " " << level;
      }
    }
  }
  // The generator must exercise both outcomes, or the test proves little.
  EXPECT_GT(placed, kClusters / 5);
  EXPECT_GT(refused, kClusters / 5);
  if (policy.Name() == "dljob") {
    EXPECT_GT(packed, 20);  // 32 with this seed
  }
}

INSTANTIATE_TEST_SUITE_P(EveryPolicy, PlacementProperties,
                         ::testing::ValuesIn(PlacementPolicyNames()), [](const auto& info) {
                           std::string name(info.param);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace dljob::scheduler
