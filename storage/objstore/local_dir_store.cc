// See local_dir_store.h.
#include "storage/objstore/local_dir_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "base/env.h"
#include "base/errno_status.h"

namespace dljob::storage {
namespace {

namespace fs = std::filesystem;

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Reads up to `length` bytes at `offset`.
Result<std::string> ReadFile(const std::string& path, const std::string& url, uint64_t offset,
                             uint64_t length, bool whole) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::NotFound(url + ": not found");
    return ErrnoStatus("cannot open", url);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::NotFound(url + ": not found (not a regular file)");
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (whole) {
    offset = 0;
    length = size;
  } else if (offset >= size && !(offset == 0 && size == 0)) {
    ::close(fd);
    return Status::InvalidArgument(url + ": range starts at byte " + std::to_string(offset) +
                                   ", past the end of the " + std::to_string(size) +
                                   "-byte object");
  }
  length = std::min(length, size - offset);
  std::string out(length, '\0');
  uint64_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd, out.data() + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status s = n < 0 ? ErrnoStatus("cannot read", url)
                       : Status::Unavailable(url + ": file shrank while being read");
      ::close(fd);
      return s;
    }
    done += static_cast<uint64_t>(n);
  }
  ::close(fd);
  return out;
}

ObjectInfo InfoOf(std::string key, const struct stat& st) {
  ObjectInfo info;
  info.key = std::move(key);
  info.size = static_cast<uint64_t>(st.st_size);
  const uint64_t mtime_ns =
      static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ull + st.st_mtim.tv_nsec;
  info.etag = Hex(info.size) + "-" + Hex(mtime_ns);
  return info;
}

}  // namespace

Result<std::unique_ptr<LocalDirStore>> LocalDirStore::Open(const std::string& root) {
  std::error_code ec;
  fs::path abs = fs::absolute(root, ec);
  if (ec || root.empty()) return Status::InvalidArgument("\"" + root + "\": not a valid path");
  if (!fs::exists(abs, ec)) return Status::NotFound(abs.string() + ": no such directory");
  if (!fs::is_directory(abs, ec))
    return Status::InvalidArgument(abs.string() + ": not a directory");
  std::string s = abs.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return std::unique_ptr<LocalDirStore>(new LocalDirStore(std::move(s)));
}

std::string LocalDirStore::Url(std::string_view key) const {
  return root_ + (root_ == "/" ? "" : "/") + std::string(key);
}

Result<std::string> LocalDirStore::PathOf(std::string_view key) const {
  const std::string url = Url(key);
  if (Status s = ValidateKey(key, url); !s.ok()) return s;
  if (key.back() == '/') {
    return Status::InvalidArgument(url + ": a directory store has no keys ending in '/'");
  }
  return url;
}

Result<std::string> LocalDirStore::Get(std::string_view key) {
  Result<std::string> path = PathOf(key);
  if (!path.ok()) return path.status();
  return ReadFile(*path, Url(key), 0, 0, /*whole=*/true);
}

Result<std::string> LocalDirStore::GetRange(std::string_view key, uint64_t offset,
                                            uint64_t length) {
  Result<std::string> path = PathOf(key);
  if (!path.ok()) return path.status();
  return ReadFile(*path, Url(key), offset, length, /*whole=*/false);
}

Status LocalDirStore::Put(std::string_view key, std::string_view data) {
  Result<std::string> path = PathOf(key);
  if (!path.ok()) return path.status();
  const fs::path target(*path);
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) return Status::Unavailable(Url(key) + ": creating its directory: " + ec.message());
  return DefaultEnv().WriteFileAtomically(*path, data);
}

Result<ListPage> LocalDirStore::List(const ListOptions& options) {
  // Walk only the deepest directory the prefix names; the rest cannot match.
  const std::string& prefix = options.prefix;
  const size_t slash = prefix.rfind('/');
  fs::path start = fs::path(root_);
  if (slash != std::string::npos) start /= prefix.substr(0, slash);
  std::vector<ObjectInfo> found;
  std::error_code ec;
  if (fs::is_directory(start, ec)) {
    fs::recursive_directory_iterator it(start, fs::directory_options::skip_permission_denied, ec);
    if (ec) return Status::Unavailable(Url(prefix) + ": listing: " + ec.message());
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) return Status::Unavailable(Url(prefix) + ": listing: " + ec.message());
      const std::string name = it->path().filename().string();
      if (name.rfind(kLocalTempMarker, 0) == 0) continue;
      std::string key = it->path().lexically_relative(root_).generic_string();
      if (key.compare(0, prefix.size(), prefix) != 0) continue;
      if (!options.continuation_token.empty() && key <= options.continuation_token) continue;
      struct stat st {};
      if (::stat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      found.push_back(InfoOf(std::move(key), st));
    }
  }
  std::sort(found.begin(), found.end(),
            [](const ObjectInfo& a, const ObjectInfo& b) { return a.key < b.key; });
  ListPage page;
  const size_t max = static_cast<size_t>(std::max(1, options.max_keys));
  if (found.size() > max) {
    found.resize(max);
    page.next_token = found.back().key;
  }
  page.objects = std::move(found);
  return page;
}

Result<ObjectInfo> LocalDirStore::Head(std::string_view key) {
  Result<std::string> path = PathOf(key);
  if (!path.ok()) return path.status();
  struct stat st {};
  if (::stat(path->c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::NotFound(Url(key) + ": not found");
    return ErrnoStatus("cannot stat", Url(key));
  }
  if (!S_ISREG(st.st_mode)) return Status::NotFound(Url(key) + ": not found (not a regular file)");
  return InfoOf(std::string(key), st);
}

Status LocalDirStore::Delete(std::string_view key) {
  Result<std::string> path = PathOf(key);
  if (!path.ok()) return path.status();
  if (::unlink(path->c_str()) != 0 && errno != ENOENT && errno != ENOTDIR) {
    return ErrnoStatus("cannot delete", Url(key));
  }
  // Remove directories the object leaves empty, as a bucket has no empty "directories".
  fs::path dir = fs::path(*path).parent_path();
  while (dir.string().size() > root_.size() && ::rmdir(dir.c_str()) == 0) dir = dir.parent_path();
  return Status::Ok();
}

}  // namespace dljob::storage
