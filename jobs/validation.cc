// Validate: every rule of validation.h over a whole DLJob.
#include "jobs/validation.h"

#include <cstdint>
#include <set>

#include "jobs/field_path.h"
#include "jobs/volume_source.h"

namespace dljob {
namespace {

class Checker {
 public:
  explicit Checker(FieldErrors& errors) : errors_(errors) {}
  // Records `path: reason` unless reason is empty (the rule passed).
  void Check(const std::string& path, const std::string& reason) {
    if (!reason.empty()) errors_.push_back(FieldError{path, reason});
  }
  // For an optional integer that must lie in [min, max] when set.
  void Range(const std::string& path, const std::optional<int64_t>& v, int64_t min, int64_t max,
             const std::string& what) {
    if (v && (*v < min || *v > max)) Check(path, "must be " + what + ", got " + std::to_string(*v));
  }
  template <typename T>
  void OneOf(const std::string& path, const std::optional<std::string>& v,
             std::initializer_list<T> allowed, const std::string& list) {
    if (!v) return;
    for (const T& a : allowed) {
      if (*v == a) return;
    }
    Check(path, "must be " + list + ", got " + Quote(*v));
  }

 private:
  FieldErrors& errors_;
};

void CheckStringMap(Checker& c, const std::string& path,
                    const std::map<std::string, std::string>& m, bool values_are_labels) {
  for (const auto& [key, value] : m) {
    std::string entry = JoinKey(path, key);
    c.Check(entry, CheckLabelKey(key));
    if (values_are_labels) c.Check(entry, CheckLabelValue(value));
  }
}

void CheckMetadata(Checker& c, const ObjectMeta& m) {
  c.Check("metadata.name", CheckName(m.name));
  if (!m.namespace_.empty()) c.Check("metadata.namespace", CheckDnsLabel(m.namespace_));
  CheckStringMap(c, "metadata.labels", m.labels, /*values_are_labels=*/true);
  CheckStringMap(c, "metadata.annotations", m.annotations, /*values_are_labels=*/false);
}

bool HasSpaceOrControl(const std::string& s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return true;
  }
  return false;
}

void CheckContainer(Checker& c, const DLJobSpec& s) {
  if (s.image.empty()) {
    c.Check("spec.image", "required: the container image every rank runs");
  } else if (HasSpaceOrControl(s.image)) {
    c.Check("spec.image", "must not contain whitespace or control characters, got " + Quote(s.image));
  }
  if (s.command.empty()) {
    c.Check("spec.command", "required: the program each rank runs, e.g. [dljob-train, ...]");
  } else if (s.command[0].empty()) {
    c.Check("spec.command[0]", "must name a program, got an empty string");
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < s.env.size(); ++i) {
    std::string path = JoinIndex("spec.env", i) + ".name";
    c.Check(path, CheckEnvVarName(s.env[i].name));
    if (!s.env[i].name.empty() && !seen.insert(s.env[i].name).second) {
      c.Check(path, "duplicate environment variable " + Quote(s.env[i].name));
    }
  }
  if (!s.working_dir.empty()) c.Check("spec.workingDir", CheckAbsolutePath(s.working_dir));
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

void CheckGpus(Checker& c, const DLJobSpec& s) {
  if (!s.gpus) {
    c.Check("spec.gpus", "required: the total number of GPUs (one MPI rank each)");
  } else if (*s.gpus < 1) {
    c.Check("spec.gpus", "must be a positive integer, got " + std::to_string(*s.gpus));
  } else if (*s.gpus > kMaxGpus) {
    c.Check("spec.gpus", "must be at most " + std::to_string(kMaxGpus) + ", got " +
                             std::to_string(*s.gpus));
  }
  if (!s.gpus_per_worker) return;
  int64_t per = *s.gpus_per_worker;
  if (per < 1) {
    c.Check("spec.gpusPerWorker", "must be a positive integer, got " + std::to_string(per));
    return;
  }
  if (!s.gpus || *s.gpus < 1 || *s.gpus > kMaxGpus) return;
  int64_t gpus = *s.gpus;
  if (per > gpus) {
    c.Check("spec.gpusPerWorker", "must not exceed spec.gpus (" + std::to_string(gpus) +
                                      "), got " + std::to_string(per));
  } else if (gpus % per != 0) {
    c.Check("spec.gpusPerWorker",
            "must divide spec.gpus (" + std::to_string(gpus) + ") into whole workers, got " +
                std::to_string(per) + " (" + std::to_string(gpus) + "/" + std::to_string(per) +
                " is not a whole number of workers); " + SuggestDivisors(gpus, per));
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

void CheckResources(Checker& c, const ResourcesSpec& r) {
  for (const auto& [path, q] : {std::pair{"spec.resources.cpuPerGpu", &r.cpu_per_gpu},
                                std::pair{"spec.resources.memoryPerGpu", &r.memory_per_gpu}}) {
    if (!*q) continue;
    std::string reason = CheckQuantity(**q);
    if (reason.empty() && !IsPositiveQuantity(**q)) {
      reason = "must be a positive quantity, got " + Quote(**q);
    }
    c.Check(path, reason);
  }
}

void CheckCache(Checker& c, const std::string& path, const CacheSpec& cache) {
  if (cache.medium != "LocalSSD") {
    c.Check(path + ".medium",
            "must be LocalSSD (the only supported cache medium), got " + Quote(cache.medium));
  }
  c.Check(path + ".path", CheckAbsolutePath(cache.path));
}

bool IsNested(const std::string& outer, const std::string& inner) {
  std::string prefix = outer.back() == '/' ? outer : outer + "/";
  return inner.size() > prefix.size() && inner.compare(0, prefix.size(), prefix) == 0;
}

void CheckMountPaths(Checker& c, const std::vector<DataVolume>& data) {
  for (size_t i = 0; i < data.size(); ++i) {
    std::string path = JoinIndex("spec.data", i) + ".mountPath";
    const std::string& mount = data[i].mount_path;
    std::string reason = CheckAbsolutePath(mount);
    if (reason.empty() && mount.find_first_not_of('/') == std::string::npos) {
      reason = "must not be \"/\" (it would hide the container's filesystem)";
    }
    if (!reason.empty()) {
      c.Check(path, reason);
      continue;
    }
    for (size_t j = 0; j < i; ++j) {
      const std::string& other = data[j].mount_path;
      if (other.empty()) continue;
      if (other == mount) {
        c.Check(path, "duplicate mountPath " + Quote(mount) + " (also spec.data[" +
                          std::to_string(j) + "])");
      } else if (IsNested(other, mount) || IsNested(mount, other)) {
        c.Check(path, "mountPath " + Quote(mount) + " overlaps spec.data[" + std::to_string(j) +
                          "].mountPath " + Quote(other) + "; mounts must not be nested");
      }
    }
  }
}

void CheckData(Checker& c, const std::vector<DataVolume>& data) {
  std::set<std::string> names;
  for (size_t i = 0; i < data.size(); ++i) {
    const DataVolume& d = data[i];
    std::string path = JoinIndex("spec.data", i);
    if (d.name.empty()) {
      c.Check(path + ".name", "required");
    } else {
      c.Check(path + ".name", CheckDnsLabel(d.name));
      if (!names.insert(d.name).second) c.Check(path + ".name", "duplicate name " + Quote(d.name));
    }
    Result<VolumeSource> source = ParseVolumeSource(d.source);
    if (!source.ok()) c.Check(path + ".source", source.status().message());
    if (d.secret_name) {
      if (source.ok() && source->kind != VolumeSource::Kind::kOss) {
        c.Check(path + ".secretName",
                "only oss:// sources take a Secret; remove it or use an oss:// source");
      } else {
        c.Check(path + ".secretName", CheckDnsSubdomain(*d.secret_name));
      }
    }
    if (d.cache) CheckCache(c, path + ".cache", *d.cache);
  }
  CheckMountPaths(c, data);
}

void CheckMpi(Checker& c, const DLJobSpec& s) {
  const MpiSpec& mpi = s.mpi;
  if (mpi.implementation && *mpi.implementation != "OpenMPI") {
    const std::string& name = *mpi.implementation;
    bool known = name == "MPICH" || name == "IntelMPI" || name == "MVAPICH2" || name == "MVAPICH";
    c.Check("spec.mpi.implementation",
            known ? name + " is not supported (supported: OpenMPI)"
                  : "unknown MPI implementation " + Quote(name) + " (supported: OpenMPI)");
  }
  if (mpi.slots_per_worker) {
    int64_t slots = *mpi.slots_per_worker;
    if (slots < 1) {
      c.Check("spec.mpi.slotsPerWorker", "must be a positive integer, got " + std::to_string(slots));
    } else if (s.gpus_per_worker && *s.gpus_per_worker >= 1 && slots > *s.gpus_per_worker) {
      c.Check("spec.mpi.slotsPerWorker", "must not exceed spec.gpusPerWorker (" +
                                             std::to_string(*s.gpus_per_worker) + "), got " +
                                             std::to_string(slots));
    }
  }
  c.Range("spec.mpi.sshPort", mpi.ssh_port, 1, 65535, "a port number from 1 to 65535");
}

void CheckRunPolicy(Checker& c, const RunPolicy& p) {
  constexpr int64_t kMax = INT64_MAX;
  c.Range("spec.runPolicy.backoffLimit", p.backoff_limit, 0, kMax, "zero or more");
  c.Range("spec.runPolicy.activeDeadlineSeconds", p.active_deadline_seconds, 1, kMax,
          "a positive number of seconds");
  c.Range("spec.runPolicy.progressDeadlineSeconds", p.progress_deadline_seconds, 1, kMax,
          "a positive number of seconds");
  c.Range("spec.runPolicy.ttlSecondsAfterFinished", p.ttl_seconds_after_finished, 0, kMax,
          "zero or more seconds");
  c.OneOf("spec.runPolicy.cleanPodPolicy", p.clean_pod_policy, {"All", "Running", "None"},
          "All, Running or None");
}

void CheckToleration(Checker& c, const std::string& path, const Toleration& t) {
  if (!t.key.empty()) c.Check(path + ".key", CheckLabelKey(t.key));
  if (t.operator_ == "Exists") {
    if (!t.value.empty()) {
      c.Check(path + ".value", "must be empty when operator is Exists, got " + Quote(t.value));
    }
  } else if (t.operator_ == "Equal" || t.operator_.empty()) {
    if (t.key.empty()) c.Check(path + ".key", "required when operator is Equal (or use Exists)");
    c.Check(path + ".value", CheckLabelValue(t.value));
  } else {
    c.Check(path + ".operator", "must be Exists or Equal, got " + Quote(t.operator_));
  }
  const std::string& e = t.effect;
  if (!e.empty() && e != "NoSchedule" && e != "PreferNoSchedule" && e != "NoExecute") {
    c.Check(path + ".effect",
            "must be NoSchedule, PreferNoSchedule, NoExecute or empty (all), got " + Quote(e));
  }
  if (t.toleration_seconds && e != "NoExecute") {
    c.Check(path + ".tolerationSeconds", "only applies when effect is NoExecute");
  }
}

void CheckScheduling(Checker& c, const SchedulingSpec& s) {
  if (s.queue) c.Check("spec.scheduling.queue", CheckDnsLabel(*s.queue));
  c.Range("spec.scheduling.priority", s.priority, INT32_MIN, INT32_MAX, "a 32-bit integer");
  c.OneOf("spec.scheduling.topology", s.topology, {"Pack", "Spread"}, "Pack or Spread");
  CheckStringMap(c, "spec.scheduling.nodeSelector", s.node_selector, /*values_are_labels=*/true);
  for (size_t i = 0; i < s.tolerations.size(); ++i) {
    CheckToleration(c, JoinIndex("spec.scheduling.tolerations", i), s.tolerations[i]);
  }
}

}  // namespace

FieldErrors Validate(const DLJob& job) {
  FieldErrors errors;
  Checker c(errors);
  if (job.api_version != kApiVersion) {
    c.Check("apiVersion", "must be " + std::string(kApiVersion) + ", got " + Quote(job.api_version));
  }
  if (job.kind != kKind) c.Check("kind", "must be DLJob, got " + Quote(job.kind));
  CheckMetadata(c, job.metadata);
  CheckContainer(c, job.spec);
  CheckGpus(c, job.spec);
  CheckResources(c, job.spec.resources);
  CheckData(c, job.spec.data);
  CheckMpi(c, job.spec);
  CheckRunPolicy(c, job.spec.run_policy);
  CheckScheduling(c, job.spec.scheduling);
  return errors;
}

}  // namespace dljob
