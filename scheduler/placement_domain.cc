#include "scheduler/placement_domain.h"

#include <array>
#include <set>

namespace dljob::scheduler {
namespace {

constexpr size_t kDomainLevels = 3;  // clique, rack, zone
constexpr std::array<const char*, kDomainLevels> kDomainNames = {"clique", "rack", "zone"};
constexpr std::array<const char*, kDomainLevels> kDomainPlurals = {"cliques", "racks", "zones"};

// The values of one level's label over `nodes`; "" for a node without it.
std::set<std::string> DomainValuesAt(const std::vector<Node>& nodes, const std::string& key) {
  std::set<std::string> values;
  for (const Node& n : nodes) {
    auto it = n.labels.find(key);
    values.insert(it == n.labels.end() ? "" : it->second);
  }
  return values;
}

std::string JoinedValues(const std::set<std::string>& values) {
  std::string out;
  for (const std::string& v : values) out += (out.empty() ? "" : ", ") + v;
  return out;
}

}  // namespace

std::string DescribePlacementDomain(const std::vector<Node>& nodes, std::string_view rack_label) {
  if (nodes.empty()) return "";
  const std::array<std::string, kDomainLevels> keys = {kGpuCliqueLabel, std::string(rack_label),
                                                       kZoneLabel};
  std::array<std::set<std::string>, kDomainLevels> values;
  for (size_t level = 0; level < kDomainLevels; ++level)
    values[level] = DomainValuesAt(nodes, keys[level]);
  auto shared = [&](size_t level) {
    return values[level].size() == 1 && !values[level].begin()->empty();
  };

  size_t tightest = 0;  // the first level every node shares a value of; kDomainLevels: none
  while (tightest < kDomainLevels && !shared(tightest)) ++tightest;
  std::string out = nodes.size() == 1 ? nodes[0].name : std::to_string(nodes.size()) + " nodes";
  if (tightest == kDomainLevels) {
    return nodes.size() == 1 ? out : out + " in no one clique, rack or zone";
  }
  if (nodes.size() > 1)
    out += " of " + std::string(kDomainNames[tightest]) + " " + *values[tightest].begin();
  // What the domain spans below its level (several values), and the levels above it (one each).
  std::vector<std::string> parts;
  for (size_t level = 0; level < kDomainLevels; ++level) {
    if (level == tightest && nodes.size() > 1) continue;
    if (level < tightest) {
      values[level].erase("");
      if (!values[level].empty())
        parts.push_back(std::string(kDomainPlurals[level]) + " " + JoinedValues(values[level]));
    } else if (shared(level)) {
      parts.push_back(std::string(kDomainNames[level]) + " " + *values[level].begin());
    }
  }
  if (parts.empty()) return out;
  std::string detail;
  for (size_t i = 0; i < parts.size(); ++i) {
    // Below-level lists hold commas, so they end with "; ".
    const bool list_before = i > 0 && parts[i - 1].find(", ") != std::string::npos;
    detail += (i == 0 ? "" : list_before ? "; " : ", ") + parts[i];
  }
  return out + " (" + detail + ")";
}

}  // namespace dljob::scheduler
