// Env: the filesystem seam, after LevelDB's Env.
//
// Components that keep state in files (the local job store, caches, checkpoints, datasets) do
// their file I/O through an Env: passed to them by reference, so tests can run them on an
// in-memory filesystem (base/testing/mem_env.h) and inject failures, or DefaultEnv() (the real
// one) at a thin edge. The durable write (temporary file, fsync, rename, fsync of the directory)
// and the whole-file read are written here once, and a failed system call becomes a Status in
// one place (base/errno_status.h); nothing else writes them again. Paths are plain strings,
// '/'-separated; an Env does not interpret them beyond that. Every call returns a Status naming
// the path and what failed; none throws.
//
// Implementations are thread-safe. Operations on different paths are independent; the atomicity
// each method promises is stated on the method. An AppendableFile belongs to one thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace dljob {

// A file open for appending (LevelDB's WritableFile, append-only): logs that readers follow while
// they grow. Closed when destroyed. Not thread-safe; one owner.
class AppendableFile {
 public:
  virtual ~AppendableFile() = default;

  // Adds `data` at the end of the file in one write (on disk: one write(2) to an O_APPEND file,
  // continued only after a short write), so a concurrent reader, or another process appending to
  // the same file, does not see it interleaved with other data.
  virtual Status Append(std::string_view data) = 0;

  // Makes what was appended so far durable (on disk: fsync(2)).
  virtual Status Sync() = 0;
};

// WriteFileAtomically's temporary files, beside their target while it runs (and after a crash),
// are named "<dir>/.dljob-tmp-<name>.<pid>.<n>": hidden, and skipped by listings of user content
// (LocalDirStore's objects).
inline constexpr char kTempFilePrefix[] = ".dljob-tmp-";

class Env {
 public:
  virtual ~Env() = default;

  // The whole content of a file. kNotFound when it does not exist.
  virtual Result<std::string> ReadFile(const std::string& path) = 0;

  // Replaces (or creates) `path` with `data` atomically and durably: a reader, or a crash at any
  // point, sees the old content or the new, never a mix, and once it returns OK the new content
  // survives a crash (on disk: a temporary file beside `path`, fsync, RenameFile). The directory
  // must exist.
  virtual Status WriteFileAtomically(const std::string& path, std::string_view data) = 0;

  // Moves the file `from` to `to`, replacing what is at `to` atomically, and makes the move
  // durable (on disk: rename(2), then fsync of the directory of `to`). Both in one directory or
  // in directories of one filesystem. kNotFound when `from` does not exist. The content of
  // `from` is as durable as its writer made it (AppendableFile::Sync).
  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;

  // Creates one directory; its parent must exist. kAlreadyExists when something is there
  // already, so two callers racing to create it cannot both win.
  virtual Status CreateDir(const std::string& path) = 0;

  // Creates a directory and any missing parents; OK when it already exists.
  virtual Status CreateDirs(const std::string& path) = 0;

  virtual bool FileExists(const std::string& path) = 0;

  // The names (not paths) of the entries directly under `dir`, sorted. kNotFound when `dir`
  // does not exist.
  virtual Result<std::vector<std::string>> ListDir(const std::string& dir) = 0;

  // Removes a file, or a directory with everything under it. kNotFound when nothing is there.
  virtual Status RemoveAll(const std::string& path) = 0;

  // Opens `path` for appending, creating it empty when missing; the directory must exist
  // (kNotFound otherwise).
  virtual Result<std::unique_ptr<AppendableFile>> NewAppendableFile(const std::string& path) = 0;
};

// The process's real filesystem (POSIX). Lives for the whole process.
Env& DefaultEnv();

}  // namespace dljob
