// See table.h.
#include "tests/apiserver/table.h"

#include "base/time_format.h"
#include "kube/object_fields.h"
#include "tests/apiserver/json_path.h"
#include "tests/apiserver/object_store.h"

namespace dljob::apiserver {
namespace {

using Clock = std::chrono::system_clock;

struct Column {
  std::string name;
  std::string type;
  std::string format;
  std::string description;
  int priority = 0;
};

std::string Age(const Json& object, Clock::time_point now) {
  std::string created = object["metadata"].value("creationTimestamp", "");
  std::optional<WallTime> t = ParseRfc3339(created);
  if (!t) return "<unknown>";
  auto d = std::chrono::duration_cast<std::chrono::seconds>(now - *t);
  return HumanDuration(d < std::chrono::seconds(0) ? std::chrono::seconds(0) : d);
}

const Json* FindCondition(const Json& object, const std::string& type) {
  if (!object.contains("status")) return nullptr;
  const Json& status = object["status"];
  if (!status.is_object() || !status.contains("conditions")) return nullptr;
  for (const Json& c : status["conditions"]) {
    if (c.value("type", "") == type) return &c;
  }
  return nullptr;
}

std::vector<Column> ColumnsFor(const ResourceType& type) {
  const std::string kName = "Name must be unique within a namespace.";
  const std::string kAge = "CreationTimestamp of the object.";
  switch (type.table) {
    case TableStyle::kPods:
      return {{"Name", "string", "name", kName, 0},
              {"Ready", "string", "", "The aggregate readiness state of this pod.", 0},
              {"Status", "string", "", "The aggregate status of the containers in this pod.", 0},
              {"Restarts", "string", "", "The number of times the containers have restarted.", 0},
              {"Age", "string", "", kAge, 0},
              {"IP", "string", "", "The pod's IP address.", 1},
              {"Node", "string", "", "The node the pod is bound to.", 1}};
    case TableStyle::kNodes:
      return {{"Name", "string", "name", kName, 0},
              {"Status", "string", "", "The status of the node.", 0},
              {"Roles", "string", "", "The roles of the node.", 0},
              {"Age", "string", "", kAge, 0},
              {"Version", "string", "", "Kubelet version.", 0}};
    case TableStyle::kNamespaces:
      return {{"Name", "string", "name", kName, 0},
              {"Status", "string", "", "The status of the namespace.", 0},
              {"Age", "string", "", kAge, 0}};
    case TableStyle::kColumns: {
      std::vector<Column> out = {{"Name", "string", "name", kName, 0}};
      for (const PrinterColumn& c : type.columns) {
        out.push_back({c.name, c.type, "", c.description, c.priority});
      }
      return out;
    }
    case TableStyle::kDefault:
      break;
  }
  return {{"Name", "string", "name", kName, 0}, {"Age", "string", "", kAge, 0}};
}

Json PodCells(const Json& pod, Clock::time_point now) {
  const Json status = pod.value("status", Json::object());
  const Json spec = pod.value("spec", Json::object());
  size_t total = spec.contains("containers") ? spec["containers"].size() : 0;
  size_t ready = 0;
  int64_t restarts = 0;
  std::string reason = status.value("phase", "Pending");
  if (status.contains("containerStatuses")) {
    for (const Json& cs : status["containerStatuses"]) {
      ready += cs.value("ready", false) ? 1 : 0;
      restarts += cs.value("restartCount", 0);
      const Json state = cs.value("state", Json::object());
      if (state.contains("terminated") && state["terminated"].contains("reason")) {
        reason = state["terminated"]["reason"];
      } else if (state.contains("waiting") && state["waiting"].contains("reason")) {
        reason = state["waiting"]["reason"];
      }
    }
  }
  if (status.contains("reason") && status["reason"].is_string()) reason = status["reason"];
  return {NameOf(pod),
          std::to_string(ready) + "/" + std::to_string(total),
          reason,
          std::to_string(restarts),
          Age(pod, now),
          status.value("podIP", "<none>"),
          spec.value("nodeName", "<none>")};
}

Json NodeCells(const Json& node, Clock::time_point now) {
  const Json* ready = FindCondition(node, "Ready");
  std::string status = ready && ready->value("status", "") == "True" ? "Ready" : "NotReady";
  if (node.contains("spec") && node["spec"].value("unschedulable", false)) {
    status += ",SchedulingDisabled";
  }
  std::string roles;
  // Named: iterating items() of a temporary would read freed memory.
  const Json labels = kube::LabelsOf(node);
  for (const auto& [k, v] : labels.items()) {
    const std::string prefix = "node-role.kubernetes.io/";
    if (k.rfind(prefix, 0) == 0) roles += (roles.empty() ? "" : ",") + k.substr(prefix.size());
  }
  std::string version = "";
  if (node.contains("status") && node["status"].contains("nodeInfo")) {
    version = node["status"]["nodeInfo"].value("kubeletVersion", "");
  }
  return {NameOf(node), status, roles.empty() ? "<none>" : roles, Age(node, now), version};
}

Json CellFor(const PrinterColumn& c, const Json& object, Clock::time_point now) {
  Json v = SimpleJsonPath(object, c.json_path);
  if (c.type == "date" && v.is_string()) {
    Json fake = {{"metadata", {{"creationTimestamp", v}}}};
    return Age(fake, now);
  }
  // As kube-apiserver's CRD table converter: an integer column shows a fractional value cut to
  // its whole part, a number column shows an integer as a number.
  if (c.type == "integer" && v.is_number_float()) return static_cast<int64_t>(v.get<double>());
  if (c.type == "number" && v.is_number_integer()) return v.get<double>();
  return v;
}

Json Cells(const ResourceType& type, const Json& object, Clock::time_point now) {
  switch (type.table) {
    case TableStyle::kPods:
      return PodCells(object, now);
    case TableStyle::kNodes:
      return NodeCells(object, now);
    case TableStyle::kNamespaces:
      return {NameOf(object), object.value("status", Json::object()).value("phase", "Active"),
              Age(object, now)};
    case TableStyle::kColumns: {
      Json cells = {NameOf(object)};
      for (const PrinterColumn& c : type.columns) cells.push_back(CellFor(c, object, now));
      return cells;
    }
    case TableStyle::kDefault:
      break;
  }
  return {NameOf(object), Age(object, now)};
}

Json RowObject(const Json& object, const std::string& include_object) {
  if (include_object == "Object") return object;
  return {{"kind", "PartialObjectMetadata"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", object["metadata"]}};
}

}  // namespace

bool WantsTable(const std::string& accept) { return accept.find("as=Table") != std::string::npos; }

Json ObjectsToTable(const ResourceType& type, const std::vector<Json>& objects,
                    const std::string& resource_version, const std::string& continue_token,
                    const std::string& include_object, Clock::time_point now, bool with_columns) {
  Json columns = Json::array();
  if (with_columns) {
    for (const Column& c : ColumnsFor(type)) {
      columns.push_back({{"name", c.name},
                         {"type", c.type},
                         {"format", c.format},
                         {"description", c.description},
                         {"priority", c.priority}});
    }
  }
  Json rows = Json::array();
  for (const Json& object : objects) {
    Json row = {{"cells", Cells(type, object, now)}};
    if (include_object != "None") row["object"] = RowObject(object, include_object);
    rows.push_back(std::move(row));
  }
  Json meta = Json::object();
  if (!resource_version.empty()) meta["resourceVersion"] = resource_version;
  if (!continue_token.empty()) meta["continue"] = continue_token;
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", meta},
          {"columnDefinitions", columns},
          {"rows", rows}};
}

}  // namespace dljob::apiserver
