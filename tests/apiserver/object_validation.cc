// See object_validation.h.
#include "tests/apiserver/object_validation.h"

#include <cctype>
#include <set>

#include "base/json_fields.h"
#include "tests/apiserver/webhook_config.h"

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

const std::set<std::string>& ObjectMetaFields() {
  static const std::set<std::string> kFields = {"name",
                                                "generateName",
                                                "namespace",
                                                "selfLink",
                                                "uid",
                                                "resourceVersion",
                                                "generation",
                                                "creationTimestamp",
                                                "deletionTimestamp",
                                                "deletionGracePeriodSeconds",
                                                "labels",
                                                "annotations",
                                                "ownerReferences",
                                                "finalizers",
                                                "managedFields"};
  return kFields;
}

std::string At(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

void AddAll(FieldErrors& out, const std::string& field, const Json& value,
            const std::vector<std::string>& reasons) {
  for (const std::string& r : reasons) out.push_back(Invalid(field, value, r));
}

void ValidateLabels(const Json& labels, const std::string& field, FieldErrors& out) {
  if (!labels.is_object()) return;
  for (auto it = labels.begin(); it != labels.end(); ++it) {
    AddAll(out, field, it.key(), QualifiedName(it.key()));
    if (it->is_string()) AddAll(out, field, *it, LabelValue(it->get<std::string>()));
  }
}

void ValidateMetadata(const ResourceType& type, const Json& meta, FieldErrors& out) {
  std::string name = StringAt(meta, "name");
  if (name.empty()) {
    out.push_back(Required("metadata.name", "name or generateName is required"));
  } else {
    AddAll(out, "metadata.name", name, NameRuleViolations(type, name));
  }
  if (std::string prefix = StringAt(meta, "generateName"); !prefix.empty()) {
    // The real server's ValidateObjectMeta: the kind's name rule on the prefix, its trailing '-'
    // masked (apimachinery's maskTrailingDash, which also drops the character before it).
    std::string masked = prefix.size() > 1 && prefix.back() == '-'
                             ? prefix.substr(0, prefix.size() - 2) + "a"
                             : prefix;
    AddAll(out, "metadata.generateName", prefix, NameRuleViolations(type, masked));
  }
  ValidateLabels(FieldOf(meta, "labels"), "metadata.labels", out);
  const Json& annotations = FieldOf(meta, "annotations");
  if (annotations.is_object()) {
    size_t total = 0;
    for (auto it = annotations.begin(); it != annotations.end(); ++it) {
      std::string lower = it.key();
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      AddAll(out, "metadata.annotations", it.key(), QualifiedName(lower));
      total += it.key().size() + (it->is_string() ? it->get<std::string>().size() : 0);
    }
    if (total > 256 * 1024) out.push_back(TooLong("metadata.annotations", 256 * 1024));
  }
  const Json& refs = FieldOf(meta, "ownerReferences");
  if (refs.is_array()) {
    int controllers = 0;
    for (const Json& ref : refs) {
      const char* fields[][2] = {{"apiVersion", "version must not be empty"},
                                 {"kind", "kind must not be empty"},
                                 {"name", "name must not be empty"},
                                 {"uid", "uid must not be empty"}};
      for (const auto& [key, why] : fields) {
        if (StringAt(ref, key).empty()) {
          out.push_back(Invalid(std::string("metadata.ownerReferences.") + key, "", why));
        }
      }
      controllers += ref.value("controller", false) ? 1 : 0;
    }
    if (controllers > 1) {
      out.push_back(Invalid("metadata.ownerReferences", refs,
                            "Only one reference can have Controller set to true"));
    }
  }
}

bool IsEnvVarName(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
      return false;
    }
  }
  return true;
}

const char kEnvVarMessage[] =
    "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', "
    "or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or "
    "'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')";
const char kPortRange[] = "must be between 1 and 65535, inclusive";

bool ValidPort(const Json& port) {
  return port.is_number_integer() && port.get<int64_t>() >= 1 && port.get<int64_t>() <= 65535;
}

