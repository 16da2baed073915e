// DLJobs and their pods as the operator end-to-end tests create, read and drive them, through the
// kube::Api of a TestCluster (tests/operator/test_cluster.h) and its /_test control API.
//
// Reads tolerate API errors (an injected fault, a restarting server) by answering "nothing
// known", so they can sit inside polling predicates. Everything lives in the namespace Ns().
// Thread-safe as the Api is.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/api.h"
#include "kube/object_fields.h"
#include "tests/operator/control_client.h"
#include "tests/operator/e2e_cluster.h"

namespace dljob::testing {

using Json = nlohmann::json;
// The namespace the test's jobs live in: "default" on dljob-test-apiserver, a fresh one per test
// on a real cluster. Set by the fixture before a test body runs (tests run one at a time).
const std::string& Ns();
void SetNs(std::string ns);

// A DLJob with `gpus` ranks in workers of `gpus_per_worker`, backoffLimit `backoff_limit`.
Json NewJob(const std::string& name, int gpus, int gpus_per_worker, int backoff_limit = 0);

// The job as the server has it; nullopt when absent or unreadable.
std::optional<Json> GetJob(kube::Api& api, const std::string& name);
// status.phase ("" when unset, "<absent>" when the job cannot be read).
std::string Phase(kube::Api& api, const std::string& name);
// Polls (testing/wait.h) until the job's phase is `phase`; false after timeout_ms.
bool WaitForPhase(kube::Api& api, const std::string& job, const std::string& phase, int timeout_ms);
// The reason of the condition named after the job's phase ("" when none).
std::string PhaseReason(const Json& job);
int64_t Restarts(const Json& job);

// The job's pods (label dljob.io/job-name), or every labelled pod when `job` is "".
// nullopt when the list failed.
std::optional<std::vector<Json>> JobPods(kube::Api& api, const std::string& job);
// The same, empty when the list failed (for range-for over a value, never a dangling temporary).
std::vector<Json> PodsNow(kube::Api& api, const std::string& job);
std::string Role(const Json& pod);   // "worker" | "launcher"
std::string JobOf(const Json& pod);  // its dljob.io/job-name label
std::string PodPhase(const Json& pod);
// An object's name and uid and a pod's node, as everywhere (kube/object_fields.h).
using kube::NameOf;
using kube::NodeNameOf;
using kube::UidOf;
int64_t Incarnation(const Json& pod);
bool IsDeleting(const Json& object);
// Whether the job is Running again after a whole-job restart: `restarts` counted and exactly
// `pods` pods, every one new (no uid of `old_uids`), of incarnation `restarts` and Running.
bool RestartedWhole(kube::Api& api, const std::string& job, const std::set<std::string>& old_uids,
                    int64_t restarts, size_t pods);

// Whether the server answers 404 for the object (false while it exists or cannot be read).
bool Absent(kube::Api& api, const kube::Resource& resource, const std::string& ns,
            const std::string& name);
// The status condition of that type of a job or pod (an empty object when it has none).
Json ConditionOf(const Json& object, const std::string& type);
// The job's worker pods (empty when the list failed).
std::vector<Json> Workers(kube::Api& api, const std::string& job);
// The Events about the job with this reason, oldest first; waits up to 10 s for the first one
// (empty when none came or the list fails).
std::vector<Json> EventsOf(kube::Api& api, const std::string& job, const std::string& reason);

// GPUs (nvidia.com/gpu limits) of the live pods bound to each node.
std::map<std::string, int> GpusInUse(const std::vector<Json>& pods);
// The uid of the object's controller ownerReference ("" when none).
std::string OwnerUid(const Json& object);
// Ends the training of every job among `pods` whose launcher runs (and is not being deleted),
// with the exit code `code_for(job)` says (E2eCluster::EndTraining; errors ignored: the caller
// polls).
void EndRunningJobs(E2eCluster& cluster, const std::vector<Json>& pods,
                    const std::function<int(const std::string& job)>& code_for);

// Marks every pod of `pods` that has not finished Running and Ready (as a kubelet would once a
// pod is bound); returns whether every call succeeded.
bool MarkRunning(const ControlClient& control, const std::vector<Json>& pods);
// Ends `pod` with `exit_code` (Succeeded for 0, Failed otherwise).
Status Finish(const ControlClient& control, const std::string& pod, int exit_code);
// The job's status and its pods (name, role, phase, node, incarnation), for failure messages.
std::string Describe(kube::Api& api, const std::string& job);
// A metric line as dljob-train's `rank` prints it (no newline).
std::string MetricReport(int rank, int step, double images_per_sec, int world_size);
// The holder of the operators' Lease (dljob-operator in Ns()); "" when none or unreadable.
std::string LeaseHolder(kube::Api& api);

}  // namespace dljob::testing
