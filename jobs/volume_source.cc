#include "jobs/volume_source.h"

#include <cctype>
#include <cstdint>
#include <cstdio>

#include "jobs/field_path.h"
#include "jobs/validation.h"

namespace dljob {
namespace {

constexpr char kExpectedSchemes[] = "(expected nas://, oss://, pvc:, hostPath:)";

bool HasDotDotSegment(std::string_view path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (path.substr(start, end - start) == "..") return true;
    start = end + 1;
  }
  return false;
}

// Bucket names as S3 (and OSS) accept them: 3-63 of [a-z0-9.-], starting and ending alnum.
std::string CheckBucket(std::string_view bucket) {
  if (bucket.empty()) return "missing bucket: expected oss://bucket/prefix";
  if (bucket.size() < 3 || bucket.size() > 63) {
    return "bucket name " + Quote(bucket) + " must be 3 to 63 characters";
  }
  for (char c : bucket) {
    if (!IsLowerAlnum(c) && c != '.' && c != '-') {
      return "bucket name " + Quote(bucket) +
             " may contain only lowercase letters, digits, '.' and '-'";
    }
  }
  if (!IsLowerAlnum(bucket.front()) || !IsLowerAlnum(bucket.back())) {
    return "bucket name " + Quote(bucket) + " must start and end with a letter or digit";
  }
  return "";
}

// server or server:port, as an NFS mount takes it.
std::string CheckServer(std::string_view server) {
  if (server.empty()) return "missing server: expected nas://server/export/path";
  size_t colon = server.find(':');
  std::string_view host = server.substr(0, colon);
  if (host.empty()) return "missing server: expected nas://server/export/path";
  for (char c : host) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') {
      return "server " + Quote(host) + " is not a valid host name";
    }
  }
  if (colon == std::string_view::npos) return "";
  std::string_view port = server.substr(colon + 1);
  if (port.empty() || port.size() > 5) return "port in " + Quote(server) + " must be 1 to 65535";
  int value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return "port in " + Quote(server) + " must be a number";
    value = value * 10 + (c - '0');
  }
  if (value < 1 || value > 65535) return "port in " + Quote(server) + " must be 1 to 65535";
  return "";
}

// DNS-1123 subdomain: <= 253 of [a-z0-9.-], starting and ending alnum.
std::string CheckClaim(std::string_view claim) {
  if (claim.empty()) return "missing claim name: expected pvc:claim[/subpath]";
  bool ok = claim.size() <= 253 && IsLowerAlnum(claim.front()) && IsLowerAlnum(claim.back());
  for (char c : claim) ok = ok && (IsLowerAlnum(c) || c == '-' || c == '.');
  if (!ok) {
    return "claim name " + Quote(claim) +
           " must be a DNS-1123 subdomain (lowercase letters, digits, '-', '.'; at most 253)";
  }
  return "";
}

Result<VolumeSource> Nas(std::string_view rest) {
  VolumeSource v;
  v.kind = VolumeSource::Kind::kNas;
  size_t slash = rest.find('/');
  v.server = std::string(rest.substr(0, slash));
  if (std::string reason = CheckServer(v.server); !reason.empty()) {
    return Status::InvalidArgument(reason);
  }
  if (slash == std::string_view::npos || rest.size() == slash + 1) {
    return Status::InvalidArgument(
        "missing export path: expected nas://server/export/path with an absolute path");
  }
  v.path = std::string(rest.substr(slash));
  return v;
}

Result<VolumeSource> Oss(std::string_view rest) {
  VolumeSource v;
  v.kind = VolumeSource::Kind::kOss;
  size_t slash = rest.find('/');
  v.bucket = std::string(rest.substr(0, slash));
  if (std::string reason = CheckBucket(v.bucket); !reason.empty()) {
    return Status::InvalidArgument(reason);
  }
  if (slash != std::string_view::npos) v.path = std::string(rest.substr(slash + 1));
  if (v.path.starts_with("/")) {
    return Status::InvalidArgument("prefix must not start with '/': expected oss://bucket/prefix");
  }
  return v;
}

Result<VolumeSource> Pvc(std::string_view rest) {
  VolumeSource v;
  v.kind = VolumeSource::Kind::kPvc;
  size_t slash = rest.find('/');
  v.claim = std::string(rest.substr(0, slash));
  if (std::string reason = CheckClaim(v.claim); !reason.empty()) {
    return Status::InvalidArgument(reason);
  }
  if (slash != std::string_view::npos) v.path = std::string(rest.substr(slash + 1));
  if (v.path.starts_with("/")) {
    return Status::InvalidArgument("subpath must be relative: expected pvc:claim[/subpath]");
  }
  return v;
}

