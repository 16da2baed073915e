// Planning a local run: how a DLJob becomes one `mpirun` command on this machine.
//
// Pure: everything it needs to know about the machine comes in a LocalMachine value, so every
// rule is testable without processes or files. The supervisor (job_supervisor.h) executes the
// plan.
//
// The mapping, as documented in docs/tasks/local-runs.md:
//   - ranks = spec.gpus. With no GPU on the machine the ranks run on CPU (the plan says so); with
//     fewer GPUs than requested the plan is refused.
//   - spec.command[0] is found next to the dljob binary, then on PATH (a path containing '/' is
//     used as given). spec.image is recorded, never pulled.
//   - Each data volume resolves to a directory here as local_volumes.h says: hostPath in place,
//     pvc under <pvc_root>, nas:// where the export is mounted, oss:// (and any entry with a
//     cache) fetched into a local cache before the job starts (plan.fetches).
//   - Containers are not used, so a volume cannot be mounted at its mountPath: instead every
//     argument and env value that names a path under a mountPath (alone, or after "=") is
//     rewritten to the local path, and DLJOB_DATA_<NAME> holds each volume's local path.
//   - spec.checkpoint resolves to a directory here the same way (never fetched; created before
//     the job starts) and is passed on as in the cluster (jobs/checkpoint_env.h): the
//     DLJOB_CHECKPOINT_* variables with the local directory, dljob-train's --checkpoint_* flags,
//     and its mountPath rewritten like a volume's. A job stopped (Ctrl-C, dljob delete) and
//     submitted again resumes from its last checkpoint.
//   - OMP_NUM_THREADS defaults to cores / ranks (at least 1) so ranks do not oversubscribe.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/dljob_types.h"

namespace dljob {

struct MountEntry {
  std::string device;       // "server:/export" for NFS
  std::string mount_point;  // "/mnt/nas"
  std::string fstype;       // "nfs", "nfs4", …
};

struct LocalMachine {
  int gpus = 0;
  int cpus = 1;
  bool is_root = false;
  std::string self_dir;                // directory holding the dljob binary
  std::vector<std::string> path_dirs;  // $PATH, split
  std::string pvc_root;                // where pvc: claims live locally
  std::string cache_root;              // default cache for fetched data (state dir/cache)
  std::vector<MountEntry> mounts;      // /proc/mounts
  std::string mpirun = "mpirun";
  std::map<std::string, std::string> inherited_env;       // the caller's environment
  std::function<bool(const std::string&)> is_executable;  // REQUIRES: set
};

struct LocalVolume {
  std::string name;
  std::string mount_path;
  std::string local_path;
};

// A copy to make before the job starts (cache_warmup.h's WarmCache).
struct DataFetch {
  std::string field;  // "spec.data[0]", for messages
  std::string from;   // "oss://bucket/prefix", or a local directory
  std::string to;     // the cache directory the job reads
};

struct LocalPlan {
  int ranks = 0;
  std::string device;                      // "cpu" or "cuda"
  std::vector<std::string> argv;           // mpirun … program args…
  std::map<std::string, std::string> env;  // the full environment of mpirun
  std::string working_dir;                 // "" = inherit
  std::vector<LocalVolume> volumes;
  std::optional<LocalVolume> checkpoint;  // spec.checkpoint's directory here
  std::vector<DataFetch> fetches;         // in spec.data order
  std::vector<std::string> notices;       // things the user should know about how it runs
};

// REQUIRES: job is defaulted and valid. Errors name the field: "spec.data[0].source: …".
Result<LocalPlan> PlanLocalRun(const DLJob& job, const LocalMachine& machine);

// Rewrites `value` if it names a path under `mount_path`, alone or after the first '='
// ("--data_dir=/data/x/train" with mount /data/x → "--data_dir=/local/x/train"). Exposed for tests.
std::string RewriteMountedPath(const std::string& value, const std::string& mount_path,
                               const std::string& local_path);

// "DLJOB_DATA_" + upper-cased name with non-alphanumerics as '_' ("fashion-mnist" →
// "DLJOB_DATA_FASHION_MNIST").
std::string DataEnvName(const std::string& volume_name);

}  // namespace dljob
