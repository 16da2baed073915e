#include "storage/random_access_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/errno_status.h"

namespace dljob::storage {
namespace {

Status PastEnd(const std::string& name, uint64_t offset, size_t n, uint64_t size) {
  return Status::InvalidArgument(name + ": truncated: need " + std::to_string(n) +
                                 " bytes at byte " + std::to_string(offset) + ", file has " +
                                 std::to_string(size));
}

class LocalFile : public RandomAccessFile {
 public:
  LocalFile(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  ~LocalFile() override { ::close(fd_); }
  LocalFile(const LocalFile&) = delete;
  LocalFile& operator=(const LocalFile&) = delete;

  Status ReadAt(uint64_t offset, std::span<uint8_t> dst) const override {
    if (offset > size_ || dst.size() > size_ - offset) {
      return PastEnd(path_, offset, dst.size(), size_);
    }
    size_t done = 0;
    while (done < dst.size()) {
      ssize_t n =
          ::pread(fd_, dst.data() + done, dst.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        return ErrnoStatus("cannot read at byte " + std::to_string(offset + done) + " of", path_);
      }
      if (n == 0) return PastEnd(path_, offset, dst.size(), offset + done);  // shrank under us
      done += static_cast<size_t>(n);
    }
    return Status::Ok();
  }
  uint64_t size() const override { return size_; }
  const std::string& name() const override { return path_; }

 private:
  std::string path_;
  int fd_;
  uint64_t size_;
};

}  // namespace

Result<RandomAccessFilePtr> OpenLocalFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return ErrnoStatus("cannot open", path);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(path + ": not a regular file");
  }
  return RandomAccessFilePtr(new LocalFile(path, fd, static_cast<uint64_t>(st.st_size)));
}

Status MemoryFile::ReadAt(uint64_t offset, std::span<uint8_t> dst) const {
  if (offset > bytes_.size() || dst.size() > bytes_.size() - offset) {
    return PastEnd(name_, offset, dst.size(), bytes_.size());
  }
  std::memcpy(dst.data(), bytes_.data() + offset, dst.size());
  return Status::Ok();
}

}  // namespace dljob::storage
