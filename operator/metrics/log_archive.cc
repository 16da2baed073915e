// See log_archive.h.
#include "operator/metrics/log_archive.h"

#include <algorithm>
#include <cstdio>

#include "jobs/log_lines.h"

namespace dljob::metrics {
namespace {

constexpr char kChunkSuffix[] = ".log";

// The line index a chunk key starts at ("…/0000000120.log" -> 120); nullopt for another key.
std::optional<int64_t> ChunkFirst(const std::string& key) {
  const size_t slash = key.rfind('/');
  std::string name = key.substr(slash == std::string::npos ? 0 : slash + 1);
  if (!name.ends_with(kChunkSuffix)) return std::nullopt;
  name.resize(name.size() - std::string_view(kChunkSuffix).size());
  if (name.empty() ||
      !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::stoll(name);
}

std::string MarkerLine(const std::string& pod) {
  return FormatLogLine(-1, "dljob: following launcher pod " + pod) + "\n";
}

}  // namespace

std::string CompactTimestamp(const std::string& rfc3339) {
  std::string out;
  for (char c : rfc3339) {
    if ((c >= '0' && c <= '9') || c == 'T' || c == 'Z') out += c;
  }
  return out;
}

// ---- PodLogWriter ----

int64_t PodLogWriter::archived_lines() const {
  MutexLock lock(mu_);
  return first_ + chunk_lines_;
}

void PodLogWriter::Add(const std::string& line) {
  MutexLock lock(mu_);
  chunk_ += line;
  chunk_ += '\n';
  ++chunk_lines_;
  dirty_ = true;
}

bool PodLogWriter::Due(WallTime now) const {
  MutexLock lock(mu_);
  return dirty_ && (chunk_.size() >= options_.chunk_bytes || !written_at_ ||
                    now - *written_at_ >= options_.flush_interval);
}

Status PodLogWriter::Flush(bool force, WallTime now) {
  MutexLock writing(write_mu_);  // one write at a time, so chunks are written in order
  std::string key, content;
  int64_t lines = 0;
  bool full = false;
  {
    MutexLock lock(mu_);
    if (!dirty_) return Status::Ok();
    full = chunk_.size() >= options_.chunk_bytes;
    if (!force && !full && written_at_ && now - *written_at_ < options_.flush_interval) {
      return Status::Ok();
    }
    key = ChunkKey();
    content = chunk_;
    lines = chunk_lines_;
    dirty_ = false;
  }
  // The write goes outside mu_: the collector's Add() does not wait for the store.
  Status written = Write(key, content);
  MutexLock lock(mu_);
  if (!written.ok()) {
    dirty_ = true;  // kept for the next Flush
    return written;
  }
  written_at_ = now;
  if (full) {  // sealed as written: lines added since start the next chunk
    first_ += lines;
    chunk_lines_ -= lines;
    chunk_.erase(0, content.size());
    dirty_ = chunk_lines_ > 0;
  }
  return Status::Ok();
}

std::string PodLogWriter::ChunkKey() const {
  char first[32];
  std::snprintf(first, sizeof first, "%010lld", static_cast<long long>(first_));
  return dir_ + first + kChunkSuffix;
}

Status PodLogWriter::Write(const std::string& key, const std::string& content) {
  if (options_.may_write) {
    if (Status s = options_.may_write(); !s.ok()) {
      return s.WithContext("not writing " + store_.Url(key));
    }
  }
  return store_.Put(key, content);
}

// ---- LogArchive ----

LogArchive::LogArchive(storage::ObjectStore& store, std::string prefix, LogArchiveOptions options)
    : store_(store), prefix_(std::move(prefix)), options_(std::move(options)) {}

std::string LogArchive::Where() const { return store_.Url(prefix_); }

std::string LogArchive::JobDir(const std::string& ns, const std::string& job) const {
  return (prefix_.empty() ? "" : prefix_ + "/") + ns + "/" + job + "/";
}

Result<std::string> LogArchive::Read(const std::string& ns, const std::string& job) const {
  const std::string dir = JobDir(ns, job);
  std::string log;
  bool found = false;
  // The single appended file of earlier versions.
  Result<std::string> legacy = store_.Get(dir.substr(0, dir.size() - 1) + kChunkSuffix);
  if (legacy.ok()) {
    log = std::move(legacy).value();
    found = true;
  } else if (legacy.status().code() != StatusCode::kNotFound) {
    return legacy.status();
  }
  Result<std::vector<storage::ObjectInfo>> chunks = storage::ListAll(store_, dir);
  if (!chunks.ok() && chunks.status().code() != StatusCode::kNotFound) return chunks.status();
  if (chunks.ok()) {
    for (const storage::ObjectInfo& o : *chunks) {
      if (!ChunkFirst(o.key)) continue;
      Result<std::string> chunk = store_.Get(o.key);
      // Listed, then gone: the job's archive is being removed; the rest is still the log.
      if (!chunk.ok() && chunk.status().code() == StatusCode::kNotFound) continue;
      if (!chunk.ok()) return chunk.status();
      log += *chunk;
      found = true;
    }
  }
  if (!found)
    return Status::NotFound("no archived log of DLJob " + ns + "/" + job + " in " + Where());
  return log;
}

Result<PodLogWriterPtr> LogArchive::OpenPod(const std::string& ns, const std::string& job,
                                            const ArchivedPod& pod) {
  const std::string dir = JobDir(ns, job) + CompactTimestamp(pod.created) + "-" + pod.uid + "/";
  PodLogWriterPtr w(new PodLogWriter(store_, dir, options_));
  MutexLock lock(w->mu_);
  Result<std::vector<storage::ObjectInfo>> chunks = storage::ListAll(store_, dir);
  if (!chunks.ok() && chunks.status().code() != StatusCode::kNotFound) return chunks.status();
  std::optional<std::string> last;
  if (chunks.ok()) {
    for (const storage::ObjectInfo& o : *chunks) {
      if (ChunkFirst(o.key)) last = o.key;
    }
  }
  if (!last) {
    w->chunk_ = MarkerLine(pod.name);
    w->dirty_ = true;
    return w;
  }
  Result<std::string> content = store_.Get(*last);
  if (!content.ok()) return content.status();
  w->first_ = *ChunkFirst(*last);
  w->chunk_lines_ = std::count(content->begin(), content->end(), '\n') - (w->first_ == 0 ? 1 : 0);
  w->chunk_lines_ = std::max<int64_t>(w->chunk_lines_, 0);
  w->chunk_ = std::move(content).value();
  if (w->chunk_.size() >= options_.chunk_bytes) {  // full: continue in a new chunk
    w->first_ += w->chunk_lines_;
    w->chunk_lines_ = 0;
    w->chunk_.clear();
  }
  return w;
}

}  // namespace dljob::metrics
