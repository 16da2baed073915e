// LogArchive: where the operator keeps every job's launcher log, so that the log outlives the
// job's pods, the operator's restarts and the replica that collected it.
//
// The archive is a bucket of an ObjectStore (storage/objstore/object_store.h) under a prefix: a
// directory (LocalDirStore: a PersistentVolumeClaim's mount; each write a temporary file renamed
// into place through base/env.h) or S3/OSS (S3Store). Object stores cannot append, so a launcher
// pod's log is kept in chunks, each rewritten whole (Put) while it grows and left alone once it
// holds chunk_bytes:
//
//   <prefix>/<ns>/<job>/<created>-<uid>/<first>.log
//
// <created> is the launcher pod's creationTimestamp in basic ISO 8601 (20240102T030405Z) and <uid>
// its uid, so a job's incarnations sort in the order they ran; <first> is the index (10 digits) of
// the pod log line that starts the chunk, so chunks sort in log order and the lines a pod's log
// already has in the archive are known from its last chunk alone. Each line is in the job-log
// format of jobs/log_lines.h ("[rank 3] text"); the first chunk of a pod opens with one marker
// line ("[mpirun] dljob: following launcher pod <name>") that is not a line of the pod's log.
// A job's log (Read) is every chunk of the job in key order, after the single file
// <prefix>/<ns>/<job>.log that earlier versions appended to (read, never written).
//
// Resuming: a collector that opens a pod (OpenPod) learns how many of its log lines are archived
// already (by itself before a restart, or by the previous leader) and skips them; the last chunk
// is re-read and continued. Only the leader writes: `may_write` (the leadership fence, see
// kube/runtime/leader_term.h) is asked before every Put, and a refusal is the writer's error.
//
// Thread-safety: LogArchive's methods may be called from many threads (the store is thread-safe).
// A PodLogWriter may be used from many threads (its collector adds while another flushes); Add()
// never waits for a write: Flush() writes outside the lock Add() takes.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "storage/objstore/object_store.h"

namespace dljob::metrics {

struct LogArchiveOptions {
  uint64_t chunk_bytes = 4 << 20;  // a chunk past this size is left as it is; the next one starts
  // At most one Put per pod per interval, except at the end of the log and when a chunk fills.
  std::chrono::milliseconds flush_interval{std::chrono::seconds(5)};
  // Asked before every write: OK when this replica may write (it leads), else why not. Null:
  // always (no leader election).
  std::function<Status()> may_write;
};

// The launcher pod a writer archives.
struct ArchivedPod {
  std::string name;
  std::string uid;
  std::string created;  // metadata.creationTimestamp (RFC 3339); "" sorts first
};

class PodLogWriter {
 public:
  // Lines of the pod's log already in the archive; the collector skips that many.
  int64_t archived_lines() const;
  // Adds the next line of the pod's log (job-log format, without '\n'); kept until Flush().
  void Add(const std::string& line);
  // Writes what was added since the last write, when `force`, when the chunk is full, or when
  // flush_interval has passed since the last write (measured with `now`). A failed write keeps
  // the lines for the next Flush.
  Status Flush(bool force, WallTime now);
  // Whether Flush(false, now) would write.
  bool Due(WallTime now) const;

 private:
  friend class LogArchive;
  PodLogWriter(storage::ObjectStore& store, std::string dir, const LogArchiveOptions& options)
      : store_(store), dir_(std::move(dir)), options_(options) {}
  // Puts `content` at `key`, when this replica may write.
  Status Write(const std::string& key, const std::string& content);
  std::string ChunkKey() const REQUIRES(mu_);

  storage::ObjectStore& store_;
  const std::string dir_;  // "<prefix>/<ns>/<job>/<created>-<uid>/"
  const LogArchiveOptions& options_;
  Mutex write_mu_ ACQUIRED_BEFORE(mu_);  // held by Flush through its write
  mutable Mutex mu_;
  int64_t first_ GUARDED_BY(mu_) = 0;        // pod log line that starts the open chunk
  int64_t chunk_lines_ GUARDED_BY(mu_) = 0;  // pod log lines in it (the marker not counted)
  std::string chunk_ GUARDED_BY(mu_);        // its content
  bool dirty_ GUARDED_BY(mu_) = false;       // content not yet written
  std::optional<WallTime> written_at_ GUARDED_BY(mu_);
};
using PodLogWriterPtr = std::unique_ptr<PodLogWriter>;

class LogArchive {
 public:
  // `store` must outlive the archive. `prefix`: "" or "a/b" (no leading or trailing '/').
  LogArchive(storage::ObjectStore& store, std::string prefix, LogArchiveOptions options = {});

  // "s3://bucket/prefix", "/var/log/dljob": where the archive is, for messages.
  std::string Where() const;

  // The job's whole archived log; kNotFound when the archive has none of it.
  Result<std::string> Read(const std::string& ns, const std::string& job) const;

  // A writer for one launcher pod of the job, continuing what the archive already has of it.
  Result<PodLogWriterPtr> OpenPod(const std::string& ns, const std::string& job,
                                  const ArchivedPod& pod);

 private:
  std::string JobDir(const std::string& ns, const std::string& job) const;

  storage::ObjectStore& store_;
  const std::string prefix_;
  const LogArchiveOptions options_;
};

// "2024-01-02T03:04:05Z" -> "20240102T030405Z": the digits and T/Z of a timestamp, which sort as
// the timestamps do and need no escaping in a key.
std::string CompactTimestamp(const std::string& rfc3339);

}  // namespace dljob::metrics
