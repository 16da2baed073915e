// See cache_warmup.h.
#include "storage/objstore/cache_warmup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <openssl/evp.h>

#include "base/mutex.h"
#include "storage/shard_reader.h"

namespace dljob::storage {
namespace {

namespace fs = std::filesystem;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct Entry {
  ObjectInfo info;
  std::string rel;  // path under local_dir
};

// The journal of completed copies: "<etag>\t<size>\t<rel>" per line, last line for a path wins.
struct Recorded {
  std::string etag;
  uint64_t size = 0;
};

std::map<std::string, Recorded> ReadJournal(const std::string& path) {
  std::map<std::string, Recorded> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const size_t a = line.find('\t'), b = line.find('\t', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;  // a torn last line
    try {
      out[line.substr(b + 1)] = {line.substr(0, a), std::stoull(line.substr(a + 1, b - a - 1))};
    } catch (const std::exception&) {
    }
  }
  return out;
}

Result<std::string> Md5OfFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Unavailable(Errno(path + ": open"));
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_md5(), nullptr);
  std::vector<char> buf(1 << 20);
  ssize_t n;
  while ((n = ::read(fd, buf.data(), buf.size())) > 0) EVP_DigestUpdate(ctx, buf.data(), n);
  const int read_errno = errno;
  ::close(fd);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, digest, &len);
  EVP_MD_CTX_free(ctx);
  if (n < 0) {
    errno = read_errno;
    return Status::Unavailable(Errno(path + ": read"));
  }
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned i = 0; i < len; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Shared state of one WarmCache run.
class Run {
 public:
  Run(ObjectStore& source, std::string local_dir, const WarmCacheOptions& options)
      : source_(source), dir_(std::move(local_dir)), options_(options) {}

  Status CopyAll(const std::vector<Entry>& todo, WarmCacheProgress start, WarmCacheResult& result);

 private:
  Status CopyOne(const Entry& e);
  // Appends ranged reads to `part` from its current length up to the object's size.
  Status Download(const Entry& e, const std::string& part);
  Status Check(const Entry& e, const std::string& part);
  void Advance(uint64_t bytes, uint64_t objects);
  bool Stopping() const {
    return failed_.load() || (options_.cancel != nullptr && options_.cancel->load());
  }

  ObjectStore& source_;
  const std::string dir_;
  const WarmCacheOptions& options_;
  std::atomic<bool> failed_{false};
  Mutex mu_;  // guards everything below, the journal file and progress calls
  WarmCacheProgress progress_ GUARDED_BY(mu_);
  Status first_error_ GUARDED_BY(mu_);
  uint64_t downloaded_ GUARDED_BY(mu_) = 0;
  uint64_t copied_ GUARDED_BY(mu_) = 0;
};

void Run::Advance(uint64_t bytes, uint64_t objects) {
  MutexLock lock(mu_);
  progress_.bytes_done += bytes;
  progress_.objects_done += objects;
  if (options_.progress) options_.progress(progress_);
}

