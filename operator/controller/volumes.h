// Rendering spec.data[] into the Kubernetes volumes and mounts of the pods that run a job.
//
//   hostPath:/p           → hostPath {path: /p, type: Directory}
//   pvc:claim/sub         → persistentVolumeClaim {claimName: claim}, mounted with subPath "sub"
//   nas://server/export   → nfs {server, path}
//   oss://bucket/prefix   → csi: the OSS FUSE driver (ossfs), credentials from the Secret named
//                           by options.oss_secret (never from the spec), with the mount options
//                           users expect (allow_other, a stat cache)
// readOnly carries to the volume and the mount. Pure functions of the job; thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "jobs/dljob_types.h"
#include "jobs/status.h"

namespace dljob::controller {

struct VolumeOptions {
  std::string oss_csi_driver = "ossplugin.csi.alibabacloud.com";
  std::string oss_endpoint;            // e.g. "oss-cn-hangzhou-internal.aliyuncs.com"
  std::string oss_secret = "dljob-oss";  // a Secret with akId / akSecret in the job's namespace
  int64_t oss_stat_cache_size = 1000000;
};

struct RenderedVolumes {
  nlohmann::json volumes = nlohmann::json::array();  // pod.spec.volumes entries
  nlohmann::json mounts = nlohmann::json::array();   // container.volumeMounts entries
};

// Errors name the field ("spec.data[1].source: …"). REQUIRES: a validated job.
Result<RenderedVolumes> RenderDataVolumes(const DLJob& job, const VolumeOptions& options);

}  // namespace dljob::controller
