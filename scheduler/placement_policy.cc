#include "scheduler/placement_policy.h"

#include <array>

#include "scheduler/best_fit.h"
#include "scheduler/dljob_policy.h"
#include "scheduler/first_fit.h"
#include "scheduler/spread.h"

namespace dljob::scheduler {
namespace {

struct Entry {
  std::string_view name;
  PlacementPolicyPtr (*make)(const PlacementOptions&);
};

constexpr std::array<Entry, 4> kPolicies = {{
    {"first-fit", [](const PlacementOptions&) { return NewFirstFitPolicy(); }},
    {"spread", [](const PlacementOptions&) { return NewSpreadPolicy(); }},
    {"best-fit", [](const PlacementOptions&) { return NewBestFitPolicy(); }},
    {"dljob", [](const PlacementOptions& o) { return NewDljobPolicy(o); }},
}};

}  // namespace

std::optional<Placement> PlacementPolicy::TryPlace(const Gang& gang,
                                                   const std::vector<Node>& nodes) const {
  Result<Placement> p = PlaceGang(gang, nodes, /*explain=*/false);
  if (!p.ok()) return std::nullopt;
  return std::move(p).value();
}

Result<PlacementPolicyPtr> MakePlacementPolicy(std::string_view name,
                                               const PlacementOptions& options) {
  for (const Entry& e : kPolicies) {
    if (e.name == name) return e.make(options);
  }
  std::string known;
  for (const Entry& e : kPolicies) known += (known.empty() ? "" : ", ") + std::string(e.name);
  return Status::InvalidArgument("unknown placement policy \"" + std::string(name) +
                                 "\"; known: " + known);
}

std::vector<std::string_view> PlacementPolicyNames() {
  std::vector<std::string_view> names;
  for (const Entry& e : kPolicies) names.push_back(e.name);
  return names;
}

}  // namespace dljob::scheduler