void ValidateContainers(const Json& list, const std::string& path, bool required,
                        const std::set<std::string>& volumes, std::set<std::string>& names,
                        FieldErrors& out) {
  if (!list.is_array() || list.empty()) {
    if (required) out.push_back(Required(path));
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& c = list[i];
    std::string at = At(path, i);
    std::string name = StringAt(c, "name");
    if (name.empty()) {
      out.push_back(Required(at + ".name"));
    } else {
      AddAll(out, at + ".name", name, Dns1123Label(name));
      if (!names.insert(name).second) out.push_back(Duplicate(at + ".name", name));
    }
    if (StringAt(c, "image").empty()) out.push_back(Required(at + ".image"));
    const Json& env = FieldOf(c, "env");
    for (size_t e = 0; env.is_array() && e < env.size(); ++e) {
      std::string env_name = StringAt(env[e], "name");
      std::string env_at = At(at + ".env", e) + ".name";
      if (env_name.empty()) {
        out.push_back(Required(env_at));
      } else if (!IsEnvVarName(env_name)) {
        out.push_back(Invalid(env_at, env_name, kEnvVarMessage));
      }
    }
    const Json& ports = FieldOf(c, "ports");
    for (size_t p = 0; ports.is_array() && p < ports.size(); ++p) {
      const Json& port = FieldOf(ports[p], "containerPort");
      if (!ValidPort(port)) {
        out.push_back(Invalid(At(at + ".ports", p) + ".containerPort", port, kPortRange));
      }
    }
    const Json& mounts = FieldOf(c, "volumeMounts");
    for (size_t m = 0; mounts.is_array() && m < mounts.size(); ++m) {
      std::string mount_at = At(at + ".volumeMounts", m);
      std::string volume = StringAt(mounts[m], "name");
      if (volume.empty()) {
        out.push_back(Required(mount_at + ".name"));
      } else if (!volumes.count(volume)) {
        out.push_back(NotFound(mount_at + ".name", volume));
      }
      if (StringAt(mounts[m], "mountPath").empty())
        out.push_back(Required(mount_at + ".mountPath"));
    }
  }
}

// A pod's spec with the fields an update may change blanked out.
Json MutablePartsCleared(const Json& spec) {
  Json s = spec.is_object() ? spec : Json::object();
  for (const char* list : {"containers", "initContainers"}) {
    if (!s.contains(list) || !s[list].is_array()) continue;
    for (Json& c : s[list]) {
      if (c.is_object()) c.erase("image");
    }
  }
  s.erase("activeDeadlineSeconds");
  s.erase("tolerations");
  s.erase("terminationGracePeriodSeconds");
  return s;
}

void ValidatePod(const Json& pod, const Json* old, FieldErrors& out) {
  const Json& spec = FieldOf(pod, "spec");
  std::set<std::string> volumes;
  const Json& vols = FieldOf(spec, "volumes");
  for (size_t v = 0; vols.is_array() && v < vols.size(); ++v) {
    std::string name = StringAt(vols[v], "name");
    std::string at = At("spec.volumes", v) + ".name";
    if (name.empty()) {
      out.push_back(Required(at));
      continue;
    }
    AddAll(out, at, name, Dns1123Label(name));
    if (!volumes.insert(name).second) out.push_back(Duplicate(at, name));
  }
  std::set<std::string> names;
  ValidateContainers(FieldOf(spec, "initContainers"), "spec.initContainers", false, volumes, names,
                     out);
  ValidateContainers(FieldOf(spec, "containers"), "spec.containers", true, volumes, names, out);
  for (const char* key : {"hostname", "subdomain"}) {
    std::string value = StringAt(spec, key);
    if (!value.empty()) AddAll(out, std::string("spec.") + key, value, Dns1123Label(value));
  }
  std::string restart = StringAt(spec, "restartPolicy");
  if (!restart.empty() && restart != "Always" && restart != "OnFailure" && restart != "Never") {
    out.push_back(NotSupported("spec.restartPolicy", restart, {"Always", "Never", "OnFailure"}));
  }
  if (old && MutablePartsCleared(spec) != MutablePartsCleared(FieldOf(*old, "spec"))) {
    out.push_back(Forbidden(
        "spec",
        "pod updates may not change fields other than `spec.containers[*].image`,"
        "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
        "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be "
        "set to 1 if it was previously negative)"));
  }
}

