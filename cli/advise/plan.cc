#include "cli/advise/plan.h"

#include <algorithm>

#include "cli/local/local_plan.h"
#include "jobs/volume_source.h"

namespace dljob::advise {
namespace {

bool HasKind(const DLJob& job, std::initializer_list<VolumeSource::Kind> kinds) {
  for (const DataVolume& d : job.spec.data) {
    Result<VolumeSource> s = ParseVolumeSource(d.source);
    if (s.ok() && std::find(kinds.begin(), kinds.end(), s->kind) != kinds.end()) return true;
  }
  return false;
}

std::vector<int> PowersUpTo(int limit) {
  std::vector<int> out;
  for (int t = 1; t <= limit; t *= 2) out.push_back(t);
  if (out.back() != limit) out.push_back(limit);
  return out;
}

Status CheckPositive(const std::vector<int>& values, const char* flag) {
  for (int v : values) {
    if (v < 1) return Status::InvalidArgument(std::string(flag) + ": every value must be >= 1");
  }
  return Status::Ok();
}

std::vector<int> SortedUnique(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

void SetEnv(std::vector<EnvVar>& env, const std::string& name, const std::string& value) {
  for (EnvVar& e : env) {
    if (e.name == name) {
      e.value = value;
      return;
    }
  }
  env.push_back({name, value});
}

// Applies the data path to the trial's volumes (see trial.h).
void ApplyDataPath(DLJob& job, const std::string& path, const std::string& cache_path) {
  std::vector<DataVolume> kept;
  for (DataVolume d : job.spec.data) {
    Result<VolumeSource> s = ParseVolumeSource(d.source);
    const bool remote =
        s.ok() && (s->kind == VolumeSource::Kind::kOss || s->kind == VolumeSource::Kind::kNas);
    if (!remote) {
      d.cache.reset();  // local: read in place
    } else if (path == kDataCache) {
      if (!d.cache && s->kind == VolumeSource::Kind::kNas)
        d.cache = CacheSpec{"LocalSSD", cache_path};
    } else if (path == kDataStore) {
      d.cache.reset();
      if (s->kind == VolumeSource::Kind::kOss) {
        // The workload reads the bucket itself: no volume, the mount path becomes the URL.
        const std::string url = "oss://" + s->bucket + (s->path.empty() ? "" : "/" + s->path);
        for (std::string& a : job.spec.command) a = RewriteMountedPath(a, d.mount_path, url);
        for (EnvVar& e : job.spec.env) e.value = RewriteMountedPath(e.value, d.mount_path, url);
        continue;
      }
    }
    kept.push_back(std::move(d));
  }
  job.spec.data = std::move(kept);
}

}  // namespace

bool IsDljobTrain(const DLJob& job) {
  if (job.spec.command.empty()) return false;
  const std::string& p = job.spec.command[0];
  const size_t slash = p.rfind('/');
  return (slash == std::string::npos ? p : p.substr(slash + 1)) == "dljob-train";
}

std::optional<std::string> FlagValue(const std::vector<std::string>& command,
                                     const std::string& flag) {
  for (size_t i = 1; i < command.size(); ++i) {
    const std::string& a = command[i];
    if (a.rfind(flag + "=", 0) == 0) return a.substr(flag.size() + 1);
    if (a == flag && i + 1 < command.size()) return command[i + 1];
  }
  return std::nullopt;
}

std::vector<std::string> WithoutFlag(std::vector<std::string> command, const std::string& flag) {
  std::vector<std::string> out;
  for (size_t i = 0; i < command.size(); ++i) {
    const std::string& a = command[i];
    if (i > 0 && a.rfind(flag + "=", 0) == 0) continue;
    if (i > 0 && a == flag) {
      // "--flag V": V goes too, unless it is another flag (a bare boolean flag).
      if (i + 1 < command.size() && command[i + 1].rfind("--", 0) != 0) ++i;
      continue;
    }
    out.push_back(a);
  }
  return out;
}

std::vector<std::string> WithFlag(std::vector<std::string> command, const std::string& flag,
                                  const std::string& value) {
  for (size_t i = 1; i < command.size(); ++i) {
    if (command[i].rfind(flag + "=", 0) == 0) {
      command[i] = flag + "=" + value;
      return command;
    }
    if (command[i] == flag && i + 1 < command.size() && command[i + 1].rfind("--", 0) != 0) {
      command[i + 1] = value;
      return command;
    }
  }
  command.push_back(flag + "=" + value);
  return command;
}

Result<AdvisePlan> PlanAdvice(const DLJob& job, const AdviseOptions& o, int cpus,
                              bool can_limit_memory, const std::string& memory_why_not) {
  AdvisePlan plan;
  plan.cpus = std::max(1, cpus);
  plan.ranks = o.ranks > 0 ? o.ranks : static_cast<int>(job.spec.gpus.value_or(1));
  if (o.ranks < 0) return Status::InvalidArgument("--ranks: must be >= 1");
  if (o.num_batches < 1) return Status::InvalidArgument("--num-batches: must be >= 1");
  if (o.repeats < 1) return Status::InvalidArgument("--repeats: must be >= 1");
  if (o.tolerance < 0 || o.tolerance >= 1) {
    return Status::InvalidArgument("--tolerance: must be in [0, 1), e.g. 0.05 for 5%");
  }
  for (double f : o.memory_fractions) {
    if (!(f > 0 && f < 1)) {
      return Status::InvalidArgument(
          "--memory-fractions: each must be in (0, 1): a fraction of the peak measured uncapped");
    }
  }
  if (Status s = CheckPositive(o.threads, "--threads"); !s.ok()) return s;
  if (Status s = CheckPositive(o.loader_threads, "--loader-threads"); !s.ok()) return s;
  plan.dljob_train = IsDljobTrain(job);
  if (!plan.dljob_train) {
    plan.notices.push_back(
        "the command is not dljob-train: each trial runs it as written (keep "
        "it short; it must print DLJOB_METRIC lines with images_per_sec or "
        "words_per_sec)");
  }

  const int limit = std::min(plan.cpus, std::max(1, 2 * plan.cpus / plan.ranks));
  plan.threads = o.threads.empty() ? PowersUpTo(limit) : SortedUnique(o.threads);

  const std::optional<std::string> data_name = FlagValue(job.spec.command, "--data_name");
  const bool loader_used =
      plan.dljob_train && ((data_name && *data_name == "imagenet") ||
                           FlagValue(job.spec.command, "--loader_threads").has_value());
  if (!o.loader_threads.empty()) {
    if (!plan.dljob_train) return Status::InvalidArgument("--loader-threads: needs dljob-train");
    plan.loader_threads = SortedUnique(o.loader_threads);
  } else if (loader_used) {
    plan.loader_threads = PowersUpTo(plan.cpus);
  } else {
    plan.loader_note = plan.dljob_train
                           ? "not varied: --loader_threads only sizes imagenet's JPEG decoding; " +
                                 std::string(data_name ? *data_name : "fashion-mnist") +
                                 " is read into memory at start (give --loader-threads to try it)"
                           : "not varied: the command is not dljob-train";
  }

  using K = VolumeSource::Kind;
  const bool remote = HasKind(job, {K::kOss, K::kNas});
  std::vector<std::string> applicable;
  if (remote) {
    applicable = {kDataCache, kDataStore};
  } else if (!job.spec.data.empty()) {
    applicable = {kDataLocal};
  }
  if (!o.data_paths.empty()) {
    for (const std::string& p : o.data_paths) {
      if (std::find(applicable.begin(), applicable.end(), p) == applicable.end()) {
        std::string known;
        for (const std::string& a : applicable) known += (known.empty() ? "" : ", ") + a;
        return Status::InvalidArgument("--data: \"" + p + "\" does not apply to this job's data (" +
                                       (known.empty() ? "it has no spec.data" : known) + ")");
      }
    }
    plan.data_paths = o.data_paths;
  } else {
    plan.data_paths = applicable;
  }
  if (job.spec.data.empty()) {
    plan.data_note = "no spec.data: nothing to cache";
  } else if (!remote) {
    plan.data_note = "not varied: hostPath/pvc data is on local disk already; read in place";
  } else if (plan.data_paths.size() < 2) {
    plan.data_note = "not varied: only " + plan.data_paths.front() + " given";
  }
  if (plan.dljob_train && remote && (!data_name || *data_name == "fashion-mnist")) {
    plan.notices.push_back(
        "store trials read oss:// data with dljob-train's own reader, which "
        "takes record shards (dljob data pack), not IDX files");
  }

  if (!can_limit_memory) {
    plan.memory_note = "not measured: " + memory_why_not;
  } else if (o.memory_fractions.empty()) {
    plan.memory_note = "not varied (--no-memory); the peak was measured uncapped";
  } else {
    plan.memory_fractions = o.memory_fractions;
    std::sort(plan.memory_fractions.rbegin(), plan.memory_fractions.rend());
  }
  if (job.spec.checkpoint) {
    plan.notices.push_back(
        "trials run without the job's checkpoint (they neither resume from it "
        "nor overwrite it)");
  }
  return plan;
}

DLJob TrialJob(const DLJob& job, const AdvisePlan& plan, const AdviseOptions& o,
               const TrialSetting& setting, int index) {
  DLJob t = job;
  t.metadata.name = "advise-trial-" + std::to_string(index);
  t.metadata.uid.clear();
  t.metadata.resource_version.clear();
  t.status = DLJobStatus{};
  t.spec.gpus = plan.ranks;
  t.spec.gpus_per_worker.reset();
  t.spec.mpi.slots_per_worker.reset();
  t.spec.checkpoint.reset();
  t.spec.run_policy.backoff_limit = 0;
  t.spec.run_policy.active_deadline_seconds = o.trial_timeout_seconds;
  t.spec.run_policy.progress_deadline_seconds.reset();
  t.spec.run_policy.suspend.reset();
  SetEnv(t.spec.env, "OMP_NUM_THREADS", std::to_string(setting.threads_per_rank));
  if (plan.dljob_train) {
    std::vector<std::string>& c = t.spec.command;
    for (const char* f : {"--checkpoint_dir", "--num_epochs"}) c = WithoutFlag(c, f);
    c = WithFlag(c, "--num_batches", std::to_string(o.num_batches));
    c = WithFlag(c, "--display_every", std::to_string(std::max<int64_t>(1, o.num_batches / 10)));
    c = WithoutFlag(c, "--noeval");
    c = WithFlag(c, "--eval", "false");
    if (setting.loader_threads) {
      c = WithFlag(c, "--loader_threads", std::to_string(*setting.loader_threads));
    }
  }
  if (!setting.data_path.empty()) ApplyDataPath(t, setting.data_path, o.cache_path);
  return t;
}

}  // namespace dljob::advise
