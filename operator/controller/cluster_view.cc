#include "operator/controller/cluster_view.h"

#include <initializer_list>

#include "base/json_fields.h"
#include "kube/object_fields.h"
#include "operator/controller/dataset_cache.h"

namespace dljob::controller {
namespace {

using Json = nlohmann::json;

// Each container with only the given fields.
Json Containers(const Json& containers, std::initializer_list<const char*> keep) {
  Json out = Json::array();
  for (const Json& c : containers) {
    Json kept = Json::object();
    for (const char* key : keep) {
      if (const Json& v = FieldOf(c, key); !v.is_null()) kept[key] = v;
    }
    out.push_back(std::move(kept));
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
    if (const Json& cs = FieldOf(spec, key); cs.is_array())
      out["spec"][key] = Containers(cs, {"resources"});
  }
  if (const Json& o = FieldOf(spec, "overhead"); o.is_object()) out["spec"]["overhead"] = o;
  if (const Json& phase = FieldOf(FieldOf(pod, "status"), "phase"); phase.is_string()) {
    out["status"]["phase"] = phase;
  }
  return out;
}

Json JobPodView(const Json& pod) {
  Json out = Json::object();
  if (const Json& meta = FieldOf(pod, "metadata"); meta.is_object()) {
    Json& m = out["metadata"] = meta;
    m.erase("managedFields");
  }
  for (const char* key : {"apiVersion", "kind"}) {
    if (const Json& v = FieldOf(pod, key); !v.is_null()) out[key] = v;
  }
  if (const Json& status = FieldOf(pod, "status"); status.is_object()) {
    Json& st = out["status"] = Json::object();
    for (const char* key : {"phase", "reason", "message", "podIP", "conditions"}) {
      if (const Json& v = FieldOf(status, key); !v.is_null()) st[key] = v;
    }
    for (const char* key : {"containerStatuses", "initContainerStatuses"}) {
      if (const Json& cs = FieldOf(status, key); cs.is_array())
        st[key] = Containers(cs, {"name", "state"});
    }
  }
  const Json& spec = FieldOf(pod, "spec");
  if (!spec.is_object()) return out;
  Json& s = out["spec"] = Json::object();
  for (const char* key :
       {"nodeName", "hostAliases", "nodeSelector", "affinity", "tolerations", "priority",
        "priorityClassName", "schedulerName", "terminationGracePeriodSeconds", "overhead",
        "hostname", "subdomain", "automountServiceAccountToken", "restartPolicy"}) {
    if (const Json& v = FieldOf(spec, key); !v.is_null()) s[key] = v;
  }
  for (const char* key : {"containers", "initContainers"}) {
    if (const Json& cs = FieldOf(spec, key); cs.is_array())
      s[key] = Containers(cs, {"name", "image", "resources"});
  }
  return out;
}

Json NodeView(const Json& node) {
  Json out = kube::WithoutManagedFields(node);
  if (out.is_object() && out.contains("status") && out["status"].is_object()) {
    out["status"].erase("images");
  }
  return out;
}

Json SecretMetadataView(const Json& secret) {
  Json out = Json::object();
  for (const char* key : {"apiVersion", "kind", "metadata"}) {
    if (const Json& v = FieldOf(secret, key); !v.is_null()) out[key] = v;
  }
  return kube::WithoutManagedFields(std::move(out));
}

}  // namespace dljob::controller