void ValidateService(const Json& service, FieldErrors& out) {
  const Json& spec = FieldOf(service, "spec");
  const Json& ports = FieldOf(spec, "ports");
  bool headless = StringAt(spec, "clusterIP") == "None";
  bool external_name = StringAt(spec, "type") == "ExternalName";
  if ((!ports.is_array() || ports.empty()) && !headless && !external_name) {
    out.push_back(Required("spec.ports"));
  }
  std::set<std::string> names;
  for (size_t i = 0; ports.is_array() && i < ports.size(); ++i) {
    std::string at = At("spec.ports", i);
    std::string name = StringAt(ports[i], "name");
    if (name.empty() && ports.size() > 1) out.push_back(Required(at + ".name"));
    if (!name.empty()) {
      AddAll(out, at + ".name", name, Dns1123Label(name));
      if (!names.insert(name).second) out.push_back(Duplicate(at + ".name", name));
    }
    if (!ValidPort(FieldOf(ports[i], "port"))) {
      out.push_back(Invalid(at + ".port", FieldOf(ports[i], "port"), kPortRange));
    }
    std::string protocol = StringAt(ports[i], "protocol");
    if (!protocol.empty() && protocol != "TCP" && protocol != "UDP" && protocol != "SCTP") {
      out.push_back(NotSupported(at + ".protocol", protocol, {"SCTP", "TCP", "UDP"}));
    }
  }
  ValidateLabels(FieldOf(spec, "selector"), "spec.selector", out);
}

void ValidateKeys(const Json& object, const char* map, FieldErrors& out) {
  const Json& data = FieldOf(object, map);
  if (!data.is_object()) return;
  for (auto it = data.begin(); it != data.end(); ++it) {
    const std::string& key = it.key();
    std::string at = std::string(map) + "[" + key + "]";
    bool ok = !key.empty() && key != "." && key != "..";
    for (char c : key) {
      ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
    }
    if (key.size() > 253) out.push_back(Invalid(at, key, "must be no more than 253 characters"));
    if (!ok) {
      out.push_back(Invalid(at, key,
                            "a valid config key must consist of alphanumeric characters, '-', "
                            "'_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex "
                            "used for validation is '[-._a-zA-Z0-9]+')"));
    }
  }
}

}  // namespace

std::vector<std::string> PruneUnknownMetadata(Json& object) {
  std::vector<std::string> pruned;
  if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object()) {
    return pruned;
  }
  Json& meta = object["metadata"];
  for (auto it = meta.begin(); it != meta.end(); ++it) {
    if (!ObjectMetaFields().count(it.key())) pruned.push_back("metadata." + it.key());
  }
  for (const std::string& path : pruned) meta.erase(path.substr(9));
  return pruned;
}

std::vector<std::string> NameRuleViolations(const ResourceType& type, const std::string& name) {
  if (!type.custom && type.group.empty() && type.plural == "namespaces") return Dns1123Label(name);
  if (!type.custom && type.group.empty() && type.plural == "services") return Dns1035Label(name);
  return Dns1123Subdomain(name);
}

FieldErrors ValidateObject(const ResourceType& type, const Json& object, const Json* old) {
  FieldErrors out;
  ValidateMetadata(type, FieldOf(object, "metadata"), out);
  if (IsValidatingWebhookConfigurationType(type)) {
    FieldErrors hooks = ValidateWebhookConfiguration(object);
    out.insert(out.end(), hooks.begin(), hooks.end());
  }
  if (type.custom || !type.group.empty()) return out;
  if (type.plural == "pods") ValidatePod(object, old, out);
  if (type.plural == "services") ValidateService(object, out);
  if (type.plural == "configmaps") {
    ValidateKeys(object, "data", out);
    ValidateKeys(object, "binaryData", out);
  }
  if (type.plural == "secrets") {
    ValidateKeys(object, "data", out);
    ValidateKeys(object, "stringData", out);
  }
  return out;
}

}  // namespace dljob::apiserver
