#include "base/testing/mem_env.h"

#include <utility>

namespace dljob::testing {
namespace {

// "/a/b/c" -> "/a/b"; "/a" -> "/"; "a" -> "".
std::string Parent(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Whether `path` lies strictly under directory `dir`.
bool Under(const std::string& path, const std::string& dir) {
  std::string prefix = dir == "/" ? "/" : dir + "/";
  return path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0;
}

// Paths are kept without a trailing '/' (except the root).
std::string Clean(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

class MemEnv::File final : public AppendableFile {
 public:
  File(MemEnv& env, std::string path) : env_(env), path_(std::move(path)) {}
  Status Append(std::string_view data) override { return env_.AppendTo(path_, data); }
  Status Sync() override { return Status::Ok(); }  // memory is as durable as it gets

 private:
  MemEnv& env_;
  const std::string path_;
};

Status MemEnv::InjectedFailureLocked() {
  if (failures_left_ == 0) return Status::Ok();
  --failures_left_;
  return failure_;
}

bool MemEnv::IsDirLocked(const std::string& path) const { return dirs_.count(path) > 0; }

bool MemEnv::ExistsLocked(const std::string& path) const {
  return files_.count(path) > 0 || dirs_.count(path) > 0;
}

void MemEnv::FailWrites(int count, Status status) {
  MutexLock lock(mu_);
  failures_left_ = count;
  failure_ = std::move(status);
}

Result<std::string> MemEnv::ReadFile(const std::string& raw) {
  std::string path = Clean(raw);
  MutexLock lock(mu_);
  auto it = files_.find(path);
  if (it == files_.end()) {
    return Status::NotFound("cannot open \"" + path + "\": No such file or directory");
  }
  return it->second;
}

Status MemEnv::WriteFileAtomically(const std::string& raw, std::string_view data) {
  std::string path = Clean(raw);
  MutexLock lock(mu_);
  if (Status s = InjectedFailureLocked(); !s.ok()) return s;
  if (!IsDirLocked(Parent(path))) {
    return Status::NotFound("cannot create \"" + path + "\": No such file or directory");
  }
  if (IsDirLocked(path))
    return Status::Unavailable("cannot replace \"" + path + "\": Is a directory");
  files_[path] = std::string(data);
  return Status::Ok();
}

Status MemEnv::RenameFile(const std::string& raw_from, const std::string& raw_to) {
  std::string from = Clean(raw_from), to = Clean(raw_to);
  MutexLock lock(mu_);
  if (Status s = InjectedFailureLocked(); !s.ok()) return s;
  auto it = files_.find(from);
  if (it == files_.end() || !IsDirLocked(Parent(to))) {
    return Status::NotFound("cannot rename \"" + from + "\" to \"" + to +
                            "\": No such file or directory");
  }
  if (IsDirLocked(to)) {
    return Status::Unavailable("cannot rename \"" + from + "\" to \"" + to + "\": Is a directory");
  }
  if (from == to) return Status::Ok();
  files_[to] = std::move(it->second);
  files_.erase(from);
  return Status::Ok();
}

Status MemEnv::CreateDir(const std::string& raw) {
  std::string path = Clean(raw);
  MutexLock lock(mu_);
  if (Status s = InjectedFailureLocked(); !s.ok()) return s;
  if (ExistsLocked(path))
    return Status::AlreadyExists("cannot create \"" + path + "\": File exists");
  if (!IsDirLocked(Parent(path))) {
    return Status::NotFound("cannot create \"" + path + "\": No such file or directory");
  }
  dirs_.insert(path);
  return Status::Ok();
}

Status MemEnv::CreateDirs(const std::string& raw) {
  std::string path = Clean(raw);
  MutexLock lock(mu_);
  if (Status s = InjectedFailureLocked(); !s.ok()) return s;
  for (std::string p = path; !p.empty() && p != "/"; p = Parent(p)) {
    if (files_.count(p))
      return Status::Unavailable("cannot create \"" + path + "\": Not a directory");
  }
  for (std::string p = path; !p.empty() && p != "/"; p = Parent(p)) dirs_.insert(p);
  return Status::Ok();
}

bool MemEnv::FileExists(const std::string& raw) {
  MutexLock lock(mu_);
  return ExistsLocked(Clean(raw));
}

Result<std::vector<std::string>> MemEnv::ListDir(const std::string& raw) {
  std::string dir = Clean(raw);
  MutexLock lock(mu_);
  if (!IsDirLocked(dir)) {
    return Status::NotFound("cannot list \"" + dir + "\": No such file or directory");
  }
  std::set<std::string> names;  // sorted, as DefaultEnv's
  auto add = [&](const std::string& path) {
    if (Parent(path) == dir) names.insert(path.substr(path.find_last_of('/') + 1));
  };
  for (const auto& [path, content] : files_) add(path);
  for (const std::string& path : dirs_) add(path);
  return std::vector<std::string>(names.begin(), names.end());
}

Status MemEnv::RemoveAll(const std::string& raw) {
  std::string path = Clean(raw);
  MutexLock lock(mu_);
  if (!ExistsLocked(path)) {
    return Status::NotFound("cannot remove \"" + path + "\": No such file or directory");
  }
  files_.erase(path);
  dirs_.erase(path);
  std::erase_if(files_, [&](const auto& entry) { return Under(entry.first, path); });
  std::erase_if(dirs_, [&](const std::string& d) { return Under(d, path); });
  return Status::Ok();
}

Result<std::unique_ptr<AppendableFile>> MemEnv::NewAppendableFile(const std::string& raw) {
  std::string path = Clean(raw);
  MutexLock lock(mu_);
  if (Status s = InjectedFailureLocked(); !s.ok()) return s;
  if (!IsDirLocked(Parent(path))) {
    return Status::NotFound("cannot open \"" + path + "\": No such file or directory");
  }
  if (IsDirLocked(path)) return Status::Unavailable("cannot open \"" + path + "\": Is a directory");
  files_.try_emplace(path);  // created empty; an existing file keeps its content
  return std::unique_ptr<AppendableFile>(new File(*this, path));
}

Status MemEnv::AppendTo(const std::string& path, std::string_view data) {
  MutexLock lock(mu_);
  if (Status s = InjectedFailureLocked(); !s.ok()) return s;
  auto it = files_.find(path);
  if (it != files_.end()) it->second.append(data);
  return Status::Ok();
}

}  // namespace dljob::testing
