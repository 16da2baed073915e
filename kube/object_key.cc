#include "kube/object_key.h"

namespace dljob::kube {

std::string ObjectKey(const std::string& ns, const std::string& name) {
  return ns.empty() ? name : ns + "/" + name;
}

std::string ObjectKey(const nlohmann::json& object) {
  const nlohmann::json meta = object.value("metadata", nlohmann::json::object());
  return ObjectKey(meta.value("namespace", ""), meta.value("name", ""));
}

std::string ResourceVersionOf(const nlohmann::json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  auto rv = meta->find("resourceVersion");
  return rv != meta->end() && rv->is_string() ? rv->get<std::string>() : "";
}

}  // namespace dljob::kube
