// See self_budget.h.
#include "operator/app/self_budget.h"

#include <cctype>

namespace dljob::op {
namespace {

using kube::Json;

constexpr int kBudgetAttempts = 5;

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// minAvailable as the API takes it: an integer for a count, a string for a percentage.
Json MinAvailableValue(const std::string& value) {
  if (value.back() == '%') return value;
  return std::stoi(value);
}

// Whether `stored` is the budget `want` describes: the same spec, and owned by the same
// Deployment (so a budget left by an earlier Deployment of the same name is taken over).
bool Same(const Json& stored, const Json& want) {
  return stored.value("spec", Json::object()) == want["spec"] &&
         stored["metadata"].value("ownerReferences", Json::array()) ==
             want["metadata"]["ownerReferences"];
}

bool OwnedBy(const Json& budget, const std::string& uid) {
  for (const Json& ref : budget["metadata"].value("ownerReferences", Json::array())) {
    if (ref.value("kind", "") == "Deployment" && ref.value("uid", "") == uid) return true;
  }
  return false;
}

}  // namespace

std::string MinAvailableError(const std::string& value) {
  const bool percent = !value.empty() && value.back() == '%';
  const std::string digits = percent ? value.substr(0, value.size() - 1) : value;
  if (!AllDigits(digits) || digits.size() > 6) {
    return "'" + value + "' is neither a count of pods (1, 2, …) nor a percentage (50%)";
  }
  const int n = std::stoi(digits);
  if (n < 1) return "'" + value + "' keeps no pod up; set at least 1 (or 1%)";
  if (percent && n > 100) return "'" + value + "' is more than 100%";
  return "";
}

std::optional<Json> SelfBudget(const Json& deployment, const kube::Resource& version,
                               const std::string& min_available) {
  const Json& meta = deployment["metadata"];
  const Json& spec = deployment["spec"];
  if (spec.value("replicas", 1) < 2) return std::nullopt;
  Json budget = {{"apiVersion", version.ApiVersion()},
                 {"kind", version.kind},
                 {"metadata",
                  {{"name", meta.value("name", "")},
                   {"namespace", meta.value("namespace", "")},
                   {"ownerReferences", Json::array({{{"apiVersion", "apps/v1"},
                                                     {"kind", "Deployment"},
                                                     {"name", meta.value("name", "")},
                                                     {"uid", meta.value("uid", "")},
                                                     {"controller", true}}})}}},
                 {"spec",
                  {{"minAvailable", MinAvailableValue(min_available)},
                   {"selector", spec.value("selector", Json::object())}}}};
  if (meta.contains("labels")) budget["metadata"]["labels"] = meta["labels"];
  return budget;
}

Status EnsureSelfBudget(kube::Api& api, const SelfBudgetOptions& options,
                        const kube::Resource& version) {
  const std::string& ns = options.namespace_;
  const std::string where = "PodDisruptionBudget " + ns + "/" + options.deployment;
  for (int attempt = 0; attempt < kBudgetAttempts; ++attempt) {
    kube::ApiResult<Json> deployment =
        api.Get(kube::resources::kDeployments, ns, options.deployment);
    if (!deployment.ok()) {
      return deployment.error().ToStatus().WithContext("reading Deployment " + ns + "/" +
                                                       options.deployment);
    }
    std::optional<Json> want = SelfBudget(*deployment, version, options.min_available);
    kube::ApiResult<Json> stored = api.Get(version, ns, options.deployment);
    if (!stored.ok() && !stored.error().IsNotFound()) {
      return stored.error().ToStatus().WithContext("reading " + where);
    }
    kube::ApiResult<Json> written = Json();
    if (!want) {
      const std::string uid = (*deployment)["metadata"].value("uid", "");
      if (!stored.ok() || !OwnedBy(*stored, uid)) return Status::Ok();
      kube::DeleteOptions o;
      o.precondition_uid = (*stored)["metadata"].value("uid", "");
      written = api.Delete(version, ns, options.deployment, o);
      if (!written.ok() && written.error().IsNotFound()) return Status::Ok();
    } else if (!stored.ok()) {
      written = api.Create(version, ns, *want);
    } else if (Same(*stored, *want)) {
      return Status::Ok();
    } else {
      Json replaced = *stored;
      replaced["spec"] = (*want)["spec"];
      replaced["metadata"]["ownerReferences"] = (*want)["metadata"]["ownerReferences"];
      written = api.Replace(version, ns, replaced);
    }
    if (written.ok()) return Status::Ok();
    // Another replica wrote it first: read again.
    if (written.error().IsAlreadyExists() || written.error().IsConflict()) continue;
    return written.error().ToStatus().WithContext("writing " + where);
  }
  return Status::Unavailable(where + " kept changing under this replica (" +
                             std::to_string(kBudgetAttempts) + " attempts)");
}

}  // namespace dljob::op
