#include "operator/controller/dataset_cache.h"

#include <algorithm>
#include <set>

#include "base/json_fields.h"
#include "operator/controller/volumes.h"

namespace dljob::controller {
namespace {

using Json = nlohmann::json;

// Never throws: bytes that are not UTF-8 are written as U+FFFD.
std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// Whether an init container status says it ran to completion: terminated, exit code 0.
bool Completed(const Json& status) {
  const Json& code = FieldOf(FieldOf(FieldOf(status, "state"), "terminated"), "exitCode");
  return code.is_number_integer() && code.get<int64_t>() == 0;
}

// `sources` in order without duplicates or over-long entries, cut to kMaxCachedDatasets entries
// and to kMaxCachedDatasetsBytes of encoded JSON.
std::vector<std::string> Bounded(const std::vector<std::string>& sources) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  size_t bytes = 2;  // "[" and "]"
  for (const std::string& s : sources) {
    if (out.size() == kMaxCachedDatasets) break;
    if (s.empty() || s.size() > kMaxSourceBytes || !seen.insert(s).second) continue;
    const size_t cost = Dump(Json(s)).size() + (out.empty() ? 0 : 1);  // quoted, plus a comma
    if (bytes + cost > kMaxCachedDatasetsBytes) break;
    bytes += cost;
    out.push_back(s);
  }
  return out;
}

}  // namespace

std::string CacheSourcesAnnotation(const DLJob& job) {
  Json sources = Json::object();
  for (const DataVolume& d : job.spec.data) {
    if (d.cache) sources[CacheContainerName(d)] = d.source;
  }
  return sources.empty() ? "" : Dump(sources);
}

std::vector<std::string> WarmSources(const Json& pod) {
  if (StringAt(FieldOf(pod, "spec"), "nodeName").empty()) return {};
  const Json& annotations = FieldOf(FieldOf(pod, "metadata"), "annotations");
  const Json sources =
      Json::parse(StringAt(annotations, kCacheSourcesAnnotation), nullptr, /*allow_exceptions=*/
                  false);
  if (!sources.is_object()) return {};
  const Json& status = FieldOf(pod, "status");
  const std::string phase = StringAt(status, "phase");
  // Containers start only after every init container has completed.
  const bool all = phase == "Running" || phase == "Succeeded";
  std::set<std::string> completed;
  if (const Json& inits = FieldOf(status, "initContainerStatuses"); !all && inits.is_array()) {
    for (const Json& s : inits) {
      if (Completed(s)) completed.insert(StringAt(s, "name"));
    }
  }
  std::vector<std::string> out;
  for (const auto& [container, source] : sources.items()) {
    if (!source.is_string() || !(all || completed.count(container))) continue;
    const std::string s = source.get<std::string>();
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

std::vector<std::string> NewlyWarmSources(const Json& old_pod, const Json& pod) {
  const std::vector<std::string> before = WarmSources(old_pod);
  std::vector<std::string> out;
  for (std::string& s : WarmSources(pod)) {
    if (std::find(before.begin(), before.end(), s) == before.end()) out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> DecodeCachedDatasets(const std::string& value) {
  const Json list = Json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (!list.is_array()) return {};
  std::vector<std::string> sources;
  for (const Json& s : list) {
    if (s.is_string()) sources.push_back(s.get<std::string>());
  }
  return Bounded(sources);
}

std::string EncodeCachedDatasets(const std::vector<std::string>& sources) {
  return Dump(Json(sources));
}

std::vector<std::string> TouchCachedDatasets(const std::vector<std::string>& known,
                                             const std::vector<std::string>& warm) {
  std::vector<std::string> all = warm;
  all.insert(all.end(), known.begin(), known.end());
  return Bounded(all);
}

std::vector<std::string> CachedDatasetsOf(const Json& node) {
  const Json& annotations = FieldOf(FieldOf(node, "metadata"), "annotations");
  const Json& value = FieldOf(annotations, kCachedDatasetsAnnotation);
  return value.is_string() ? DecodeCachedDatasets(value.get<std::string>())
                           : std::vector<std::string>();
}

Json CachedDatasetsPatch(const std::vector<std::string>& sources,
                         const std::string& resource_version) {
  return {{"metadata",
           {{"resourceVersion", resource_version},
            {"annotations", {{kCachedDatasetsAnnotation, EncodeCachedDatasets(sources)}}}}}};
}

}  // namespace dljob::controller
