// JobPods: the operator's typed index of its jobs' pods, kept from the pod informer's events.
//
// A pass over every job's pods (the queue scheduler's snapshot, a node's change) reads only a few
// fields of each pod: which job it belongs to, whether it is a worker of which run, where it is
// bound, whether it is going. JobPods keeps those as a PodBrief per pod, so such passes read no
// JSON, and the cache of whole pods can stay packed (kube::Store's compact mode, where each read
// unpacks). The reconciler, which reads a few pods of one job at a time, reads the whole pods from
// that cache. Thread-safe: the informer's thread writes (Upsert, Remove), any thread reads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/mutex.h"

namespace dljob::controller {

// What a pass over every pod reads of one job pod.
struct PodBrief {
  std::string key;          // namespace/name
  std::string job_key;      // OwnerJobKey: namespace/<dljob.io/job-name>
  std::string node;         // spec.nodeName; "" when not bound
  std::string phase;        // status.phase
  int64_t incarnation = 0;  // IncarnationOf: the run it was made for
  bool worker = false;      // dljob.io/role=worker
  bool deleting = false;    // metadata.deletionTimestamp is set

  // Neither finished nor being deleted.
  bool Live() const { return phase != "Succeeded" && phase != "Failed" && !deleting; }
  bool operator==(const PodBrief&) const = default;
};
using PodBriefPtr = std::shared_ptr<const PodBrief>;
using PodBriefs = std::vector<PodBriefPtr>;

PodBrief BriefOf(const nlohmann::json& pod);

// Whether a pass over the jobs counts a pod differently after it changed from `before` to `after`:
// another job, node, run or role, or it stopped (or started) being live or being deleted. A new
// phase while it stays live (Pending to Running) is not such a change.
bool QueueCountsDifferently(const PodBrief& before, const PodBrief& after);

class JobPods {
 public:
  // A pod added or changed; a pod without the job label is not kept.
  void Upsert(const nlohmann::json& pod) EXCLUDES(mu_);
  // A pod deleted (by its "namespace/name").
  void Remove(const std::string& key) EXCLUDES(mu_);

  // The job's pods ("namespace/name" of the DLJob), in key order.
  PodBriefs OfJob(const std::string& job_key) const EXCLUDES(mu_);
  // The jobs with a pod bound to `node`.
  std::set<std::string> JobsOn(const std::string& node) const EXCLUDES(mu_);
  size_t Size() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::map<std::string, PodBriefPtr> by_key_ GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> by_job_ GUARDED_BY(mu_);  // job key → pod keys
};

}  // namespace dljob::controller
