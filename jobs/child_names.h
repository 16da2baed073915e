// The names of the objects a DLJob owns, and how long a job's name may be so that every one of
// them is a name the API server accepts.
//
// Each child is named after its job: `<job>-worker` (the headless Service, and the pods'
// subdomain), `<job>-config` (ConfigMap), `<job>-ssh` (Secret), `<job>-worker-<i>` (worker Pod,
// also its hostname) and `<job>-launcher` (launcher Pod). The API server takes a Service name
// only as a DNS-1035 label (a lowercase letter first, at most 63 characters) and a pod's hostname
// and subdomain only as DNS-1123 labels (at most 63); the job's name is the value of every
// child's dljob.io/job-name label (at most 63). So a job's name must be a DNS-1035 label no
// longer than 63 minus the longest suffix its children add, which depends on its largest worker
// index (MaxJobNameLength). validation.h applies the rule; the operator's builders
// (operator/controller/builders.h) name the children with these functions, so the rule and the
// names cannot drift. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "jobs/dljob_types.h"

namespace dljob {

// The longest name Kubernetes takes for a Service, a hostname, a subdomain or a label value.
inline constexpr size_t kMaxChildNameLength = 63;

std::string WorkerName(const DLJob& job, int64_t index);  // pod name and hostname
std::string WorkerName(const std::string& job_name, int64_t index);
std::string LauncherName(const DLJob& job);
std::string LauncherName(const std::string& job_name);  // for a reader that has only the name
std::string ServiceName(const DLJob& job);              // also the worker pods' subdomain
std::string ConfigMapName(const DLJob& job);
std::string SshSecretName(const DLJob& job);
int64_t WorkerCount(const DLJob& job);  // gpus / gpusPerWorker (0 when either is unset or bad)

// An elastic job's sizes in whole workers: spec.elastic's minGpus and maxGpus over gpusPerWorker.
struct WorkerRange {
  int64_t min = 0;
  int64_t max = 0;
  bool Contains(int64_t workers) const { return workers >= min && workers <= max; }
};
// nullopt for a rigid job (no spec.elastic) or one without a usable gpusPerWorker.
std::optional<WorkerRange> ElasticWorkers(const DLJob& job);

// The longest suffix a child of a job with `workers` workers adds to the job's name (the
// longer of "-launcher" and "-worker-<workers-1>", the worker's on a tie: a pod's hostname is
// what must fit; `workers` below 1 counts as 1).
std::string LongestChildSuffix(int64_t workers);
// kMaxChildNameLength - LongestChildSuffix(workers): 54 for up to 10 workers, 53 up to 100, …
size_t MaxJobNameLength(int64_t workers);

}  // namespace dljob
