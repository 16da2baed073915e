// MemEnv: an Env (base/env.h) that keeps a filesystem in memory, for tests.
//
// Behaves as DefaultEnv() does for every Env method, including the error codes (kNotFound,
// kAlreadyExists), so a component tested on it behaves the same on disk. It also injects
// failures: FailWrites(n, status) makes the next n writes (WriteFileAtomically, RenameFile,
// CreateDir, CreateDirs, NewAppendableFile, AppendableFile::Append) fail with `status` and change
// nothing, which shows that a failed write leaves the old state whole. The root "/" always exists.
// An appendable file whose path was removed takes appends and keeps them nowhere, as an unlinked
// file would. Thread-safe. Appendable files must not outlive the MemEnv that opened them.
#pragma once

#include <map>
#include <set>
#include <string>

#include "base/env.h"
#include "base/mutex.h"

namespace dljob::testing {

class MemEnv final : public Env {
 public:
  Result<std::string> ReadFile(const std::string& path) override;
  Status WriteFileAtomically(const std::string& path, std::string_view data) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status CreateDir(const std::string& path) override;
  Status CreateDirs(const std::string& path) override;
  bool FileExists(const std::string& path) override;
  Result<std::vector<std::string>> ListDir(const std::string& dir) override;
  Status RemoveAll(const std::string& path) override;
  Result<std::unique_ptr<AppendableFile>> NewAppendableFile(const std::string& path) override;

  // The next `count` writes fail with `status` (non-OK) and change nothing.
  void FailWrites(int count, Status status);

 private:
  class File;

  Status AppendTo(const std::string& path, std::string_view data);
  Status InjectedFailureLocked() REQUIRES(mu_);
  bool IsDirLocked(const std::string& path) const REQUIRES(mu_);
  bool ExistsLocked(const std::string& path) const REQUIRES(mu_);

  Mutex mu_;
  std::map<std::string, std::string> files_ GUARDED_BY(mu_);
  std::set<std::string> dirs_ GUARDED_BY(mu_){"/"};
  int failures_left_ GUARDED_BY(mu_) = 0;
  Status failure_ GUARDED_BY(mu_);
};

}  // namespace dljob::testing
