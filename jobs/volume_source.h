// Volume source URIs of spec.data[].source.
//
//   nas://server/export/path   an NFS export (server may carry :port)
//   oss://bucket/prefix        object storage through the S3-compatible API (prefix may be empty)
//   pvc:claim[/subpath]        an existing PersistentVolumeClaim in the job's namespace
//   hostPath:/path             a directory on the node (or on this machine, locally)
//
// Pure parsing; thread-safe. The storage component renders a parsed source into a Kubernetes
// volume; the local runner resolves it to a path on this machine.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace dljob {

struct VolumeSource {
  enum class Kind { kNas, kOss, kPvc, kHostPath };
  Kind kind = Kind::kHostPath;
  std::string server;  // nas: "server" or "server:port"
  std::string bucket;  // oss
  std::string claim;   // pvc
  std::string path;    // nas: "/export/path"; oss: "prefix" (no leading '/'); pvc: "subpath"
                       // (may be empty); hostPath: "/abs/path"
  bool operator==(const VolumeSource&) const = default;
};

const char* VolumeKindName(VolumeSource::Kind kind);  // "nas", "oss", "pvc", "hostPath"

// On error the Status message is the reason alone (no field path), e.g.
// `unknown scheme "s4" (expected nas://, oss://, pvc:, hostPath:)`.
Result<VolumeSource> ParseVolumeSource(std::string_view uri);
std::string FormatVolumeSource(const VolumeSource& source);

// The directory, relative to a cache root, that holds the cached copy of `source`: readable and
// distinct per source, the same on every machine (so the local runner and the operator's init
// container agree), e.g. "bucket/imagenet-train-0f3c9a1b2d4e5f60" for oss://bucket/imagenet/train
// and "nas/server/imagenet-…" for a NAS export. Several datasets can share one cache root.
std::string CacheSubdir(const VolumeSource& source);

}  // namespace dljob
