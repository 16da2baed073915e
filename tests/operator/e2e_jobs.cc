#include "tests/operator/e2e_jobs.h"

#include <cstdio>

#include "base/json_fields.h"
#include "testing/wait.h"

namespace dljob::testing {
namespace {

std::string& CurrentNs() {
  static std::string ns = "default";
  return ns;
}

}  // namespace

const std::string& Ns() { return CurrentNs(); }
void SetNs(std::string ns) { CurrentNs() = std::move(ns); }

Json NewJob(const std::string& name, int gpus, int gpus_per_worker, int backoff_limit) {
  return {{"apiVersion", "dljob.io/v1alpha1"},
          {"kind", "DLJob"},
          {"metadata", {{"name", name}, {"namespace", Ns()}}},
          {"spec",
           {{"image", "dljob/trainer:cpu"},
            {"command", {"dljob-train", "--model=mnist_cnn", "--num_epochs=1"}},
            {"gpus", gpus},
            {"gpusPerWorker", gpus_per_worker},
            {"runPolicy", {{"backoffLimit", backoff_limit}}}}}};
}

bool Absent(kube::Api& api, const kube::Resource& resource, const std::string& ns,
            const std::string& name) {
  kube::ApiResult<Json> r = api.Get(resource, ns, name);
  return !r.ok() && r.error().IsNotFound();
}

Json ConditionOf(const Json& object, const std::string& type) {
  for (const Json& c : object.value("status", Json::object()).value("conditions", Json::array())) {
    if (c.value("type", "") == type) return c;
  }
  return Json::object();
}

std::vector<Json> Workers(kube::Api& api, const std::string& job) {
  std::vector<Json> out;
  for (const Json& p : PodsNow(api, job)) {
    if (Role(p) == "worker") out.push_back(p);
  }
  return out;
}

std::vector<Json> EventsOf(kube::Api& api, const std::string& job, const std::string& reason) {
  std::vector<Json> out;
  auto list = [&] {
    out.clear();
    kube::ApiResult<Json> events = kube::ListAll(api, kube::resources::kEvents, Ns());
    if (!events.ok()) return false;
    for (const Json& e : (*events)["items"]) {
      if (e["involvedObject"].value("name", "") == job && e.value("reason", "") == reason) {
        out.push_back(e);
      }
    }
    return !out.empty();
  };
  // The operator creates Events after the status write that they tell of, on a thread of its own
  // (events.h): one may land a moment after the state a test waited for.
  dljob::testing::WaitFor(list, 10'000);
  return out;
}

std::optional<Json> GetJob(kube::Api& api, const std::string& name) {
  kube::ApiResult<Json> r = api.Get(kube::resources::kDLJobs, Ns(), name);
  if (!r.ok()) return std::nullopt;
  return *r;
}

std::string Phase(kube::Api& api, const std::string& name) {
  std::optional<Json> job = GetJob(api, name);
  if (!job) return "<absent>";
  return StringAt(FieldOf(*job, "status"), "phase");
}

bool WaitForPhase(kube::Api& api, const std::string& job, const std::string& phase,
                  int timeout_ms) {
  return WaitFor([&] { return Phase(api, job) == phase; }, timeout_ms);
}

std::string PhaseReason(const Json& job) {
  const Json& status = FieldOf(job, "status");
  std::string phase = StringAt(status, "phase");
  const Json& conditions = FieldOf(status, "conditions");
  if (!conditions.is_array()) return "";
  for (const Json& c : conditions) {
    if (StringAt(c, "type") == phase) return StringAt(c, "reason");
  }
  return "";
}

int64_t Restarts(const Json& job) {
  const Json& r = FieldOf(FieldOf(job, "status"), "restarts");
  return r.is_number_integer() ? r.get<int64_t>() : 0;
}

std::optional<std::vector<Json>> JobPods(kube::Api& api, const std::string& job) {
  kube::ListOptions o;
  o.label_selector = job.empty() ? "dljob.io/job-name" : "dljob.io/job-name=" + job;
  kube::ApiResult<Json> r = kube::ListAll(api, kube::resources::kPods, Ns(), o);
  if (!r.ok()) return std::nullopt;
  return FieldOf(*r, "items").get<std::vector<Json>>();
}

std::vector<Json> PodsNow(kube::Api& api, const std::string& job) {
  return JobPods(api, job).value_or(std::vector<Json>{});
}

std::string Role(const Json& pod) { return kube::LabelOf(pod, "dljob.io/role"); }
std::string JobOf(const Json& pod) { return kube::LabelOf(pod, "dljob.io/job-name"); }
std::string PodPhase(const Json& pod) { return StringAt(FieldOf(pod, "status"), "phase"); }
bool IsDeleting(const Json& object) {
  return !FieldOf(FieldOf(object, "metadata"), "deletionTimestamp").is_null();
}

int64_t Incarnation(const Json& pod) {
  std::string v =
      StringAt(FieldOf(FieldOf(pod, "metadata"), "annotations"), "dljob.io/incarnation");
  try {
    return v.empty() ? 0 : std::stoll(v);
  } catch (const std::exception&) {
    return -1;
  }
}

std::map<std::string, int> GpusInUse(const std::vector<Json>& pods) {
  std::map<std::string, int> used;
  for (const Json& p : pods) {
    if (NodeNameOf(p).empty() || PodPhase(p) == "Succeeded" || PodPhase(p) == "Failed") continue;
    const Json& containers = FieldOf(FieldOf(p, "spec"), "containers");
    for (const Json& c : containers.is_array() ? containers : Json::array()) {
      const Json& g = FieldOf(FieldOf(FieldOf(c, "resources"), "limits"), "nvidia.com/gpu");
      if (g.is_number()) used[NodeNameOf(p)] += g.get<int>();
      if (g.is_string()) used[NodeNameOf(p)] += std::stoi(g.get<std::string>());
    }
  }
  return used;
}

std::string OwnerUid(const Json& object) {
  const Json& refs = FieldOf(FieldOf(object, "metadata"), "ownerReferences");
  for (const Json& r : refs.is_array() ? refs : Json::array()) {
    if (r.value("controller", false)) return StringAt(r, "uid");
  }
  return "";
}

void EndRunningJobs(E2eCluster& cluster, const std::vector<Json>& pods,
                    const std::function<int(const std::string& job)>& code_for) {
  for (const Json& p : pods) {
    if (Role(p) != "launcher" || PodPhase(p) != "Running" || IsDeleting(p)) continue;
    (void)cluster.EndTraining(JobOf(p), code_for(JobOf(p)));
  }
}

bool MarkRunning(const ControlClient& control, const std::vector<Json>& pods) {
  bool ok = true;
  for (const Json& pod : pods) {
    if (PodPhase(pod) == "Running" || PodPhase(pod) == "Succeeded" || PodPhase(pod) == "Failed") {
      continue;
    }
    PodStatusUpdate running;
    running.phase = "Running";
    running.ready = true;
    ok = control.SetPodStatus(Ns(), NameOf(pod), running).ok() && ok;
  }
  return ok;
}

Status Finish(const ControlClient& control, const std::string& pod, int exit_code) {
  PodStatusUpdate u;
  u.phase = exit_code == 0 ? "Succeeded" : "Failed";
  u.exit_code = exit_code;
  u.reason = exit_code == 0 ? "Completed" : "Error";
  return control.SetPodStatus(Ns(), pod, u);
}

std::string Describe(kube::Api& api, const std::string& job) {
  std::string out = "job " + job + ": ";
  std::optional<Json> j = GetJob(api, job);
  out += j ? "resourceVersion " + StringAt(FieldOf(*j, "metadata"), "resourceVersion") + " " +
                 FieldOf(*j, "status").dump()
           : std::string("<absent>");
  std::optional<std::vector<Json>> pods = JobPods(api, job);
  if (!pods) return out + "\n  pods: <list failed>";
  for (const Json& p : *pods) {
    out += "\n  pod " + NameOf(p) + " role=" + Role(p) + " phase=" + PodPhase(p) +
           " node=" + NodeNameOf(p) + " incarnation=" + std::to_string(Incarnation(p)) +
           (IsDeleting(p) ? " deleting" : "");
  }
  return out;
}

std::string MetricReport(int rank, int step, double images_per_sec, int world_size) {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "DLJOB_METRIC {\"step\":%d,\"images_per_sec\":%g,\"world_size\":%d,\"rank\":%d}",
                step, images_per_sec, world_size, rank);
  return buf;
}

bool RestartedWhole(kube::Api& api, const std::string& job, const std::set<std::string>& old_uids,
                    int64_t restarts, size_t pods) {
  std::optional<Json> got = GetJob(api, job);
  std::optional<std::vector<Json>> now = JobPods(api, job);
  if (!got || !now || got->value("status", Json::object()).value("phase", "") != "Running") {
    return false;
  }
  size_t fresh = 0;
  for (const Json& p : *now) {
    fresh += Incarnation(p) == restarts && PodPhase(p) == "Running" && !old_uids.count(UidOf(p));
  }
  return Restarts(*got) == restarts && fresh == pods && now->size() == pods;
}

std::string LeaseHolder(kube::Api& api) {
  kube::ApiResult<Json> lease = api.Get(kube::resources::kLeases, Ns(), "dljob-operator");
  if (!lease.ok()) return "";
  return lease->value("spec", Json::object()).value("holderIdentity", "");
}

}  // namespace dljob::testing
