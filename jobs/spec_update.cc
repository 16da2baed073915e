// See spec_update.h.
#include "jobs/spec_update.h"

#include <algorithm>
#include <string_view>

#include <nlohmann/json.hpp>

#include "jobs/codec.h"
#include "jobs/defaults.h"
#include "jobs/spec_revision.h"

namespace dljob {
namespace {

using nlohmann::json;

// How long a field may change (spec_update.h).
enum class Mutability {
  kUntilFinished,  // read on every pass
  kUntilBound,     // read by the queue until the gang is bound
  kByRestart,      // baked into the pods: applied by restarting the whole job
  kUntilStarted,   // the gang's shape: fixed when the job's children are first made
  kAlways,         // has an effect even after the job finished
};

bool HasPrefix(std::string_view path, std::string_view prefix) {
  return path == prefix || (path.size() > prefix.size() &&
                            path.substr(0, prefix.size()) == prefix && path[prefix.size()] == '.');
}

Mutability MutabilityOf(std::string_view path) {
  if (path == "spec.runPolicy.ttlSecondsAfterFinished") return Mutability::kAlways;
  if (HasPrefix(path, "spec.elastic")) return Mutability::kUntilStarted;
  if (!ShapesPods(path)) {  // read afresh by the operator: no pod is made from it
    return path == "spec.scheduling.queue" ? Mutability::kUntilBound : Mutability::kUntilFinished;
  }
  if (path == "spec.gpus" || path == "spec.gpusPerWorker" || HasPrefix(path, "spec.mpi")) {
    return Mutability::kUntilStarted;
  }
  return Mutability::kByRestart;
}

// Appends the paths under `prefix` where `a` and `b` differ; objects are compared key by key,
// anything else (lists, scalars) as a whole.
void Diff(const json& a, const json& b, const std::string& prefix, std::vector<std::string>& out) {
  if (!a.is_object() || !b.is_object()) {
    if (a != b) out.push_back(prefix);
    return;
  }
  static const json kMissing;  // null
  for (const auto& [key, value] : a.items()) {
    Diff(value, b.contains(key) ? b[key] : kMissing, prefix + "." + key, out);
  }
  for (const auto& [key, value] : b.items()) {
    if (!a.contains(key)) Diff(kMissing, value, prefix + "." + key, out);
  }
}

json DefaultedSpec(DLJob job) {
  ApplyDefaults(job);
  json tree = EncodeTree(job);
  return tree.contains("spec") ? tree["spec"] : json::object();
}

bool IsBound(JobPhase phase) {
  return phase == JobPhase::kScheduled || phase == JobPhase::kRunning ||
         phase == JobPhase::kRestarting;
}

// What to do instead, for a job that will start again from `new_job`'s spec.
std::string SuspendFirst(const DLJob& new_job) {
  return std::string(
             "; set spec.runPolicy.suspend to true first (in this update or before), then "
             "change it: the job starts again with the new spec, ") +
         (new_job.spec.checkpoint ? "from its checkpoint" : "from the start (no spec.checkpoint)");
}

}  // namespace

std::vector<std::string> ChangedSpecFields(const DLJob& old_job, const DLJob& new_job) {
  std::vector<std::string> out;
  Diff(DefaultedSpec(old_job), DefaultedSpec(new_job), "spec", out);
  std::sort(out.begin(), out.end());
  return out;
}

FieldErrors CheckSpecUpdate(const DLJob& old_job, const DLJob& new_job) {
  const JobPhase phase = old_job.status.phase;
  const std::string name = PhaseName(phase);
  const bool suspending = new_job.spec.run_policy.suspend.value_or(false);
  FieldErrors errors;
  for (const std::string& path : ChangedSpecFields(old_job, new_job)) {
    Mutability m = MutabilityOf(path);
    if (IsFinished(phase)) {
      if (m != Mutability::kAlways) {
        errors.push_back({path, "cannot change once the job has " + name +
                                    "; it will not run again: create a new job instead"});
      }
      continue;
    }
    if (m == Mutability::kUntilBound && IsBound(phase) && !suspending) {
      errors.push_back({path, "cannot change while the job is " + name +
                                  " (its GPUs are counted in its queue)" + SuspendFirst(new_job)});
    } else if (m == Mutability::kUntilStarted && phase != JobPhase::kUnset) {
      errors.push_back({path, "cannot change once the job has started (it is " + name +
                                  "): its workers, ranks and hostfile were made from it; delete "
                                  "the job and create it again with the new value"});
    }
  }
  return errors;
}

}  // namespace dljob
