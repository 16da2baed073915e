#include "scheduler/feasibility.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>
#include <utility>

namespace dljob::scheduler {
namespace {

bool Tolerates(const Toleration& t, const Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (t.key.empty()) return t.operator_ == "Exists";  // an empty key with Exists tolerates all
  if (t.key != taint.key) return false;
  return t.operator_ == "Exists" || t.value == taint.value;
}

std::optional<int64_t> Integer(const std::string& s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// The resources a node accounts for: GPUs always, the others when it reports an allocatable.
struct Accounted {
  bool cpu, memory, pods;
};
Accounted AccountedOf(const Node& n) {
  return {n.allocatable.cpu_milli > 0, n.allocatable.memory_mib > 0, n.allocatable.pods > 0};
}

int64_t Limit(int64_t slots, int64_t allocatable, int64_t used, int64_t asked) {
  if (asked <= 0) return slots;
  return std::min(slots, std::max<int64_t>(0, allocatable - used) / asked);
}

std::string Plural(int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "8 GPUs", "8 GPUs + 16 CPU + 128Gi memory": what one worker asks for.
std::string Demand(const Resources& r) {
  std::string s = Plural(r.gpus, "GPU", "GPUs");
  if (r.cpu_milli > 0) {
    s += " + " +
         (r.cpu_milli % 1000 == 0 ? std::to_string(r.cpu_milli / 1000)
                                  : std::to_string(r.cpu_milli) + "m") +
         " CPU";
  }
  if (r.memory_mib > 0) {
    s += " + " +
         (r.memory_mib % 1024 == 0 ? std::to_string(r.memory_mib / 1024) + "Gi"
                                   : std::to_string(r.memory_mib) + "Mi") +
         " memory";
  }
  return s;
}

// Why nodes cannot take one worker, counted without building a string per node: the fixed
// reasons under their literals, the taints under the nodes' own key and value (the nodes outlive
// the count). Spelled out once, by Spelled(): a gang that fits nowhere on a large cluster is
// checked against every node, for every waiting job, on every queue pass.
struct ReasonCounts {
  std::map<std::string_view, int64_t> fixed;
  std::map<std::pair<std::string_view, std::string_view>, int64_t> taints;

  // In kube-scheduler's words: "node(s) had untolerated taint {key: value}".
  std::map<std::string, int64_t> Spelled() const {
    std::map<std::string, int64_t> out;
    for (const auto& [why, n] : fixed) out[std::string(why)] += n;
    for (const auto& [taint, n] : taints) {
      out["node(s) had untolerated taint {" + std::string(taint.first) + ": " +
          std::string(taint.second) + "}"] += n;
    }
    return out;
  }
};

// What a node is to a gang: not Eligible() at all, eligible but short of room for one worker,
// or able to take one.
enum class NodeFit { kIneligible, kShort, kFits };

// Counts each reason the node cannot take one worker, in kube-scheduler's words (a node short of
// several resources counts once under each, as kube-scheduler counts it). The first four checks
// are Eligible()'s, so the answer also says whether the node is eligible.
NodeFit CountReasons(const Gang& gang, const Node& n, ReasonCounts& out) {
  if (!n.schedulable) {
    ++out.fixed["node(s) were unschedulable"];
    return NodeFit::kIneligible;
  }
  if (!MatchesNodeSelector(gang.node_selector, n.labels)) {
    ++out.fixed["node(s) didn't match node selector"];
    return NodeFit::kIneligible;
  }
  if (!MatchesNodeAffinity(gang.required_affinity, n.labels)) {
    ++out.fixed["node(s) didn't match node affinity"];
    return NodeFit::kIneligible;
  }
  if (const Taint* t = FirstUntoleratedTaint(gang.tolerations, n.taints)) {
    ++out.taints[{t->key, t->value}];
    return NodeFit::kIneligible;
  }
  const Resources& w = gang.per_worker;
  const Accounted a = AccountedOf(n);
  bool short_of_any = false;
  auto check = [&](bool accounted, int64_t alloc, int64_t used, int64_t asked, const char* why) {
    if (accounted && Limit(1, alloc, used, asked) < 1) {
      ++out.fixed[why];
      short_of_any = true;
    }
  };
  check(true, n.allocatable.gpus, n.used.gpus, w.gpus, "Insufficient nvidia.com/gpu");
  check(a.cpu, n.allocatable.cpu_milli, n.used.cpu_milli, w.cpu_milli, "Insufficient cpu");
  check(a.memory, n.allocatable.memory_mib, n.used.memory_mib, w.memory_mib, "Insufficient memory");
  check(a.pods, n.allocatable.pods, n.used.pods, w.pods, "Too many pods");
  return short_of_any ? NodeFit::kShort : NodeFit::kFits;
}

}  // namespace

const Taint* FirstUntoleratedTaint(const std::vector<Toleration>& tolerations,
                                   const std::vector<Taint>& taints) {
  for (const Taint& taint : taints) {
    if (taint.effect == "PreferNoSchedule") continue;
    bool tolerated = std::any_of(tolerations.begin(), tolerations.end(),
                                 [&](const Toleration& t) { return Tolerates(t, taint); });
    if (!tolerated) return &taint;
  }
  return nullptr;
}

bool ToleratesTaints(const std::vector<Toleration>& tolerations, const std::vector<Taint>& taints) {
  return FirstUntoleratedTaint(tolerations, taints) == nullptr;
}

bool MatchesNodeSelector(const std::map<std::string, std::string>& selector,
                         const std::map<std::string, std::string>& labels) {
  for (const auto& [k, v] : selector) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return true;
}

bool MatchesRequirement(const NodeSelectorRequirement& r,
                        const std::map<std::string, std::string>& labels) {
  auto it = labels.find(r.key);
  const bool present = it != labels.end();
  const std::string& op = r.operator_;
  auto listed = [&] {
    return present && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
  };
  if (op == "In") return listed();
  if (op == "NotIn") return !listed();
  if (op == "Exists") return present;
  if (op == "DoesNotExist") return !present;
  if (op == "Gt" || op == "Lt") {
    if (!present || r.values.size() != 1) return false;
    std::optional<int64_t> label = Integer(it->second), bound = Integer(r.values[0]);
    if (!label || !bound) return false;
    return op == "Gt" ? *label > *bound : *label < *bound;
  }
  return false;
}

bool MatchesNodeAffinity(const std::vector<NodeSelectorTerm>& terms,
                         const std::map<std::string, std::string>& labels) {
  if (terms.empty()) return true;
  return std::any_of(terms.begin(), terms.end(), [&](const NodeSelectorTerm& term) {
    return !term.match_expressions.empty() &&
           std::all_of(
               term.match_expressions.begin(), term.match_expressions.end(),
               [&](const NodeSelectorRequirement& r) { return MatchesRequirement(r, labels); });
  });
}

Resources Free(const Node& n) {
  auto free = [](int64_t a, int64_t u) { return std::max<int64_t>(0, a - u); };
  return {free(n.allocatable.gpus, n.used.gpus), free(n.allocatable.cpu_milli, n.used.cpu_milli),
          free(n.allocatable.memory_mib, n.used.memory_mib), free(n.allocatable.pods, n.used.pods)};
}

int64_t SlotsAfter(const Node& n, const Resources& w, int64_t placed, int64_t cap) {
  const Accounted a = AccountedOf(n);
  int64_t slots = cap + placed;  // counted before the placed ones are taken off
  slots = Limit(slots, n.allocatable.gpus, n.used.gpus, w.gpus);
  if (a.cpu) slots = Limit(slots, n.allocatable.cpu_milli, n.used.cpu_milli, w.cpu_milli);
  if (a.memory) slots = Limit(slots, n.allocatable.memory_mib, n.used.memory_mib, w.memory_mib);
  if (a.pods) slots = Limit(slots, n.allocatable.pods, n.used.pods, w.pods);
  return std::clamp<int64_t>(slots - placed, 0, cap);
}

int64_t Slots(const Node& n, const Resources& per_worker, int64_t cap) {
  return SlotsAfter(n, per_worker, 0, cap);
}

bool Eligible(const Gang& gang, const Node& n) {
  return n.schedulable && MatchesNodeSelector(gang.node_selector, n.labels) &&
         MatchesNodeAffinity(gang.required_affinity, n.labels) &&
         ToleratesTaints(gang.tolerations, n.taints);
}

std::vector<Candidate> Candidates(const Gang& gang, const std::vector<Node>& nodes) {
  std::vector<Candidate> out;
  if (gang.workers <= 0) return out;
  for (const Node& n : nodes) {
    if (!Eligible(gang, n)) continue;
    if (int64_t slots = Slots(n, gang.per_worker, gang.workers); slots > 0)
      out.push_back({&n, slots});
  }
  std::sort(out.begin(), out.end(),
            [](const Candidate& a, const Candidate& b) { return a.node->name < b.node->name; });
  return out;
}

int64_t Room(const std::vector<Candidate>& candidates) {
  int64_t room = 0;
  for (const Candidate& c : candidates) room += c.slots;
  return room;
}

Status Unplaceable(const Gang& gang, const std::vector<Node>& nodes, bool explain) {
  if (!explain) return Status::FailedPrecondition("the gang does not fit");
  return Unplaceable(gang, nodes);
}

Status Unplaceable(const Gang& gang, const std::vector<Node>& nodes) {
  ReasonCounts counts;
  int64_t eligible = 0, free_gpus = 0, largest = 0, available = 0, room = 0;
  for (const Node& n : nodes) {
    const NodeFit fit = CountReasons(gang, n, counts);  // Eligible() unless kIneligible
    if (fit != NodeFit::kIneligible) {
      ++eligible;
      const int64_t gpus = Free(n).gpus;
      free_gpus += gpus;
      largest = std::max(largest, gpus);
    }
    if (fit == NodeFit::kFits) {
      ++available;
      room += Slots(n, gang.per_worker, std::max<int64_t>(gang.workers, 1));
    }
  }
  const std::map<std::string, int64_t> reasons = counts.Spelled();
  std::vector<std::pair<std::string, int64_t>> sorted(reasons.begin(), reasons.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string msg = "needs " + Plural(gang.workers, "worker", "workers") + " × " +
                    Demand(gang.per_worker) +
                    (gang.gpu_model.empty() ? "" : " (" + gang.gpu_model + ")") + ", room for " +
                    std::to_string(room) + ": " + Plural(free_gpus, "free GPU", "free GPUs") +
                    " on " + Plural(eligible, "eligible node", "eligible nodes") + ", largest " +
                    std::to_string(largest) + "; " + std::to_string(available) + "/" +
                    std::to_string(nodes.size()) + " nodes are available";
  for (size_t i = 0; i < sorted.size(); ++i) {
    msg += (i == 0 ? ": " : ", ") + std::to_string(sorted[i].second) + " " + sorted[i].first;
  }
  return Status::FailedPrecondition(msg);
}

}  // namespace dljob::scheduler
