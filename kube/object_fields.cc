#include "kube/object_fields.h"

#include "base/json_fields.h"

namespace dljob::kube {
namespace {

std::string MetadataString(const nlohmann::json& object, const char* key) {
  return StringAt(FieldOf(object, "metadata"), key);
}

}  // namespace

std::string NameOf(const nlohmann::json& object) { return MetadataString(object, "name"); }
std::string NamespaceOf(const nlohmann::json& object) {
  return MetadataString(object, "namespace");
}
std::string UidOf(const nlohmann::json& object) { return MetadataString(object, "uid"); }
std::string ResourceVersionOf(const nlohmann::json& object) {
  return MetadataString(object, "resourceVersion");
}

std::string ObjectKey(const std::string& ns, const std::string& name) {
  return ns.empty() ? name : ns + "/" + name;
}

std::string ObjectKey(const nlohmann::json& object) {
  return ObjectKey(NamespaceOf(object), NameOf(object));
}

const nlohmann::json& LabelsOf(const nlohmann::json& object) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  const nlohmann::json& labels = FieldOf(FieldOf(object, "metadata"), "labels");
  return labels.is_object() ? labels : kEmpty;
}

std::string LabelOf(const nlohmann::json& object, const char* key) {
  return StringAt(LabelsOf(object), key);
}

std::string NodeNameOf(const nlohmann::json& pod) {
  return StringAt(FieldOf(pod, "spec"), "nodeName");
}

nlohmann::json WithoutManagedFields(nlohmann::json object) {
  if (auto meta = object.find("metadata"); meta != object.end() && meta->is_object()) {
    meta->erase("managedFields");
  }
  return object;
}

}  // namespace dljob::kube
