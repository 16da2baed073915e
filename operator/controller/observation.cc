#include "operator/controller/observation.h"

#include <map>

#include "base/json_fields.h"
#include "operator/controller/builders.h"

namespace dljob::controller {
namespace {

using json = nlohmann::json;

// Every read below is by reference (FieldOf): json::value() with an object default would copy
// the whole status on each call, and these run for every pod of every pass.
const json& StatusOf(const json& pod) { return FieldOf(pod, "status"); }

// j[key] when it is an array, else an empty one.
const json& ArrayAt(const json& j, const char* key) {
  static const json kEmpty = json::array();
  const json& v = FieldOf(j, key);
  return v.is_array() ? v : kEmpty;
}

bool IsReady(const json& pod) {
  for (const json& c : ArrayAt(StatusOf(pod), "conditions")) {
    if (StringAt(c, "type") == "Ready") return StringAt(c, "status") == "True";
  }
  return false;
}

// "exited with code 3 (Error)" from the first terminated container, else the pod's own reason.
std::string WhyFailed(const json& pod) {
  const json& status = StatusOf(pod);
  for (const json& cs : ArrayAt(status, "containerStatuses")) {
    const json& terminated = FieldOf(FieldOf(cs, "state"), "terminated");
    if (terminated.contains("exitCode")) {
      std::string why = "exited with code " + terminated["exitCode"].dump();
      if (!StringAt(terminated, "reason").empty())
        why += " (" + StringAt(terminated, "reason") + ")";
      return why;
    }
  }
  std::string reason = StringAt(status, "reason");
  std::string message = StringAt(status, "message");
  if (reason.empty()) return "failed";
  return message.empty() ? reason : reason + ": " + message;
}

bool Deleting(const json& pod) { return FieldOf(pod, "metadata").contains("deletionTimestamp"); }

// " (DisruptionTarget: EvictionByEvictionAPI: Eviction API: evicting)" when the pod says why.
std::string Disruption(const json& pod) {
  for (const json& c : ArrayAt(StatusOf(pod), "conditions")) {
    if (StringAt(c, "type") != "DisruptionTarget" || StringAt(c, "status") != "True") continue;
    std::string why = StringAt(c, "reason");
    if (!StringAt(c, "message").empty()) why += (why.empty() ? "" : ": ") + StringAt(c, "message");
    return why.empty() ? "" : " (" + why + ")";
  }
  return "";
}

}  // namespace

Observation Observe(const DLJob& job, const std::vector<json>& pods) {
  Observation o;
  o.workers.desired = WorkerCount(job);
  const json* launcher = nullptr;
  int64_t bound = 0;
  std::map<std::string, int64_t> gpus_by_node;
  for (const json& pod : pods) {
    const json& meta = FieldOf(pod, "metadata");
    std::string role = StringAt(FieldOf(meta, "labels"), kRoleLabel);
    if (role == "launcher") {
      launcher = &pod;
      continue;
    }
    if (role != "worker") continue;
    std::string phase = StringAt(StatusOf(pod), "phase");
    std::string node = StringAt(FieldOf(pod, "spec"), "nodeName");
    if (!node.empty()) {
      ++bound;
      gpus_by_node[node] += job.spec.gpus_per_worker.value_or(1);
    }
    if (phase == "Failed") {
      ++o.workers.failed;
      if (o.failed_pod.empty()) {
        o.failed_pod = StringAt(meta, "name");
        o.message = "worker " + o.failed_pod + " " + WhyFailed(pod);
      }
    } else if (phase == "Running" && IsReady(pod)) {
      ++o.workers.ready;
    }
  }
  for (const auto& [node, gpus] : gpus_by_node) o.placement.push_back({node, gpus});

  std::string launcher_phase = launcher ? StringAt(StatusOf(*launcher), "phase") : "";
  if (launcher_phase == "Succeeded") {
    o.state = JobState::kSucceeded;
    o.reason = "LauncherSucceeded";
    o.message = "mpirun exited 0";
  } else if (launcher_phase == "Failed") {
    o.state = JobState::kFailed;
    o.reason = "LauncherFailed";
    o.failed_pod = StringAt(FieldOf(*launcher, "metadata"), "name");
    o.message = "launcher " + o.failed_pod + " " + WhyFailed(*launcher);
  } else if (o.workers.failed > 0) {
    o.state = JobState::kFailed;
    o.reason = "WorkerFailed";
  } else if (launcher_phase == "Running") {
    o.state = JobState::kRunning;
    o.reason = "LauncherRunning";
  } else if (o.workers.desired > 0 && o.workers.ready == o.workers.desired) {
    o.state = JobState::kStarting;
    o.reason = "WorkersReady";
  } else if (o.workers.desired > 0 && bound == o.workers.desired) {
    o.state = JobState::kScheduled;
    o.reason = "WorkersBound";
    // The reconciler says where (the nodes and their topology) before this.
    o.message = std::to_string(o.workers.ready) + "/" + std::to_string(o.workers.desired) +
                " Ready, waiting for their containers to start";
  } else {
    o.reason = "WaitingForWorkers";
    o.message = std::to_string(bound) + "/" + std::to_string(o.workers.desired) + " workers placed";
  }
  return o;
}

std::optional<LostWorker> FindLostWorker(const DLJob& job, const std::vector<json>& pods) {
  std::map<std::string, const json*> workers;
  bool launcher = false;
  for (const json& pod : pods) {
    const json& meta = FieldOf(pod, "metadata");
    std::string role = StringAt(FieldOf(meta, "labels"), kRoleLabel);
    if (role == "launcher") launcher = true;
    if (role == "worker") workers[StringAt(meta, "name")] = &pod;
  }
  if (job.status.placement.empty() && !launcher) return std::nullopt;
  for (int64_t i = 0; i < WorkerCount(job); ++i) {
    std::string name = WorkerName(job, i);
    auto it = workers.find(name);
    if (it == workers.end()) {
      return LostWorker{name,
                        "worker " + name +
                            " disappeared (deleted, evicted through the API, or its node was "
                            "removed)",
                        true};
    }
    if (Deleting(*it->second)) {
      return LostWorker{name, "worker " + name + " is being deleted" + Disruption(*it->second),
                        false};
    }
  }
  return std::nullopt;
}

}  // namespace dljob::controller
