// Rendering spec.data[] into the Kubernetes volumes and mounts of the pods that run a job.
//
//   hostPath:/p           → hostPath {path: /p, type: Directory}
//   pvc:claim/sub         → persistentVolumeClaim {claimName: claim}, mounted with subPath "sub"
//   nas://server/export   → nfs {server, path}
//   oss://bucket/prefix   → csi: the OSS FUSE driver (ossfs), credentials from the Secret the
//                           entry's secretName names, else options.oss_secret (the keys are
//                           never in the spec), with the mount options users expect
//                           (allow_other, a stat cache)
// readOnly carries to the volume and the mount.
//
// An entry with a cache (medium LocalSSD) is read by the trainer from a copy on the node's SSD:
//   cache-<name>          hostPath {path: cache.path, type: DirectoryOrCreate}, shared by every
//                         job on the node, mounted at mountPath with subPath CacheSubdir(source)
//                         (volume_source.h), so each dataset has its own directory and the copy
//                         a job made is found by the next one on that node;
//   init container        cache-<name>, the job's image, runs
//                         `dljob data cache --from <source> --to /dljob/cache/<subdir>` before the
//                         worker starts (a complete copy is a no-op). For nas/pvc/hostPath the
//                         source volume data-<name> is mounted read-only at /dljob/source/<name>
//                         and copied from there; oss:// is read through the S3-compatible API with
//                         OSS_ENDPOINT (options.oss_endpoint, else the Secret's `endpoint` key)
//                         and OSS_ACCESS_KEY_ID / OSS_ACCESS_KEY_SECRET from the Secret's akId /
//                         akSecret keys, so no FUSE mount is needed and every object is checked.
// spec.checkpoint becomes one more volume, `checkpoint`, mounted read-write at its mountPath:
//   hostPath:/p           → hostPath {path: /p, type: DirectoryOrCreate}
//   pvc:claim/sub         → persistentVolumeClaim {claimName: claim}, subPath "sub"
//   nas://server/export   → nfs {server, path}
// (oss:// is refused by validation: nothing written there would last.) The builders mount it in
// the pod that runs rank 0 only (builders.h).
// Pure functions of the job; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "jobs/dljob_types.h"

namespace dljob::controller {

struct VolumeOptions {
  std::string oss_csi_driver = "ossplugin.csi.alibabacloud.com";
  std::string oss_endpoint;              // e.g. "oss-cn-hangzhou-internal.aliyuncs.com"
  std::string oss_secret = "dljob-oss";  // a Secret with akId / akSecret in the job's namespace
  int64_t oss_stat_cache_size = 1000000;
};

struct RenderedVolumes {
  nlohmann::json volumes = nlohmann::json::array();          // pod.spec.volumes entries
  nlohmann::json mounts = nlohmann::json::array();           // container.volumeMounts entries
  nlohmann::json init_containers = nlohmann::json::array();  // pod.spec.initContainers entries
};

inline constexpr char kCacheMountDir[] = "/dljob/cache";  // in the init containers
inline constexpr char kCheckpointVolume[] = "checkpoint";
inline constexpr char kSourceMountDir[] = "/dljob/source";  // + "/<name>"

// "cache-<name>": the name of a cached entry's volume and of the init container that fills it.
std::string CacheContainerName(const DataVolume& d);

// Errors name the field ("spec.data[1].source: …"). REQUIRES: a validated job.
Result<RenderedVolumes> RenderDataVolumes(const DLJob& job, const VolumeOptions& options);

// spec.checkpoint's volume and mount (none when the job has no checkpoint). Errors name the
// field ("spec.checkpoint.source: …"). REQUIRES: a defaulted, validated job.
Result<RenderedVolumes> RenderCheckpointVolume(const DLJob& job, const VolumeOptions& options);

}  // namespace dljob::controller
