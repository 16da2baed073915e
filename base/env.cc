#include "base/env.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>

#include "base/errno_status.h"

namespace dljob {
namespace {
namespace fs = std::filesystem;

// The directory part of `path` ("." when it has none), for syncing a rename into it.
std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

Status SyncDir(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open", dir);
  Status s = fsync(fd) == 0 ? Status::Ok() : ErrnoStatus("cannot sync", dir);
  close(fd);
  return s;
}

Status WriteFully(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("cannot write", path);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

class PosixAppendableFile final : public AppendableFile {
 public:
  PosixAppendableFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixAppendableFile() override { close(fd_); }
  PosixAppendableFile(const PosixAppendableFile&) = delete;
  PosixAppendableFile& operator=(const PosixAppendableFile&) = delete;

  // O_APPEND: each write(2) lands whole at the end, even with other processes appending.
  Status Append(std::string_view data) override { return WriteFully(fd_, data, path_); }

  Status Sync() override {
    return fsync(fd_) == 0 ? Status::Ok() : ErrnoStatus("cannot sync", path_);
  }

 private:
  const int fd_;
  const std::string path_;
};

class PosixEnv final : public Env {
 public:
  Result<std::string> ReadFile(const std::string& path) override {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus("cannot open", path);
    std::string content;
    char buf[65536];
    for (;;) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        Status s = ErrnoStatus("cannot read", path);
        close(fd);
        return s;
      }
      if (n == 0) break;
      content.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    return content;
  }

  Status WriteFileAtomically(const std::string& path, std::string_view data) override {
    // Unique per process and call, so concurrent writers of one path never share a temp file.
    const size_t slash = path.rfind('/');
    const size_t name_at = slash == std::string::npos ? 0 : slash + 1;
    std::string tmp = path.substr(0, name_at) + kTempFilePrefix + path.substr(name_at) + "." +
                      std::to_string(getpid()) + "." +
                      std::to_string(counter_.fetch_add(1, std::memory_order_relaxed));
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    // Errors name the file the caller asked for; the temporary name means nothing to a user.
    if (fd < 0) return ErrnoStatus("cannot create", path);
    Status s = WriteFully(fd, data, path);
    if (s.ok() && fsync(fd) != 0) s = ErrnoStatus("cannot sync", path);
    close(fd);
    if (s.ok()) s = RenameFile(tmp, path);
    if (!s.ok()) unlink(tmp.c_str());
    return s;
  }

  Status RenameFile(const std::string& from, const std::string& to) override {
    if (rename(from.c_str(), to.c_str()) != 0) {
      return ErrnoStatus("cannot rename \"" + from + "\" to", to);
    }
    return SyncDir(DirOf(to));
  }

  Status CreateDir(const std::string& path) override {
    if (mkdir(path.c_str(), 0755) != 0) return ErrnoStatus("cannot create", path);
    return Status::Ok();
  }

  Status CreateDirs(const std::string& path) override {
    std::error_code ec;
    fs::create_directories(path, ec);
    if (ec) return ErrnoStatus("cannot create", path, ec.value());
    return Status::Ok();
  }

  bool FileExists(const std::string& path) override {
    struct stat st;
    return stat(path.c_str(), &st) == 0;
  }

  Result<std::vector<std::string>> ListDir(const std::string& dir) override {
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) return ErrnoStatus("cannot list", dir, ec.value());
    std::vector<std::string> names;
    for (const fs::directory_entry& entry : it) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  Status RemoveAll(const std::string& path) override {
    std::error_code ec;
    std::uintmax_t removed = fs::remove_all(path, ec);
    if (ec) return ErrnoStatus("cannot remove", path, ec.value());
    if (removed == 0) return ErrnoStatus("cannot remove", path, ENOENT);
    return Status::Ok();
  }

  Result<std::unique_ptr<AppendableFile>> NewAppendableFile(const std::string& path) override {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoStatus("cannot open", path);
    return std::unique_ptr<AppendableFile>(new PosixAppendableFile(fd, path));
  }

 private:
  std::atomic<uint64_t> counter_{0};
};

}  // namespace

Env& DefaultEnv() {
  static PosixEnv* env = new PosixEnv();  // never destroyed: usable until the process ends
  return *env;
}

}  // namespace dljob
