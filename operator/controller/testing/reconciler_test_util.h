// The world the reconciler tests run in: a FakeApi with GPU nodes, informer-like caches filled
// from it on demand (Sync), a FakeClock, a fixed SSH key, and a kubelet stand-in that moves pods.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/testing/fake_clock.h"
#include "jobs/codec.h"
#include "jobs/defaults.h"
#include "kube/testing/fake_api.h"
#include "operator/controller/children.h"
#include "operator/controller/reconciler.h"

namespace dljob::controller::testing {

using dljob::testing::FakeClock;
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
    SyncStore(kube::resources::kPods, pods_);
    SyncStore(kube::resources::kServices, services_);
    SyncStore(kube::resources::kConfigMaps, config_maps_);
    SyncStore(kube::resources::kSecrets, secrets_);
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
  Json Body(const std::string& call) const {
    for (const Call& c : api_.Calls()) {
      if (c.ToString() == call) return c.body;
    }
    ADD_FAILURE() << "no call " << call;
    return nullptr;
  }

  // The kubelet: moves a pod to `phase` (Ready when Running and `ready`).
  void SetPod(const std::string& name, const std::string& phase, bool ready = true,
              int exit_code = 0) {
    Json pod = *api_.Object(kube::resources::kPods, "ns", name);
    pod["status"] = {{"phase", phase}};
    if (phase == "Running") {
      pod["status"]["conditions"] = {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}};
    }
    if (phase == "Failed" || phase == "Succeeded") {
      Json terminated = {{"exitCode", exit_code},
                         {"reason", phase == "Failed" ? "Error" : "Completed"}};
      Json state = {{"terminated", terminated}};
      pod["status"]["containerStatuses"] = Json::array({{{"name", "c"}, {"state", state}}});
    }
    api_.Put(kube::resources::kPods, pod);
  }

  FakeApi api_;
  FakeClock clock_;
  Store jobs_;
  Store pods_{OwnerJobKey};
  Store services_;
  Store config_maps_;
  Store secrets_;
  ReconcilerOptions options_;
  GpuLedger ledger_{clock_};
  Reconciler reconciler_{api_, clock_,
                         Caches{jobs_, pods_, services_, config_maps_, secrets_, ledger_}, options_,
                         FixedKeys};

 private:
  // Like the operator's node and bound-pod informers: every node, every pod (any label).
  void SyncLedger() {
    std::map<std::string, Json> pods;
    for (const Json& o : api_.Objects(kube::resources::kNodes)) ledger_.UpsertNode(o);
    for (const Json& o : api_.Objects(kube::resources::kPods)) {
      ledger_.UpsertPod(o);
      pods[ObjectKey(o)] = o;
    }
    for (const auto& [key, o] : ledger_pods_) {
      if (!pods.count(key)) ledger_.RemovePod(o);
    }
    ledger_pods_ = std::move(pods);
  }
  std::map<std::string, Json> ledger_pods_;

  void SyncStore(const kube::Resource& r, Store& store) {
    for (const std::string& key : store.Keys()) store.Remove(key);
    for (const Json& o : api_.Objects(r)) {
      // Like the operator's informers: children only when they carry the job label.
      if (&r == &kube::resources::kDLJobs || !OwnerJobKey(o).empty()) store.Upsert(o);
    }
  }
};

}  // namespace dljob::controller::testing
