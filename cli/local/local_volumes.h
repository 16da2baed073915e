// How one spec.data[] entry becomes a directory on this machine for a local run.
//
//   hostPath:/p           /p, read in place.
//   pvc:claim/sub         <pvc_root>/claim/sub (a claim is a Kubernetes object; locally it is a
//                         directory under DLJOB_PVC_ROOT).
//   nas://server/export   the directory where that export is already mounted (an NFS line of
//                         /proc/mounts whose export contains the path); not mounted is an error
//                         saying to mount it or to use hostPath.
//   oss://bucket/prefix   fetched before the job starts (a DataFetch: cache_warmup.h's WarmCache)
//                         into <cache root>/<CacheSubdir(source)>, and read from there.
// The cache root is the entry's cache.path when it has a cache, else machine.cache_root
// (${XDG_STATE_HOME}/dljob/cache), so the copy is reused by later jobs. A `cache` on any other
// source also fetches: the resolved directory is copied into the cache, and the job reads the copy.
//
// spec.checkpoint's source resolves the same way (hostPath, pvc:, nas://; never fetched: the job
// writes there). oss:// is refused: what a job wrote into a fetched copy would never reach the
// bucket.
//
// Pure (the machine's mounts come in LocalMachine); thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/local/local_plan.h"

namespace dljob {

// `dir` + "/" + `rest` (no second '/' when `dir` ends in one); `dir` alone when `rest` is empty.
std::string JoinPath(const std::string& dir, const std::string& rest);

// The lines of /proc/mounts (octal escapes such as \040 decoded). Malformed lines are skipped.
std::vector<MountEntry> ParseProcMounts(std::string_view text);

struct ResolvedVolume {
  LocalVolume volume;
  std::optional<DataFetch> fetch;  // to run before the job starts; volume.local_path == fetch->to
};

// Errors name the field ("spec.data[0].source: …") and say what to do.
Result<ResolvedVolume> ResolveLocalVolume(const DataVolume& volume, size_t index,
                                          const LocalMachine& machine);

// spec.checkpoint as a local directory ("checkpoint", its mountPath, the directory here). Errors
// name spec.checkpoint.source.
Result<LocalVolume> ResolveCheckpointVolume(const CheckpointSpec& checkpoint,
                                            const LocalMachine& machine);

}  // namespace dljob
