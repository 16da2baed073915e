#include "operator/controller/job_pods.h"

#include <utility>

#include "base/json_fields.h"
#include "kube/object_fields.h"
#include "operator/controller/builders.h"
#include "operator/controller/children.h"

namespace dljob::controller {

PodBrief BriefOf(const nlohmann::json& pod) {
  PodBrief b;
  b.key = kube::ObjectKey(pod);
  b.job_key = OwnerJobKey(pod);
  b.node = kube::NodeNameOf(pod);
  b.phase = StringAt(FieldOf(pod, "status"), "phase");
  b.incarnation = IncarnationOf(pod);
  b.worker = kube::LabelOf(pod, kRoleLabel) == "worker";
  b.deleting = IsDeleting(pod);
  return b;
}

bool QueueCountsDifferently(const PodBrief& before, const PodBrief& after) {
  return before.job_key != after.job_key || before.node != after.node ||
         before.incarnation != after.incarnation || before.worker != after.worker ||
         before.deleting != after.deleting || before.Live() != after.Live();
}

void JobPods::Upsert(const nlohmann::json& pod) {
  auto brief = std::make_shared<const PodBrief>(BriefOf(pod));
  if (brief->job_key.empty()) {  // not a job's pod (any more)
    Remove(brief->key);
    return;
  }
  MutexLock lock(mu_);
  PodBriefPtr& slot = by_key_[brief->key];
  if (slot && slot->job_key != brief->job_key) {
    auto it = by_job_.find(slot->job_key);
    it->second.erase(slot->key);
    if (it->second.empty()) by_job_.erase(it);
  }
  by_job_[brief->job_key].insert(brief->key);
  slot = std::move(brief);
}

void JobPods::Remove(const std::string& key) {
  MutexLock lock(mu_);
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return;
  auto job = by_job_.find(it->second->job_key);
  job->second.erase(key);
  if (job->second.empty()) by_job_.erase(job);
  by_key_.erase(it);
}

PodBriefs JobPods::OfJob(const std::string& job_key) const {
  MutexLock lock(mu_);
  PodBriefs out;
  auto it = by_job_.find(job_key);
  if (it == by_job_.end()) return out;
  out.reserve(it->second.size());
  for (const std::string& key : it->second) out.push_back(by_key_.at(key));
  return out;
}

std::set<std::string> JobPods::JobsOn(const std::string& node) const {
  MutexLock lock(mu_);
  std::set<std::string> out;
  for (const auto& [key, brief] : by_key_) {
    if (brief->node == node) out.insert(brief->job_key);
  }
  return out;
}

size_t JobPods::Size() const {
  MutexLock lock(mu_);
  return by_key_.size();
}

}  // namespace dljob::controller
