// See cache_warmup.h.
#include "storage/objstore/cache_warmup.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>

#include <openssl/evp.h>

#include "base/env.h"
#include "base/errno_status.h"
#include "base/mutex.h"
#include "storage/shard_reader.h"

namespace dljob::storage {
namespace {

namespace fs = std::filesystem;

struct Entry {
  ObjectInfo info;
  std::string rel;  // path under local_dir
};

// The journal of completed copies: "<etag>\t<size>\t<rel>" per line, last line for a path wins.
struct Recorded {
  std::string etag;
  uint64_t size = 0;
};

std::map<std::string, Recorded> ReadJournal(Env& env, const std::string& path) {
  std::map<std::string, Recorded> out;
  Result<std::string> text = env.ReadFile(path);
  std::istringstream in(text.ok() ? *text : std::string());
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
  if (fd < 0) return ErrnoStatus("cannot open", path);
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
    return ErrnoStatus("cannot read", path, read_errno);
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
  Run(Env& env, ObjectStore& source, std::string local_dir, const WarmCacheOptions& options)
      : env_(env), source_(source), dir_(std::move(local_dir)), options_(options) {}

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

  Env& env_;
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
  Result<std::unique_ptr<AppendableFile>> file = env_.NewAppendableFile(part);
  if (!file.ok()) return file.status();
  std::error_code ec;
  uint64_t have = fs::file_size(part, ec);
  if (ec) return Status::Unavailable("cannot size \"" + part + "\": " + ec.message());
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
    status = (*file)->Append(*bytes);
    if (!status.ok()) break;
    have += bytes->size();
    {
      MutexLock lock(mu_);
      downloaded_ += bytes->size();
    }
    Advance(bytes->size(), 0);
  }
  // Synced before it is checked and renamed into place, so a crash never leaves a final name
  // over bytes that were not on disk.
  if (status.ok() && have >= e.info.size) status = (*file)->Sync();
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
  if (e.rel.ends_with(".shard")) {
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
  if (Status s = env_.RenameFile(part, final_path); !s.ok()) return s;
  MutexLock lock(mu_);
  Result<std::unique_ptr<AppendableFile>> journal =
      env_.NewAppendableFile(dir_ + "/" + kCacheMetaDir + "/objects");
  if (!journal.ok()) return journal.status();
  const std::string line = e.info.etag + '\t' + std::to_string(e.info.size) + '\t' + e.rel + '\n';
  if (Status s = (*journal)->Append(line); !s.ok()) return s;
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
  const std::string dir_prefix = prefix.empty() || prefix.ends_with("/") ? prefix : prefix + "/";
  const std::string source_url = source.Url(dir_prefix);
  std::string dir = local_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const std::string meta = dir + "/" + kCacheMetaDir;
  const std::string marker = meta + "/complete";
  std::error_code ec;
  fs::create_directories(meta, ec);
  if (ec) return Status::Unavailable(meta + ": " + ec.message());

  Env& env = DefaultEnv();
  WarmCacheResult result;
  {
    Result<std::string> text = env.ReadFile(marker);
    std::istringstream in(text.ok() ? *text : std::string());
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
  const std::map<std::string, Recorded> journal = ReadJournal(env, meta + "/objects");
  std::vector<Entry> todo;
  WarmCacheProgress start;
  for (ObjectInfo& info : *listed) {
    if (info.key.ends_with("/")) continue;  // a "directory" marker object
    Entry e{std::move(info), ""};
    e.rel = e.info.key.substr(dir_prefix.size());
    const std::string url = source.Url(e.info.key);
    if (Status s = ValidateKey(e.rel, url); !s.ok()) return s;
    if (e.rel == kCacheMetaDir || e.rel.rfind(std::string(kCacheMetaDir) + "/", 0) == 0 ||
        e.rel.ends_with(kPartSuffix)) {
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

  Run run(env, source, dir, options);
  if (Status s = run.CopyAll(todo, start, result); !s.ok()) return s;

  const std::string text = "source " + source_url + "\nobjects " + std::to_string(result.objects) +
                           "\nbytes " + std::to_string(result.bytes) + "\n";
  if (Status s = env.WriteFileAtomically(marker, text); !s.ok()) return s;
  return result;
}

}  // namespace dljob::storage
