// Validate: every rule of validation.h over a whole DLJob. Paths are built from the field
// tables' JSON names (dljob_fields.h), the names the decoder reads, and the allowed values of
// enum-like fields are the tables' lists.
#include "jobs/validation.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include "jobs/child_names.h"
#include "jobs/dljob_fields.h"
#include "jobs/field_checker.h"
#include "jobs/field_path.h"
#include "jobs/volume_source.h"

namespace dljob {
namespace {

using validation_internal::At;
using validation_internal::Checker;
using validation_internal::CheckStringMap;
using validation_internal::IsOneOf;

// `workers`: how many workers the job has (its name must leave room for their names).
void CheckMetadata(Checker& c, const std::string& path, const ObjectMeta& m, int64_t workers) {
  if (m.name.empty() && !m.generate_name.empty()) {  // the name is made from generateName
    c.Check(At(path, &ObjectMeta::generate_name), CheckGenerateName(m.generate_name, workers));
  } else if (m.name.empty()) {
    c.Check(At(path, &ObjectMeta::name),
            "required, or metadata.generateName: a prefix (e.g. \"resnet50-\") to which random "
            "characters are added");
  } else {
    c.Check(At(path, &ObjectMeta::name), CheckJobName(m.name, workers));
  }
  if (!m.namespace_.empty()) {
    c.Check(At(path, &ObjectMeta::namespace_), CheckDnsLabel(m.namespace_));
  }
  CheckStringMap(c, At(path, &ObjectMeta::labels), m.labels, /*values_are_labels=*/true);
  CheckStringMap(c, At(path, &ObjectMeta::annotations), m.annotations, /*values_are_labels=*/false);
}

bool HasSpaceOrControl(const std::string& s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return true;
  }
  return false;
}

void CheckContainer(Checker& c, const std::string& spec, const DLJobSpec& s) {
  std::string image = At(spec, &DLJobSpec::image), command = At(spec, &DLJobSpec::command);
  if (s.image.empty()) {
    c.Check(image, "required: the container image every rank runs");
  } else if (HasSpaceOrControl(s.image)) {
    c.Check(image, "must not contain whitespace or control characters, got " + Quote(s.image));
  }
  if (s.command.empty()) {
    c.Check(command, "required: the program each rank runs, e.g. [dljob-train, ...]");
  } else if (s.command[0].empty()) {
    c.Check(JoinIndex(command, 0), "must name a program, got an empty string");
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < s.env.size(); ++i) {
    std::string path = At(JoinIndex(At(spec, &DLJobSpec::env), i), &EnvVar::name);
    c.Check(path, CheckEnvVarName(s.env[i].name));
    if (!s.env[i].name.empty() && !seen.insert(s.env[i].name).second) {
      c.Check(path, "duplicate environment variable " + Quote(s.env[i].name));
    }
  }
  if (!s.working_dir.empty()) {
    c.Check(At(spec, &DLJobSpec::working_dir), CheckAbsolutePath(s.working_dir));
  }
}

// "try 4 or 8": the divisors of gpus nearest below and above `per_worker`.
std::string SuggestDivisors(int64_t gpus, int64_t per_worker) {
  int64_t below = per_worker, above = per_worker;
  while (below > 1 && gpus % below != 0) --below;
  while (above < gpus && gpus % above != 0) ++above;
  std::string out = "try " + std::to_string(below);
  if (above != below) out += " or " + std::to_string(above);
  return out;
}

void CheckGpus(Checker& c, const std::string& spec, const DLJobSpec& s) {
  std::string total = At(spec, &DLJobSpec::gpus), per_path = At(spec, &DLJobSpec::gpus_per_worker);
  if (!s.gpus && !s.elastic) {  // with elastic, defaulting sets it to maxGpus
    c.Check(total, "required: the total number of GPUs (one MPI rank each)");
  } else if (*s.gpus < 1) {
    c.Check(total, "must be a positive integer, got " + std::to_string(*s.gpus));
  } else if (*s.gpus > kMaxGpus) {
    c.Check(total,
            "must be at most " + std::to_string(kMaxGpus) + ", got " + std::to_string(*s.gpus));
  }
  if (!s.gpus_per_worker) return;
  int64_t per = *s.gpus_per_worker;
  if (per < 1) {
    c.Check(per_path, "must be a positive integer, got " + std::to_string(per));
    return;
  }
  if (!s.gpus || *s.gpus < 1 || *s.gpus > kMaxGpus) return;
  int64_t gpus = *s.gpus;
  if (per > gpus) {
    c.Check(per_path, "must not exceed " + total + " (" + std::to_string(gpus) + "), got " +
                          std::to_string(per));
  } else if (gpus % per != 0) {
    c.Check(per_path, "must divide " + total + " (" + std::to_string(gpus) +
                          ") into whole workers, got " + std::to_string(per) + " (" +
                          std::to_string(gpus) + "/" + std::to_string(per) +
                          " is not a whole number of workers); " + SuggestDivisors(gpus, per));
  }
}

// Both ends of the range whole workers, min ≤ max, and spec.gpus (the most the job asks for)
// equal to maxGpus.
void CheckElastic(Checker& c, const std::string& spec, const DLJobSpec& s) {
  const ElasticSpec& e = *s.elastic;
  using E = ElasticSpec;
  const std::string path = At(spec, &DLJobSpec::elastic);
  const std::string min_path = At(path, &E::min_gpus), max_path = At(path, &E::max_gpus);
  const std::optional<int64_t> per =
      s.gpus_per_worker && *s.gpus_per_worker >= 1 ? s.gpus_per_worker : std::nullopt;
  auto check_end = [&](const std::string& at, const std::optional<int64_t>& v, const char* what) {
    if (!v) {
      c.Check(at, std::string("required: the ") + what + " GPUs the job may run on");
      return false;
    }
    if (*v < 1 || *v > kMaxGpus) {
      c.Check(at, "must be from 1 to " + std::to_string(kMaxGpus) + ", got " + std::to_string(*v));
      return false;
    }
    if (per && *v % *per != 0) {
      c.Check(at, "must be a multiple of " + At(spec, &DLJobSpec::gpus_per_worker) + " (" +
                      std::to_string(*per) + "), got " + std::to_string(*v));
      return false;
    }
    return true;
  };
  const bool min_ok = check_end(min_path, e.min_gpus, "fewest");
  const bool max_ok = check_end(max_path, e.max_gpus, "most");
  if (min_ok && max_ok && *e.min_gpus > *e.max_gpus) {
    c.Check(min_path, "must not exceed " + max_path + " (" + std::to_string(*e.max_gpus) +
                          "), got " + std::to_string(*e.min_gpus));
  }
  if (max_ok && s.gpus && *s.gpus != *e.max_gpus) {
    c.Check(At(spec, &DLJobSpec::gpus),
            "must equal " + max_path + " (" + std::to_string(*e.max_gpus) +
                ") when spec.elastic is set (it is the most the job asks for), got " +
                std::to_string(*s.gpus) + "; or leave it out");
  }
}

// Syntax is CheckQuantity's; a request must also be more than zero.
bool IsPositiveQuantity(const std::string& q) {
  if (q.empty() || q[0] == '-') return false;
  for (char ch : q) {
    if (ch >= '1' && ch <= '9') return true;
    if (ch != '+' && ch != '0' && ch != '.') return false;  // reached the suffix: all zeros
  }
  return false;
}

void CheckResources(Checker& c, const std::string& path, const ResourcesSpec& r) {
  for (auto member : {&ResourcesSpec::cpu_per_gpu, &ResourcesSpec::memory_per_gpu}) {
    const std::optional<std::string>& q = r.*member;
    if (!q) continue;
    std::string reason = CheckQuantity(*q);
    if (reason.empty() && !IsPositiveQuantity(*q)) {
      reason = "must be a positive quantity, got " + Quote(*q);
    }
    c.Check(At(path, member), reason);
  }
}

void CheckCache(Checker& c, const std::string& path, const CacheSpec& cache) {
  if (!IsOneOf(cache.medium, kCacheMedia)) {
    c.Check(At(path, &CacheSpec::medium),
            "must be LocalSSD (the only supported cache medium), got " + Quote(cache.medium));
  }
  c.Check(At(path, &CacheSpec::path), CheckAbsolutePath(cache.path));
}

bool IsNested(const std::string& outer, const std::string& inner) {
  std::string prefix = outer.back() == '/' ? outer : outer + "/";
  return inner.size() > prefix.size() && inner.compare(0, prefix.size(), prefix) == 0;
}

// "must not be \"/\"" and the other rules every mountPath follows; "" when it is fine.
std::string CheckMountPath(const std::string& mount) {
  std::string reason = CheckAbsolutePath(mount);
  if (reason.empty() && mount.find_first_not_of('/') == std::string::npos) {
    reason = "must not be \"/\" (it would hide the container's filesystem)";
  }
  return reason;
}

void CheckMountPaths(Checker& c, const std::string& list, const std::vector<DataVolume>& data) {
  for (size_t i = 0; i < data.size(); ++i) {
    std::string path = At(JoinIndex(list, i), &DataVolume::mount_path);
    const std::string& mount = data[i].mount_path;
    std::string reason = CheckMountPath(mount);
    if (!reason.empty()) {
      c.Check(path, reason);
      continue;
    }
    for (size_t j = 0; j < i; ++j) {
      const std::string& other = data[j].mount_path;
      if (other.empty()) continue;
      if (other == mount) {
        c.Check(path, "duplicate mountPath " + Quote(mount) + " (also " + JoinIndex(list, j) + ")");
      } else if (IsNested(other, mount) || IsNested(mount, other)) {
        c.Check(path, "mountPath " + Quote(mount) + " overlaps " +
                          At(JoinIndex(list, j), &DataVolume::mount_path) + " " + Quote(other) +
                          "; mounts must not be nested");
      }
    }
  }
}

void CheckData(Checker& c, const std::string& list, const std::vector<DataVolume>& data) {
  std::set<std::string> names;
  for (size_t i = 0; i < data.size(); ++i) {
    const DataVolume& d = data[i];
    std::string path = JoinIndex(list, i), name = At(path, &DataVolume::name);
    if (d.name.empty()) {
      c.Check(name, "required");
    } else {
      c.Check(name, CheckDnsLabel(d.name));
      if (!names.insert(d.name).second) c.Check(name, "duplicate name " + Quote(d.name));
    }
    Result<VolumeSource> source = ParseVolumeSource(d.source);
    if (!source.ok()) c.Check(At(path, &DataVolume::source), source.status().message());
    if (d.secret_name) {
      if (source.ok() && source->kind != VolumeSource::Kind::kOss) {
        c.Check(At(path, &DataVolume::secret_name),
                "only oss:// sources take a Secret; remove it or use an oss:// source");
      } else {
        c.Check(At(path, &DataVolume::secret_name), CheckDnsSubdomain(*d.secret_name));
      }
    }
    if (d.cache) CheckCache(c, At(path, &DataVolume::cache), *d.cache);
  }
  CheckMountPaths(c, list, data);
}

void CheckCheckpoint(Checker& c, const std::string& spec, const DLJobSpec& s) {
  const CheckpointSpec& ckpt = *s.checkpoint;
  using C = CheckpointSpec;
  std::string path = At(spec, &DLJobSpec::checkpoint), source = At(path, &C::source);
  if (ckpt.source.empty()) {
    c.Check(source, "required: where checkpoints are kept, e.g. pvc:ckpt-claim/resnet50");
  } else if (Result<VolumeSource> v = ParseVolumeSource(ckpt.source); !v.ok()) {
    c.Check(source, v.status().message());
  } else if (v->kind == VolumeSource::Kind::kOss) {
    c.Check(source,
            "oss:// cannot hold checkpoints: object storage is mounted read-only for data (and a "
            "local run reads a fetched copy), so nothing written there would last; use pvc:, "
            "nas:// or hostPath:");
  }
  if (ckpt.mount_path) {
    std::string mount_path = At(path, &C::mount_path);
    const std::string& mount = *ckpt.mount_path;
    if (std::string reason = CheckMountPath(mount); !reason.empty()) {
      c.Check(mount_path, reason);
    } else {
      std::string data = At(spec, &DLJobSpec::data);
      for (size_t i = 0; i < s.data.size(); ++i) {
        const std::string& other = s.data[i].mount_path;
        if (!CheckMountPath(other).empty()) continue;  // reported as it is
        if (other == mount || IsNested(other, mount) || IsNested(mount, other)) {
          c.Check(mount_path, "mountPath " + Quote(mount) + " overlaps " +
                                  At(JoinIndex(data, i), &DataVolume::mount_path) + " " +
                                  Quote(other) + "; checkpoints need a directory of their own");
        }
      }
    }
  }
  constexpr int64_t kMax = INT64_MAX;
  c.Range(At(path, &C::every_steps), ckpt.every_steps, 1, kMax, "a positive number of steps");
  c.Range(At(path, &C::every_seconds), ckpt.every_seconds, 1, kMax, "a positive number of seconds");
  c.Range(At(path, &C::keep), ckpt.keep, 1, INT32_MAX, "a positive number of checkpoints");
}

void CheckMpi(Checker& c, const std::string& spec, const DLJobSpec& s) {
  const MpiSpec& mpi = s.mpi;
  std::string path = At(spec, &DLJobSpec::mpi);
  if (mpi.implementation && !IsOneOf(*mpi.implementation, kMpiImplementations)) {
    const std::string& name = *mpi.implementation;
    bool known = name == "MPICH" || name == "IntelMPI" || name == "MVAPICH2" || name == "MVAPICH";
    std::string supported = " (supported: " + JoinOr(kMpiImplementations) + ")";
    c.Check(At(path, &MpiSpec::implementation),
            known ? name + " is not supported" + supported
                  : "unknown MPI implementation " + Quote(name) + supported);
  }
  if (mpi.slots_per_worker) {
    int64_t slots = *mpi.slots_per_worker;
    std::string slots_path = At(path, &MpiSpec::slots_per_worker);
    if (slots < 1) {
      c.Check(slots_path, "must be a positive integer, got " + std::to_string(slots));
    } else if (s.gpus_per_worker && *s.gpus_per_worker >= 1 && slots > *s.gpus_per_worker) {
      c.Check(slots_path, "must not exceed " + At(spec, &DLJobSpec::gpus_per_worker) + " (" +
                              std::to_string(*s.gpus_per_worker) + "), got " +
                              std::to_string(slots));
    }
  }
  c.Range(At(path, &MpiSpec::ssh_port), mpi.ssh_port, 1, 65535, "a port number from 1 to 65535");
}

void CheckRunPolicy(Checker& c, const std::string& path, const RunPolicy& p) {
  constexpr int64_t kMax = INT64_MAX;
  using R = RunPolicy;
  c.Range(At(path, &R::backoff_limit), p.backoff_limit, 0, kMax, "zero or more");
  c.Range(At(path, &R::active_deadline_seconds), p.active_deadline_seconds, 1, kMax,
          "a positive number of seconds");
  c.Range(At(path, &R::progress_deadline_seconds), p.progress_deadline_seconds, 1, kMax,
          "a positive number of seconds");
  c.Range(At(path, &R::ttl_seconds_after_finished), p.ttl_seconds_after_finished, 0, kMax,
          "zero or more seconds");
  c.OneOf(At(path, &R::clean_pod_policy), p.clean_pod_policy, kCleanPodPolicies);
}

void CheckToleration(Checker& c, const std::string& path, const Toleration& t) {
  std::string key = At(path, &Toleration::key), value = At(path, &Toleration::value);
  if (!t.key.empty()) c.Check(key, CheckLabelKey(t.key));
  if (t.operator_ == "Exists") {
    if (!t.value.empty()) {
      c.Check(value, "must be empty when operator is Exists, got " + Quote(t.value));
    }
  } else if (t.operator_ == "Equal" || t.operator_.empty()) {
    if (t.key.empty()) c.Check(key, "required when operator is Equal (or use Exists)");
    c.Check(value, CheckLabelValue(t.value));
  } else {
    c.Check(At(path, &Toleration::operator_),
            "must be " + JoinOr(kTolerationOperators) + ", got " + Quote(t.operator_));
  }
  const std::string& e = t.effect;
  if (!IsOneOf(e, kTaintEffects)) {
    c.Check(At(path, &Toleration::effect),
            "must be NoSchedule, PreferNoSchedule, NoExecute or empty (all), got " + Quote(e));
  }
  if (t.toleration_seconds && e != "NoExecute") {
    c.Check(At(path, &Toleration::toleration_seconds), "only applies when effect is NoExecute");
  }
}

void CheckScheduling(Checker& c, const std::string& path, const SchedulingSpec& s) {
  using S = SchedulingSpec;
  if (s.queue) c.Check(At(path, &S::queue), CheckDnsLabel(*s.queue));
  c.Range(At(path, &S::priority), s.priority, INT32_MIN, INT32_MAX, "a 32-bit integer");
  c.OneOf(At(path, &S::topology), s.topology, kTopologies);
  CheckStringMap(c, At(path, &S::node_selector), s.node_selector, /*values_are_labels=*/true);
  for (size_t i = 0; i < s.tolerations.size(); ++i) {
    CheckToleration(c, JoinIndex(At(path, &S::tolerations), i), s.tolerations[i]);
  }
  if (s.affinity) validation_internal::CheckAffinity(c, At(path, &S::affinity), *s.affinity);
}

}  // namespace

