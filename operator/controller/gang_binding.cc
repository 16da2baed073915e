#include "operator/controller/gang_binding.h"

#include "operator/controller/store.h"

namespace dljob::controller {
namespace {

std::string NodeOf(const Json& pod) {
  auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return "";
  auto node = spec->find("nodeName");
  return node != spec->end() && node->is_string() ? node->get<std::string>() : "";
}

}  // namespace

Result<GangOutcome> BindGang(kube::Api& api, GpuLedger& ledger, const DLJob& job,
                             std::vector<Json>& workers) {
  std::vector<Json*> unbound;
  std::vector<PodClaim> claims;
  for (Json& w : workers) {
    if (!NodeOf(w).empty()) continue;
    unbound.push_back(&w);
    claims.push_back({ObjectKey(w), w["metadata"].value("uid", "")});
  }
  if (unbound.empty()) return GangOutcome{true, ""};
  const std::string& ns = job.metadata.namespace_;
  Result<std::vector<Seat>> seats =
      ledger.PlaceAndAssume(ObjectKey(ns, job.metadata.name), job, claims);
  if (!seats.ok()) return GangOutcome{false, seats.status().message()};
  for (size_t i = 0; i < unbound.size(); ++i) {
    const Seat& seat = (*seats)[i];
    if (seat.fresh) {
      std::string name = (*unbound[i])["metadata"].value("name", "");
      kube::ApiResult<Json> bound = api.Bind(ns, name, seat.node);
      // 409: bound already (an earlier pass whose binding the ledger has not seen yet).
      if (!bound.ok() && !bound.error().IsConflict()) {
        std::vector<PodClaim> rest;
        for (size_t j = i; j < unbound.size(); ++j) {
          if ((*seats)[j].fresh) rest.push_back(claims[j]);
        }
        ledger.Forget(rest);
        return bound.error().ToStatus().WithContext("binding pod " + ns + "/" + name + " to node " +
                                                    seat.node);
      }
    }
    (*unbound[i])["spec"]["nodeName"] = seat.node;
  }
  return GangOutcome{true, ""};
}

}  // namespace dljob::controller
