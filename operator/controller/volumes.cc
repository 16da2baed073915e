#include "operator/controller/volumes.h"

#include "jobs/defaults.h"
#include "jobs/volume_source.h"

namespace dljob::controller {
namespace {

using json = nlohmann::json;

json OssVolume(const VolumeSource& s, bool read_only, const VolumeOptions& o) {
  std::string opts =
      "-o allow_other -o max_stat_cache_size=" + std::to_string(o.oss_stat_cache_size);
  if (read_only) opts += " -o ro";
  json attributes = {{"bucket", s.bucket}, {"path", "/" + s.path}, {"otherOpts", opts}};
  if (!o.oss_endpoint.empty()) attributes["url"] = o.oss_endpoint;
  return {{"csi",
           {{"driver", o.oss_csi_driver},
            {"readOnly", read_only},
            {"volumeAttributes", attributes},
            {"nodePublishSecretRef", {{"name", o.oss_secret}}}}}};
}

// The pod volume a source becomes when the trainer (or a cache init container) mounts it.
json SourceVolume(const std::string& volume_name, const VolumeSource& s, bool read_only,
                  const VolumeOptions& options) {
  json volume = {{"name", volume_name}};
  switch (s.kind) {
    case VolumeSource::Kind::kHostPath:
      volume["hostPath"] = {{"path", s.path}, {"type", "Directory"}};
      break;
    case VolumeSource::Kind::kPvc:
      volume["persistentVolumeClaim"] = {{"claimName", s.claim}, {"readOnly", read_only}};
      break;
    case VolumeSource::Kind::kNas:
      volume["nfs"] = {{"server", s.server}, {"path", s.path}, {"readOnly", read_only}};
      break;
    case VolumeSource::Kind::kOss:
      volume.update(OssVolume(s, read_only, options));
      break;
  }
  return volume;
}

json SecretEnv(const std::string& name, const std::string& secret, const std::string& key) {
  return {{"name", name}, {"valueFrom", {{"secretKeyRef", {{"name", secret}, {"key", key}}}}}};
}

// Adds the cache volume, the trainer's mount of this dataset's copy and the init container that
// fills it (see the header).
void AddCachedEntry(const DLJob& job, const DataVolume& d, const VolumeSource& s,
                    const VolumeOptions& options, RenderedVolumes& out) {
  const std::string source_volume = "data-" + d.name;
  const std::string cache_volume = CacheContainerName(d);
  const std::string subdir = CacheSubdir(s);
  out.volumes.push_back({{"name", cache_volume},
                         {"hostPath", {{"path", d.cache->path}, {"type", "DirectoryOrCreate"}}}});
  out.mounts.push_back({{"name", cache_volume},
                        {"mountPath", d.mount_path},
                        {"readOnly", d.read_only.value_or(true)},
                        {"subPath", subdir}});
  json mounts = json::array();
  json env = json::array();
  std::string from;
  if (s.kind == VolumeSource::Kind::kOss) {
    from = FormatVolumeSource(s);
    env.push_back(options.oss_endpoint.empty()
                      ? SecretEnv("OSS_ENDPOINT", options.oss_secret, "endpoint")
                      : json{{"name", "OSS_ENDPOINT"}, {"value", options.oss_endpoint}});
    env.push_back(SecretEnv("OSS_ACCESS_KEY_ID", options.oss_secret, "akId"));
    env.push_back(SecretEnv("OSS_ACCESS_KEY_SECRET", options.oss_secret, "akSecret"));
  } else {
    from = std::string(kSourceMountDir) + "/" + d.name;
    out.volumes.push_back(SourceVolume(source_volume, s, /*read_only=*/true, options));
    json source_mount = {{"name", source_volume}, {"mountPath", from}, {"readOnly", true}};
    if (s.kind == VolumeSource::Kind::kPvc && !s.path.empty()) source_mount["subPath"] = s.path;
    mounts.push_back(std::move(source_mount));
  }
  mounts.push_back({{"name", cache_volume}, {"mountPath", kCacheMountDir}});
  json container = {{"name", cache_volume},
                    {"image", job.spec.image},
                    {"command", json::array({"dljob", "data", "cache", "--from", from, "--to",
                                             std::string(kCacheMountDir) + "/" + subdir})},
                    {"volumeMounts", std::move(mounts)}};
  if (!env.empty()) container["env"] = std::move(env);
  out.init_containers.push_back(std::move(container));
}

}  // namespace

std::string CacheContainerName(const DataVolume& d) { return "cache-" + d.name; }

Result<RenderedVolumes> RenderDataVolumes(const DLJob& job, const VolumeOptions& defaults) {
  RenderedVolumes out;
  for (size_t i = 0; i < job.spec.data.size(); ++i) {
    const DataVolume& d = job.spec.data[i];
    VolumeOptions options = defaults;
    if (d.secret_name) options.oss_secret = *d.secret_name;
    Result<VolumeSource> source = ParseVolumeSource(d.source);
    if (!source.ok()) {
      return Status::InvalidArgument("spec.data[" + std::to_string(i) +
                                     "].source: " + source.status().message());
    }
    if (d.cache) {
      AddCachedEntry(job, d, *source, options, out);
      continue;
    }
    bool read_only = d.read_only.value_or(true);
    std::string volume_name = "data-" + d.name;
    json mount = {{"name", volume_name}, {"mountPath", d.mount_path}, {"readOnly", read_only}};
    if (source->kind == VolumeSource::Kind::kPvc && !source->path.empty()) {
      mount["subPath"] = source->path;
    }
    out.volumes.push_back(SourceVolume(volume_name, *source, read_only, options));
    out.mounts.push_back(std::move(mount));
  }
  return out;
}

Result<RenderedVolumes> RenderCheckpointVolume(const DLJob& job, const VolumeOptions& options) {
  RenderedVolumes out;
  if (!job.spec.checkpoint) return out;
  const CheckpointSpec& c = *job.spec.checkpoint;
  Result<VolumeSource> source = ParseVolumeSource(c.source);
  if (!source.ok()) {
    return Status::InvalidArgument("spec.checkpoint.source: " + source.status().message());
  }
  if (source->kind == VolumeSource::Kind::kOss) {
    return Status::InvalidArgument("spec.checkpoint.source: oss:// cannot hold checkpoints");
  }
  json mount = {{"name", kCheckpointVolume},
                {"mountPath", c.mount_path.value_or(kDefaultCheckpointMountPath)},
                {"readOnly", false}};
  if (source->kind == VolumeSource::Kind::kPvc && !source->path.empty()) {
    mount["subPath"] = source->path;
  }
  json volume = SourceVolume(kCheckpointVolume, *source, /*read_only=*/false, options);
  // Unlike a dataset, a checkpoint directory may start out missing: the first save creates it.
  if (volume.contains("hostPath")) volume["hostPath"]["type"] = "DirectoryOrCreate";
  out.volumes.push_back(std::move(volume));
  out.mounts.push_back(std::move(mount));
  return out;
}

}  // namespace dljob::controller