void validation_internal::CheckStringMap(Checker& c, const std::string& path,
                                         const std::map<std::string, std::string>& m,
                                         bool values_are_labels) {
  for (const auto& [key, value] : m) {
    std::string entry = JoinKey(path, key);
    c.Check(entry, CheckLabelKey(key));
    if (values_are_labels) c.Check(entry, CheckLabelValue(value));
  }
}

FieldErrors Validate(const DLJob& job) {
  FieldErrors errors;
  Checker c(errors);
  if (job.api_version != kApiVersion) {
    c.Check(At("", &DLJob::api_version),
            "must be " + std::string(kApiVersion) + ", got " + Quote(job.api_version));
  }
  if (job.kind != kKind) c.Check(At("", &DLJob::kind), "must be DLJob, got " + Quote(job.kind));
  // An invalid gpus or gpusPerWorker is reported on its own; the name is judged for one worker.
  int64_t workers = std::clamp<int64_t>(WorkerCount(job), 1, kMaxGpus);
  CheckMetadata(c, At("", &DLJob::metadata), job.metadata, workers);
  const DLJobSpec& s = job.spec;
  std::string spec = At("", &DLJob::spec);
  CheckContainer(c, spec, s);
  CheckGpus(c, spec, s);
  CheckResources(c, At(spec, &DLJobSpec::resources), s.resources);
  CheckData(c, At(spec, &DLJobSpec::data), s.data);
  if (s.checkpoint) CheckCheckpoint(c, spec, s);
  if (s.elastic) CheckElastic(c, spec, s);
  CheckMpi(c, spec, s);
  CheckRunPolicy(c, At(spec, &DLJobSpec::run_policy), s.run_policy);
  CheckScheduling(c, At(spec, &DLJobSpec::scheduling), s.scheduling);
  return errors;
}

}  // namespace dljob
