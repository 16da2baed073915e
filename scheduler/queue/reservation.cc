#include "scheduler/queue/reservation.h"

#include <algorithm>

namespace dljob::scheduler {
namespace {

int64_t FreeOf(int64_t allocatable, int64_t used, bool gpus) {
  if (!gpus && allocatable == 0) return kUnboundedRoom;
  return std::max<int64_t>(0, allocatable - used);
}

// What is free on each scratch node once `placement` takes its share.
std::vector<Resources> Surplus(const NodeLedger& ledger, const std::vector<Node>& scratch,
                               const Gang& head, const Placement& placement) {
  std::vector<Resources> surplus;
  surplus.reserve(scratch.size());
  for (const Node& n : scratch) surplus.push_back(FreeResources(n));
  for (size_t i : ledger.Indices(placement)) {
    Resources& s = surplus[i];
    s.gpus -= head.per_worker.gpus;
    if (s.cpu_milli < kUnboundedRoom) s.cpu_milli -= head.per_worker.cpu_milli;
    if (s.memory_mib < kUnboundedRoom) s.memory_mib -= head.per_worker.memory_mib;
    if (s.pods < kUnboundedRoom) s.pods -= std::max<int64_t>(1, head.per_worker.pods);
  }
  return surplus;
}

}  // namespace

Resources FreeResources(const Node& node) {
  const Resources& a = node.allocatable;
  const Resources& u = node.used;
  return Resources{FreeOf(a.gpus, u.gpus, true), FreeOf(a.cpu_milli, u.cpu_milli, false),
                   FreeOf(a.memory_mib, u.memory_mib, false), FreeOf(a.pods, u.pods, false)};
}

ReservationPlan PlanReservation(const Gang& head, const NodeLedger& ledger,
                                const std::function<std::optional<RunningGang>()>& next_bounded,
                                const std::function<std::vector<RunningGang>()>& unbounded,
                                std::vector<Node>& scratch, const PlacementPolicy& policy) {
  ReservationPlan plan;
  ledger.CopyUsedTo(scratch);
  RoomBound room(ledger, scratch, ledger.ProductId(GangProduct(head)), head.per_worker.gpus);
  auto try_place = [&](bool last) -> bool {
    if (room.room() < head.workers && !last) return false;
    Result<Placement> p = policy.Place(head, scratch);
    if (!p.ok()) {
      plan.never_reason = p.status().message();
      return false;
    }
    plan.placement = std::move(p).value();
    plan.surplus = Surplus(ledger, scratch, head, plan.placement);
    plan.ever_fits = true;
    return true;
  };
  std::optional<RunningGang> next = next_bounded();
  while (next) {
    const int64_t end = *next->end;
    for (; next && *next->end == end; next = next_bounded()) {
      room.Apply(*next->gang, *next->nodes, -1, scratch);
    }
    if (try_place(false)) {
      plan.time = end;
      return plan;
    }
  }
  for (const RunningGang& job : unbounded()) room.Apply(*job.gang, *job.nodes, -1, scratch);
  if (try_place(true)) plan.never_reason.clear();
  return plan;
}

void MaskReserved(const NodeLedger& ledger, const std::vector<Resources>& surplus,
                  std::vector<Node>& masked, const std::vector<size_t>& nodes) {
  auto mask = [&](size_t i) {
    const Node& actual = ledger.nodes()[i];
    const Resources free = FreeResources(actual);
    const Resources& s = surplus[i];
    Resources& used = masked[i].used;
    used = actual.used;
    const Resources& a = actual.allocatable;
    used.gpus = a.gpus - std::max<int64_t>(0, std::min(free.gpus, s.gpus));
    if (a.cpu_milli > 0)
      used.cpu_milli = a.cpu_milli - std::max<int64_t>(0, std::min(free.cpu_milli, s.cpu_milli));
    if (a.memory_mib > 0)
      used.memory_mib =
          a.memory_mib - std::max<int64_t>(0, std::min(free.memory_mib, s.memory_mib));
    if (a.pods > 0) used.pods = a.pods - std::max<int64_t>(0, std::min(free.pods, s.pods));
  };
  if (nodes.empty()) {
    for (size_t i = 0; i < masked.size(); ++i) mask(i);
  } else {
    for (size_t i : nodes) mask(i);
  }
}

}  // namespace dljob::scheduler