Status Run::Download(const Entry& e, const std::string& part) {
  int fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Unavailable(Errno(part + ": open"));
  struct stat st {};
  ::fstat(fd, &st);
  uint64_t have = static_cast<uint64_t>(st.st_size);
  Status status;
  while (have < e.info.size) {
    if (Stopping()) {
      status = Status::Unavailable(source_.Url(e.info.key) + ": interrupted");
      break;
    }
    const uint64_t want = std::min<uint64_t>(options_.chunk_bytes, e.info.size - have);
    Result<std::string> bytes = source_.GetRange(e.info.key, have, want);
    if (!bytes.ok()) {
      status = bytes.status();
      break;
    }
    if (bytes->empty()) {
      status = Status::Unavailable(source_.Url(e.info.key) + ": the object ended at byte " +
                                   std::to_string(have) + " of " + std::to_string(e.info.size) +
                                   "; it changed while being copied, run again");
      break;
    }
    size_t done = 0;
    while (done < bytes->size()) {
      ssize_t n = ::write(fd, bytes->data() + done, bytes->size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;
      done += static_cast<size_t>(n);
    }
    if (done < bytes->size()) {
      status = Status::Unavailable(Errno(part + ": write"));
      break;
    }
    have += bytes->size();
    {
      MutexLock lock(mu_);
      downloaded_ += bytes->size();
    }
    Advance(bytes->size(), 0);
  }
  if (::close(fd) != 0 && status.ok()) status = Status::Unavailable(Errno(part + ": close"));
  return status;
}

Status Run::Check(const Entry& e, const std::string& part) {
  const std::string url = source_.Url(e.info.key);
  std::error_code ec;
  const uint64_t size = fs::file_size(part, ec);
  if (ec || size != e.info.size) {
    return Status::InvalidArgument(url + ": copied " + std::to_string(size) + " bytes, expected " +
                                   std::to_string(e.info.size));
  }
  if (!options_.verify) return Status::Ok();
  if (IsMd5Etag(e.info.etag)) {
    Result<std::string> md5 = Md5OfFile(part);
    if (!md5.ok()) return md5.status();
    if (*md5 != Lower(e.info.etag)) {
      return Status::InvalidArgument(url + ": the copy's MD5 " + *md5 +
                                     " does not match the object's ETag " + e.info.etag);
    }
  }
  if (EndsWith(e.rel, ".shard")) {
    Result<ShardReaderPtr> reader = ShardReader::Open(part);
    Status s = reader.ok()
                   ? (*reader)->ForEach([](uint64_t, const Sample&) { return Status::Ok(); })
                   : reader.status();
    if (!s.ok())
      return Status::InvalidArgument(url + ": the copy is not a valid shard: " + s.message());
  }
  return Status::Ok();
}

Status Run::CopyOne(const Entry& e) {
  const std::string final_path = dir_ + "/" + e.rel;
  const std::string part = final_path + kPartSuffix;
  std::error_code ec;
  fs::create_directories(fs::path(final_path).parent_path(), ec);
  if (ec) return Status::Unavailable(final_path + ": creating its directory: " + ec.message());
  uint64_t resumed = 0;
  if (fs::exists(part, ec)) {
    resumed = fs::file_size(part, ec);
    if (ec || resumed > e.info.size) {
      fs::remove(part, ec);
      resumed = 0;
    }
  }
  Advance(resumed, 0);
  for (int attempt = 0;; ++attempt) {
    if (Status s = Download(e, part); !s.ok()) return s;
    Status checked = Check(e, part);
    if (checked.ok()) break;
    fs::remove(part, ec);
    if (resumed == 0 || attempt > 0) return checked;
    // The resumed bytes may be from an older version of the object: start over once.
    resumed = 0;
    MutexLock lock(mu_);
    progress_.bytes_done -= e.info.size;
  }
  if (::rename(part.c_str(), final_path.c_str()) != 0) {
    return Status::Unavailable(Errno(final_path + ": rename"));
  }
  MutexLock lock(mu_);
  std::ofstream journal(dir_ + "/" + kCacheMetaDir + "/objects", std::ios::app);
  journal << e.info.etag << '\t' << e.info.size << '\t' << e.rel << '\n';
  journal.flush();
  if (!journal) return Status::Unavailable(dir_ + "/" + kCacheMetaDir + "/objects: write failed");
  ++copied_;
  progress_.objects_done += 1;
  if (options_.progress) options_.progress(progress_);
  return Status::Ok();
}

Status Run::CopyAll(const std::vector<Entry>& todo, WarmCacheProgress start,
                    WarmCacheResult& result) {
  {
    MutexLock lock(mu_);
    progress_ = start;
    if (options_.progress) options_.progress(progress_);
  }
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; !Stopping() && (i = next++) < todo.size();) {
      Status s = CopyOne(todo[i]);
      if (!s.ok()) {
        MutexLock lock(mu_);
        if (first_error_.ok()) first_error_ = s;
        if (s.message().find(": interrupted") == std::string::npos) failed_ = true;
      }
    }
  };
  const int n = std::max(1, std::min<int>(options_.parallel, static_cast<int>(todo.size())));
  std::vector<std::thread> threads;
  for (int t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  MutexLock lock(mu_);
  result.objects_copied = copied_;
  result.bytes_downloaded = downloaded_;
  if (options_.cancel != nullptr && options_.cancel->load() && copied_ < todo.size() &&
      !failed_.load()) {
    return Status::Unavailable(dir_ + ": warm-up interrupted; run again to resume");
  }
  if (!first_error_.ok()) return first_error_;
  return Status::Ok();
}

}  // namespace

