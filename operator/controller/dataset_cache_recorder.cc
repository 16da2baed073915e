#include "operator/controller/dataset_cache_recorder.h"

#include <algorithm>
#include <string>
#include <vector>

#include "base/json_fields.h"
#include "operator/controller/dataset_cache.h"

namespace dljob::controller {

using Json = nlohmann::json;

namespace {

using Json = nlohmann::json;

constexpr int kAttempts = 3;

bool Contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

}  // namespace

Status RecordWarmCaches(kube::Api& api, const kube::Store& nodes, const Json* old_pod,
                        const Json& pod) {
  std::vector<std::string> warm = old_pod ? NewlyWarmSources(*old_pod, pod) : WarmSources(pod);
  const std::string node = StringAt(FieldOf(pod, "spec"), "nodeName");
  if (!old_pod) {
    std::optional<Json> cached = nodes.Get(node);
    const std::vector<std::string> known =
        cached ? CachedDatasetsOf(*cached) : std::vector<std::string>();
    std::erase_if(warm, [&](const std::string& s) { return Contains(known, s); });
  }
  if (warm.empty()) return Status::Ok();
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    kube::ApiResult<Json> current = api.Get(kube::resources::kNodes, "", node);
    if (!current.ok()) {
      if (current.error().IsNotFound()) return Status::Ok();
      return current.error().ToStatus().WithContext("reading node " + node);
    }
    const std::vector<std::string> known = CachedDatasetsOf(*current);
    const std::vector<std::string> next = TouchCachedDatasets(known, warm);
    if (next == known) return Status::Ok();
    kube::ApiResult<Json> patched =
        api.MergePatch(kube::resources::kNodes, "", node,
                       CachedDatasetsPatch(next, kube::ResourceVersionOf(*current)));
    if (patched.ok()) return Status::Ok();
    if (patched.error().IsNotFound()) return Status::Ok();
    if (!patched.error().IsConflict()) {
      return patched.error().ToStatus().WithContext("recording cached datasets on node " + node);
    }
  }
  return Status::Unavailable("recording cached datasets on node " + node + ": " +
                             std::to_string(kAttempts) + " conflicting updates in a row");
}

}  // namespace dljob::controller
