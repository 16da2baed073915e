// The world the reconciler tests run in: a FakeApi with GPU nodes, informer-like caches filled
// from it on demand (Sync), a FakeClock, a fixed SSH key, a kubelet stand-in that moves pods, and
// failures aimed at one object (AimedFaults).
#pragma once

#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "base/mutex.h"
#include "base/testing/fake_clock.h"
#include "base/time_format.h"
#include "jobs/codec.h"
#include "jobs/defaults.h"
#include "jobs/spec_revision.h"
#include "kube/object_fields.h"
#include "kube/testing/fake_api.h"
#include "operator/controller/children.h"
#include "operator/controller/job_pods.h"
#include "operator/controller/reconciler.h"

namespace dljob::controller::testing {

using dljob::testing::FakeClock;
using kube::ObjectKey;
using kube::testing::Call;
using kube::testing::FakeApi;

inline Result<SshKeyPair> FixedKeys(const std::string&) {
  return SshKeyPair{"-----BEGIN OPENSSH PRIVATE KEY-----\nfixed\n", "ssh-ed25519 AAAA fixed\n"};
}

inline Json GpuNode(const std::string& name, int gpus) {
  return {{"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
          {"status",
           {{"allocatable", {{"nvidia.com/gpu", std::to_string(gpus)}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

// The FakeApi with failures aimed at one object: FailFor("bind", "j-worker-1", error) fails the
// next bind of that pod only (FakeApi::FailNext fails the next bind of any pod). The failing call
// is recorded by the FakeApi like every call. Aims at get, create, delete and bind. Thread-safe.
class AimedFaults final : public kube::Api {
 public:
  explicit AimedFaults(FakeApi& api) : api_(api) {}

  void FailFor(const std::string& verb, const std::string& name, kube::ApiError error,
               int times = 1) {
    MutexLock lock(mu_);
    for (int i = 0; i < times; ++i) aimed_[{verb, name}].push_back(error);
  }

  kube::ApiResult<Json> Get(const kube::Resource& r, const std::string& ns,
                            const std::string& name) override {
    Arm("get", r.plural, name);
    return api_.Get(r, ns, name);
  }
  kube::ApiResult<Json> List(const kube::Resource& r, const std::string& ns,
                             const kube::ListOptions& options) override {
    return api_.List(r, ns, options);
  }
  kube::ApiResult<Json> Create(const kube::Resource& r, const std::string& ns,
                               const Json& object) override {
    Arm("create", r.plural, kube::NameOf(object));
    return api_.Create(r, ns, object);
  }
  kube::ApiResult<Json> Replace(const kube::Resource& r, const std::string& ns,
                                const Json& object) override {
    return api_.Replace(r, ns, object);
  }
  kube::ApiResult<Json> ReplaceStatus(const kube::Resource& r, const std::string& ns,
                                      const Json& object) override {
    return api_.ReplaceStatus(r, ns, object);
  }
  kube::ApiResult<Json> MergePatch(const kube::Resource& r, const std::string& ns,
                                   const std::string& name, const Json& patch,
                                   const std::string& subresource) override {
    return api_.MergePatch(r, ns, name, patch, subresource);
  }
  kube::ApiResult<Json> Delete(const kube::Resource& r, const std::string& ns,
                               const std::string& name,
                               const kube::DeleteOptions& options) override {
    Arm("delete", r.plural, name);
    return api_.Delete(r, ns, name, options);
  }
  kube::ApiResult<kube::WatchStreamPtr> Watch(const kube::Resource& r, const std::string& ns,
                                              const kube::ListOptions& options) override {
    return api_.Watch(r, ns, options);
  }
  kube::ApiResult<Json> Bind(const std::string& ns, const std::string& pod,
                             const std::string& node) override {
    Arm("bind", "pods", pod);
    return api_.Bind(ns, pod, node);
  }
  kube::ApiResult<kube::LineStreamPtr> Logs(const std::string& ns, const std::string& pod,
                                            const kube::LogOptions& options) override {
    return api_.Logs(ns, pod, options);
  }

 private:
  void Arm(const std::string& verb, const std::string& plural, const std::string& name) {
    MutexLock lock(mu_);
    auto it = aimed_.find({verb, name});
    if (it == aimed_.end() || it->second.empty()) return;
    api_.FailNext(verb, plural, it->second.front());
    it->second.pop_front();
  }

  FakeApi& api_;
  Mutex mu_;
  std::map<std::pair<std::string, std::string>, std::deque<kube::ApiError>> aimed_ GUARDED_BY(mu_);
};

class ReconcilerWorld : public ::testing::Test {
 protected:
  // A 4-GPU job of 2 workers in namespace ns.
  Json PutJob(Json run_policy = Json::object(), const std::string& name = "j") {
    Json job = {{"apiVersion", "dljob.io/v1alpha1"},
                {"kind", "DLJob"},
                {"metadata", {{"name", name}, {"namespace", "ns"}}},
                {"spec",
                 {{"image", "img"},
                  {"command", {"train"}},
                  {"gpus", 4},
                  {"gpusPerWorker", 2},
                  {"runPolicy", run_policy}}}};
    if (auto old = api_.Object(kube::resources::kDLJobs, "ns", name)) {
      job["status"] = (*old)["status"];
    }
    return api_.Put(kube::resources::kDLJobs, job);
  }
  // The defaulted job as the reconciler sees it, for building expected objects.
  DLJob Job(const std::string& name = "j") {
    DecodeResult d = DecodeTree(*api_.Object(kube::resources::kDLJobs, "ns", name));
    EXPECT_TRUE(d.ok()) << JoinFieldErrors(d.errors);
    ApplyDefaults(d.job);
    return d.job;
  }
  Json JobStatus(const std::string& name = "j") {
    return (*api_.Object(kube::resources::kDLJobs, "ns", name)).value("status", Json::object());
  }

  // The informers catch up with the API server.
  void Sync() {
    SyncStore(kube::resources::kDLJobs, jobs_);
    for (const std::string& key : pods_.Keys()) job_pods_.Remove(key);
    SyncStore(kube::resources::kPods, pods_);
    for (const Json& pod : pods_.List()) job_pods_.Upsert(pod);
    SyncStore(kube::resources::kServices, services_);
    SyncStore(kube::resources::kConfigMaps, config_maps_);
    SyncStore(kube::resources::kSecrets, secrets_);
    for (const std::string& key : nodes_.Keys()) nodes_.Remove(key);
    for (const Json& o : api_.Objects(kube::resources::kNodes)) nodes_.Upsert(o);
    SyncLedger();
  }

  // Sync, clear the call log, reconcile the job.
  ReconcileResult Reconcile(const std::string& name = "j",
                            std::optional<WallTime> progress = std::nullopt) {
    Sync();
    api_.ClearCalls();
    Result<ReconcileResult> r = reconciler_.Reconcile("ns/" + name, progress);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : ReconcileResult{};
  }

  // The calls made, with events shown by reason ("create events Running") since their names
  // carry a timestamp.
  std::vector<std::string> Calls() const {
    std::vector<std::string> out;
    for (const Call& c : api_.Calls()) {
      out.push_back(c.resource == "events" ? c.verb + " events " + c.body.value("reason", "")
                                           : c.ToString());
    }
    return out;
  }
  // The Event the last pass created with this reason.
  Json EventFor(const std::string& reason) const {
    for (const Call& c : api_.Calls()) {
      if (c.resource == "events" && c.body.value("reason", "") == reason) return c.body;
    }
    ADD_FAILURE() << "no event " << reason;
    return nullptr;
  }
  Json Body(const std::string& call) const {
    for (const Call& c : api_.Calls()) {
      if (c.ToString() == call) return c.body;
    }
    ADD_FAILURE() << "no call " << call;
    return nullptr;
  }

  // The kubelet: moves a pod to `phase` (Ready when Running and `ready`); a running pod has an
  // address (one per pod name, 10.0.0.2 and up) unless `with_ip` is false.
  void SetPod(const std::string& name, const std::string& phase, bool ready = true,
              int exit_code = 0, bool with_ip = true) {
    Json pod = *api_.Object(kube::resources::kPods, "ns", name);
    pod["status"] = {{"phase", phase}};
    if (phase == "Running") {
      pod["status"]["conditions"] = {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}};
      if (with_ip) {
        if (!pod_ips_.count(name)) pod_ips_[name] = "10.0.0." + std::to_string(pod_ips_.size() + 2);
        pod["status"]["podIP"] = pod_ips_[name];
      }
    }
    if (phase == "Failed" || phase == "Succeeded") {
      Json terminated = {{"exitCode", exit_code},
                         {"reason", phase == "Failed" ? "Error" : "Completed"},
                         {"finishedAt", FormatRfc3339(clock_.Now())}};
      Json state = {{"terminated", terminated}};
      pod["status"]["containerStatuses"] = Json::array({{{"name", "c"}, {"state", state}}});
    }
    api_.Put(kube::resources::kPods, pod);
  }

  // The launcher the reconciler makes for the job as the server has its workers now: bound beside
  // the first worker.
  Json ExpectedLauncher(int64_t incarnation = 0, const std::string& name = "j") {
    Json launcher = DesiredLauncher(Job(name), incarnation, PodSpecRevision(Job(name)),
                                    WorkerPodIps(Job(name), api_.Objects(kube::resources::kPods)),
                                    options_.build);
    launcher["spec"]["nodeName"] =
        (*api_.Object(kube::resources::kPods, "ns", name + "-worker-0"))["spec"]["nodeName"];
    return launcher;
  }
  // The worker `index` the reconciler creates, bound to `node` ("": created unbound).
  Json ExpectedWorker(int64_t index, int64_t incarnation, const std::string& node,
                      const std::string& name = "j") {
    Json worker =
        *DesiredWorker(Job(name), index, incarnation, PodSpecRevision(Job(name)), options_.build);
    if (!node.empty()) worker["spec"]["nodeName"] = node;
    return worker;
  }

  FakeApi api_;
  AimedFaults faults_{api_};  // what the reconciler talks to
  FakeClock clock_;
  kube::Store jobs_;
  kube::Store pods_{OwnerJobKey};
  JobPods job_pods_;  // pods_, as the queue scheduler reads them
  kube::Store services_;
  kube::Store config_maps_;
  kube::Store secrets_;
  kube::Store nodes_;
  // What the log collectors say of a launcher pod's log, by uid (log_drain.h); absent: no
  // collector follows it.
  std::map<std::string, bool> log_ended_;
  ReconcilerOptions options_{.launcher_log_ended =
                                 [this](const std::string& uid) {
                                   auto it = log_ended_.find(uid);
                                   return it == log_ended_.end() ? std::nullopt
                                                                 : std::optional<bool>(it->second);
                                 },
                             .timings =
                                 [this](const DLJob& job, const JobTimings& t) {
                                   MutexLock lock(timings_mu_);
                                   timings_.emplace_back(job.metadata.name, t);
                                 },
                             .disruption_budgets = kube::resources::kPodDisruptionBudgets};
  // What the reconciler reported through options_.timings, by job name.
  Mutex timings_mu_;
  std::vector<std::pair<std::string, JobTimings>> timings_ GUARDED_BY(timings_mu_);
  GpuLedger ledger_{clock_};
  Reconciler reconciler_{
      faults_, clock_,
      Caches{jobs_, pods_, services_, config_maps_, secrets_, ledger_, nullptr, &nodes_}, options_,
      FixedKeys};

 private:
  // Like the operator's node and bound-pod informers: every node, every pod (any label).
  void SyncLedger() {
    std::map<std::string, Json> pods;
    for (const Json& o : api_.Objects(kube::resources::kNodes)) ledger_.UpsertNode(o);
    for (const Json& o : api_.Objects(kube::resources::kPods)) {
      ledger_.UpsertPod(o);
      pods[kube::ObjectKey(o)] = o;
    }
    for (const auto& [key, o] : ledger_pods_) {
      if (!pods.count(key)) ledger_.RemovePod(o);
    }
    ledger_pods_ = std::move(pods);
  }
  std::map<std::string, Json> ledger_pods_;
  std::map<std::string, std::string> pod_ips_;  // pod name → its address, once running

  void SyncStore(const kube::Resource& r, kube::Store& store) {
    for (const std::string& key : store.Keys()) store.Remove(key);
    for (const Json& o : api_.Objects(r)) {
      // Like the operator's informers: children only when they carry the job label.
      if (&r == &kube::resources::kDLJobs || !OwnerJobKey(o).empty()) store.Upsert(o);
    }
  }
};

}  // namespace dljob::controller::testing