Result<WarmCacheResult> WarmCache(ObjectStore& source, const std::string& prefix,
                                  const std::string& local_dir, const WarmCacheOptions& options) {
  const std::string dir_prefix = prefix.empty() || EndsWith(prefix, "/") ? prefix : prefix + "/";
  const std::string source_url = source.Url(dir_prefix);
  std::string dir = local_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const std::string meta = dir + "/" + kCacheMetaDir;
  const std::string marker = meta + "/complete";
  std::error_code ec;
  fs::create_directories(meta, ec);
  if (ec) return Status::Unavailable(meta + ": " + ec.message());

  WarmCacheResult result;
  {
    std::ifstream in(marker);
    std::string line;
    if (std::getline(in, line) && line == "source " + source_url && options.trust_marker) {
      result.already_complete = true;
      in >> line >> result.objects >> line >> result.bytes;
      return result;
    }
  }
  fs::remove(marker, ec);

  Result<std::vector<ObjectInfo>> listed = ListAll(source, dir_prefix);
  if (!listed.ok()) return listed.status();
  const std::map<std::string, Recorded> journal = ReadJournal(meta + "/objects");
  std::vector<Entry> todo;
  WarmCacheProgress start;
  for (ObjectInfo& info : *listed) {
    if (EndsWith(info.key, "/")) continue;  // a "directory" marker object
    Entry e{std::move(info), ""};
    e.rel = e.info.key.substr(dir_prefix.size());
    const std::string url = source.Url(e.info.key);
    if (Status s = ValidateKey(e.rel, url); !s.ok()) return s;
    if (e.rel == kCacheMetaDir || e.rel.rfind(std::string(kCacheMetaDir) + "/", 0) == 0 ||
        EndsWith(e.rel, kPartSuffix)) {
      return Status::InvalidArgument(url + ": names a path the cache reserves (" + kCacheMetaDir +
                                     "/ or *" + kPartSuffix + ")");
    }
    start.objects_total += 1;
    start.bytes_total += e.info.size;
    auto it = journal.find(e.rel);
    const uint64_t local_size = fs::file_size(dir + "/" + e.rel, ec);
    if (!ec && it != journal.end() && it->second.etag == e.info.etag &&
        it->second.size == e.info.size && local_size == e.info.size) {
      start.objects_done += 1;
      start.bytes_done += e.info.size;
      result.objects_skipped += 1;
      continue;
    }
    todo.push_back(std::move(e));
  }
  result.objects = start.objects_total;
  result.bytes = start.bytes_total;

  Run run(source, dir, options);
  if (Status s = run.CopyAll(todo, start, result); !s.ok()) return s;

  const std::string tmp = marker + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "source " << source_url << "\nobjects " << result.objects << "\nbytes " << result.bytes
        << "\n";
    out.flush();
    if (!out) return Status::Unavailable(tmp + ": write failed");
  }
  if (::rename(tmp.c_str(), marker.c_str()) != 0) return Status::Unavailable(Errno(marker));
  return result;
}

}  // namespace dljob::storage
