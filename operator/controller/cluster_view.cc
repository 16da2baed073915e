#include "operator/controller/cluster_view.h"

#include "base/json_fields.h"
#include "operator/controller/dataset_cache.h"

namespace dljob::controller {
namespace {

using Json = nlohmann::json;

// Keeps only `resources` of each container.
Json SlimContainers(const Json& containers) {
  Json out = Json::array();
  for (const Json& c : containers) {
    Json slim = Json::object();
    if (const Json& r = FieldOf(c, "resources"); r.is_object()) slim["resources"] = r;
    out.push_back(std::move(slim));
  }
  return out;
}

}  // namespace

scheduler::Node SchedulerNodeOf(const Json& node) {
  scheduler::Node n = scheduler::SchedulerNodeOf(node);
  for (std::string& source : CachedDatasetsOf(node)) n.cached_datasets.insert(std::move(source));
  return n;
}

Json LedgerPodView(const Json& pod) {
  Json out = Json::object();
  const Json& meta = FieldOf(pod, "metadata");
  Json& m = out["metadata"] = Json::object();
  for (const char* key : {"name", "namespace", "uid", "resourceVersion"}) {
    if (const Json& v = FieldOf(meta, key); v.is_string()) m[key] = v;
  }
  const Json& spec = FieldOf(pod, "spec");
  if (const Json& node = FieldOf(spec, "nodeName"); node.is_string())
    out["spec"]["nodeName"] = node;
  for (const char* key : {"containers", "initContainers"}) {
    if (const Json& cs = FieldOf(spec, key); cs.is_array()) out["spec"][key] = SlimContainers(cs);
  }
  if (const Json& o = FieldOf(spec, "overhead"); o.is_object()) out["spec"]["overhead"] = o;
  if (const Json& phase = FieldOf(FieldOf(pod, "status"), "phase"); phase.is_string()) {
    out["status"]["phase"] = phase;
  }
  return out;
}

}  // namespace dljob::controller
