#include "operator/controller/volumes.h"

#include "jobs/volume_source.h"

namespace dljob::controller {
namespace {

using json = nlohmann::json;

json OssVolume(const VolumeSource& s, bool read_only, const VolumeOptions& o) {
  std::string opts = "-o allow_other -o max_stat_cache_size=" +
                     std::to_string(o.oss_stat_cache_size);
  if (read_only) opts += " -o ro";
  json attributes = {{"bucket", s.bucket},
                     {"path", "/" + s.path},
                     {"otherOpts", opts}};
  if (!o.oss_endpoint.empty()) attributes["url"] = o.oss_endpoint;
  return {{"csi",
           {{"driver", o.oss_csi_driver},
            {"readOnly", read_only},
            {"volumeAttributes", attributes},
            {"nodePublishSecretRef", {{"name", o.oss_secret}}}}}};
}

}  // namespace

Result<RenderedVolumes> RenderDataVolumes(const DLJob& job, const VolumeOptions& options) {
  RenderedVolumes out;
  for (size_t i = 0; i < job.spec.data.size(); ++i) {
    const DataVolume& d = job.spec.data[i];
    Result<VolumeSource> source = ParseVolumeSource(d.source);
    if (!source.ok()) {
      return Status::InvalidArgument("spec.data[" + std::to_string(i) +
                                     "].source: " + source.status().message());
    }
    bool read_only = d.read_only.value_or(true);
    std::string volume_name = "data-" + d.name;
    json volume = {{"name", volume_name}};
    json mount = {{"name", volume_name}, {"mountPath", d.mount_path}, {"readOnly", read_only}};
    switch (source->kind) {
      case VolumeSource::Kind::kHostPath:
        volume["hostPath"] = {{"path", source->path}, {"type", "Directory"}};
        break;
      case VolumeSource::Kind::kPvc:
        volume["persistentVolumeClaim"] = {{"claimName", source->claim}, {"readOnly", read_only}};
        if (!source->path.empty()) mount["subPath"] = source->path;
        break;
      case VolumeSource::Kind::kNas:
        volume["nfs"] = {{"server", source->server}, {"path", source->path},
                         {"readOnly", read_only}};
        break;
      case VolumeSource::Kind::kOss:
        volume.update(OssVolume(*source, read_only, options));
        break;
    }
    out.volumes.push_back(std::move(volume));
    out.mounts.push_back(std::move(mount));
  }
  return out;
}

}  // namespace dljob::controller
