#include "cli/local/local_volumes.h"

#include "jobs/defaults.h"
#include "jobs/volume_source.h"

namespace dljob {
namespace {

// /proc/mounts writes space, tab, newline and backslash as \ooo.
std::string DecodeMountField(std::string_view field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size() &&
        field.substr(i + 1, 3).find_first_not_of("01234567") == std::string_view::npos) {
      out += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 +
                               (field[i + 3] - '0'));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

// The local directory of a NAS path: the deepest NFS mount of the same server whose export
// contains the path.
std::optional<std::string> FindNasMount(const VolumeSource& s,
                                        const std::vector<MountEntry>& mounts) {
  const std::string host = s.server.substr(0, s.server.find(':'));
  std::optional<std::string> best;
  size_t best_len = 0;
  for (const MountEntry& m : mounts) {
    if (m.fstype.rfind("nfs", 0) != 0) continue;
    size_t colon = m.device.find(':');
    if (colon == std::string::npos || m.device.substr(0, colon) != host) continue;
    std::string exported = m.device.substr(colon + 1);
    while (exported.size() > 1 && exported.back() == '/') exported.pop_back();
    std::string rest;
    if (exported == "/") {
      rest = s.path.substr(1);
    } else if (s.path == exported) {
      rest = "";
    } else if (s.path.rfind(exported + "/", 0) == 0) {
      rest = s.path.substr(exported.size() + 1);
    } else {
      continue;
    }
    if (!best || exported.size() > best_len) {
      best = JoinPath(m.mount_point, rest);
      best_len = exported.size();
    }
  }
  return best;
}

Status NotMounted(const std::string& field, const VolumeSource& s) {
  const std::string host = s.server.substr(0, s.server.find(':'));
  std::string leaf = s.path.substr(s.path.rfind('/') + 1);
  return Status::FailedPrecondition(
      field + ": " + FormatVolumeSource(s) + " is not mounted on this machine (no NFS mount of " +
      host + ":" + s.path +
      " or a directory above it in /proc/mounts); mount it (e.g. sudo mount "
      "-t nfs " +
      host + ":" + s.path + " /mnt/" + leaf +
      ") and submit again, or copy the data "
      "to this machine and use hostPath:/path/to/data");
}

}  // namespace

std::string JoinPath(const std::string& dir, const std::string& rest) {
  if (rest.empty()) return dir;
  if (!dir.empty() && dir.back() == '/') return dir + rest;
  return dir + "/" + rest;
}

std::vector<MountEntry> ParseProcMounts(std::string_view text) {
  std::vector<MountEntry> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    std::vector<std::string_view> fields;
    size_t pos = 0;
    while (pos < line.size() && fields.size() < 3) {
      size_t sp = line.find(' ', pos);
      if (sp == std::string_view::npos) sp = line.size();
      if (sp > pos) fields.push_back(line.substr(pos, sp - pos));
      pos = sp + 1;
    }
    if (fields.size() < 3) continue;
    out.push_back(
        {DecodeMountField(fields[0]), DecodeMountField(fields[1]), std::string(fields[2])});
  }
  return out;
}

namespace {

// The directory here that holds `source` as it is (hostPath, pvc: and nas:// only); `field`
// names it in errors.
Result<std::string> LocalDirectory(const VolumeSource& source, const std::string& field,
                                   const LocalMachine& m) {
  switch (source.kind) {
    case VolumeSource::Kind::kHostPath:
      return source.path;
    case VolumeSource::Kind::kPvc:
      return JoinPath(JoinPath(m.pvc_root, source.claim), source.path);
    case VolumeSource::Kind::kNas: {
      std::optional<std::string> mounted = FindNasMount(source, m.mounts);
      if (!mounted) return NotMounted(field, source);
      return *mounted;
    }
    case VolumeSource::Kind::kOss:
      break;
  }
  return Status::InvalidArgument(field + ": " + FormatVolumeSource(source) +
                                 " is object storage, not a directory");
}

}  // namespace

Result<ResolvedVolume> ResolveLocalVolume(const DataVolume& volume, size_t index,
                                          const LocalMachine& m) {
  const std::string entry = "spec.data[" + std::to_string(index) + "]";
  const std::string field = entry + ".source";
  Result<VolumeSource> source = ParseVolumeSource(volume.source);
  if (!source.ok()) return Status::InvalidArgument(field + ": " + source.status().message());
  ResolvedVolume out{{volume.name, volume.mount_path, ""}, std::nullopt};
  std::string from;  // what a cache copies from
  if (source->kind == VolumeSource::Kind::kOss) {
    from = FormatVolumeSource(*source);
  } else {
    Result<std::string> dir = LocalDirectory(*source, field, m);
    if (!dir.ok()) return dir.status();
    from = *dir;
  }
  if (source->kind != VolumeSource::Kind::kOss && !volume.cache) {
    out.volume.local_path = from;
    return out;
  }
  const std::string root = volume.cache ? volume.cache->path : m.cache_root;
  if (root.empty()) {
    return Status::FailedPrecondition(entry + ": no cache directory: set " + entry +
                                      ".cache.path or XDG_STATE_HOME");
  }
  out.volume.local_path = JoinPath(root, CacheSubdir(*source));
  out.fetch = DataFetch{entry, from, out.volume.local_path};
  return out;
}

Result<LocalVolume> ResolveCheckpointVolume(const CheckpointSpec& checkpoint,
                                            const LocalMachine& m) {
  const std::string field = "spec.checkpoint.source";
  Result<VolumeSource> source = ParseVolumeSource(checkpoint.source);
  if (!source.ok()) return Status::InvalidArgument(field + ": " + source.status().message());
  if (source->kind == VolumeSource::Kind::kOss) {
    return Status::InvalidArgument(
        field +
        ": oss:// cannot hold checkpoints (a local run reads object "
        "storage through a fetched copy); use hostPath:, pvc: or nas://");
  }
  Result<std::string> dir = LocalDirectory(*source, field, m);
  if (!dir.ok()) return dir.status();
  return LocalVolume{"checkpoint", checkpoint.mount_path.value_or(kDefaultCheckpointMountPath),
                     *dir};
}

}  // namespace dljob