Result<VolumeSource> HostPath(std::string_view rest) {
  VolumeSource v;
  v.kind = VolumeSource::Kind::kHostPath;
  if (!rest.starts_with("/")) {
    return Status::InvalidArgument("path " + Quote(rest) +
                                   " must be absolute: expected hostPath:/path");
  }
  v.path = std::string(rest);
  return v;
}

Result<VolumeSource> UnknownScheme(std::string_view uri) {
  size_t colon = uri.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    return Status::InvalidArgument("missing scheme in " + Quote(uri) + " " + kExpectedSchemes);
  }
  std::string_view scheme = uri.substr(0, colon);
  for (std::string_view known : {"nas", "oss"}) {
    if (scheme == known) {
      return Status::InvalidArgument("expected " + std::string(known) + "://... " +
                                     kExpectedSchemes);
    }
  }
  return Status::InvalidArgument("unknown scheme " + Quote(scheme) + " " + kExpectedSchemes);
}

}  // namespace

const char* VolumeKindName(VolumeSource::Kind kind) {
  switch (kind) {
    case VolumeSource::Kind::kNas:
      return "nas";
    case VolumeSource::Kind::kOss:
      return "oss";
    case VolumeSource::Kind::kPvc:
      return "pvc";
    case VolumeSource::Kind::kHostPath:
      return "hostPath";
  }
  return "";
}

Result<VolumeSource> ParseVolumeSource(std::string_view uri) {
  if (uri.empty())
    return Status::InvalidArgument("must not be empty " + std::string(kExpectedSchemes));
  for (char c : uri) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) {
      return Status::InvalidArgument(Quote(uri) +
                                     " must not contain whitespace or control characters");
    }
  }
  Result<VolumeSource> parsed = Status::InvalidArgument("");
  if (uri.starts_with("nas://")) {
    parsed = Nas(uri.substr(6));
  } else if (uri.starts_with("oss://")) {
    parsed = Oss(uri.substr(6));
  } else if (uri.starts_with("pvc:")) {
    parsed = Pvc(uri.substr(4));
  } else if (uri.starts_with("hostPath:")) {
    parsed = HostPath(uri.substr(9));
  } else {
    return UnknownScheme(uri);
  }
  if (parsed.ok() && HasDotDotSegment(parsed->path)) {
    return Status::InvalidArgument("path " + Quote(parsed->path) + " must not contain '..'");
  }
  return parsed;
}

std::string FormatVolumeSource(const VolumeSource& source) {
  switch (source.kind) {
    case VolumeSource::Kind::kNas:
      return "nas://" + source.server + source.path;
    case VolumeSource::Kind::kOss:
      return "oss://" + source.bucket + (source.path.empty() ? "" : "/" + source.path);
    case VolumeSource::Kind::kPvc:
      return "pvc:" + source.claim + (source.path.empty() ? "" : "/" + source.path);
    case VolumeSource::Kind::kHostPath:
      return "hostPath:" + source.path;
  }
  return "";
}

std::string CacheSubdir(const VolumeSource& source) {
  std::string formatted = FormatVolumeSource(source);
  uint64_t hash = 1469598103934665603ull;  // FNV-1a: stable across builds and machines
  for (unsigned char c : formatted) hash = (hash ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  std::string path = source.path;
  while (!path.empty() && path.back() == '/') path.pop_back();
  std::string base = path.substr(path.rfind('/') + 1);
  std::string readable;
  for (char c : base) {
    readable +=
        std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '-';
  }
  if (readable.empty() || readable[0] == '.') readable = "root" + readable;
  std::string leaf = readable.substr(0, 64) + "-" + hex;
  switch (source.kind) {
    case VolumeSource::Kind::kOss:
      return source.bucket + "/" + leaf;
    case VolumeSource::Kind::kNas: {
      std::string host = source.server.substr(0, source.server.find(':'));
      return "nas/" + host + "/" + leaf;
    }
    case VolumeSource::Kind::kPvc:
      return "pvc/" + source.claim + "/" + leaf;
    case VolumeSource::Kind::kHostPath:
      return "hostPath/" + leaf;
  }
  return leaf;
}

}  // namespace dljob
