#include "cli/advise/memory_cgroup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/env.h"
#include "base/errno_status.h"

namespace dljob::advise {
namespace {

// The file's content, or "" when it cannot be read (a controller file this kernel lacks).
std::string ReadAll(const std::string& path) {
  Result<std::string> text = DefaultEnv().ReadFile(path);
  return text.ok() ? std::move(text).value() : std::string();
}

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  if (!out) return Status::Unavailable("cannot write " + path);
  return Status::Ok();
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) out.push_back(part);
  return out;
}

}  // namespace

std::optional<std::string> MemoryCgroupPath(const std::string& text) {
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    for (const std::string& c : Split(line.substr(a + 1, b - a - 1), ',')) {
      if (c == "memory") return line.substr(b + 1);
    }
  }
  return std::nullopt;
}

std::optional<std::string> MemoryCgroupMount(const std::string& text) {
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string x; fields >> x;) f.push_back(x);
    if (f.size() < 4 || f[2] != "cgroup") continue;
    for (const std::string& o : Split(f[3], ',')) {
      if (o == "memory") return f[1];
    }
  }
  return std::nullopt;
}

int64_t OomKillCount(const std::string& text) {
  std::stringstream in(text);
  for (std::string key; in >> key;) {
    int64_t v = 0;
    if (!(in >> v)) break;
    if (key == "oom_kill") return v;
  }
  return 0;
}

Result<MemoryCgroups> MemoryCgroups::Probe() {
  std::optional<std::string> path = MemoryCgroupPath(ReadAll("/proc/self/cgroup"));
  std::optional<std::string> mount = MemoryCgroupMount(ReadAll("/proc/mounts"));
  if (!path || !mount) {
    return Status::FailedPrecondition(
        "no cgroup v1 memory controller here (cgroup v2 is not supported yet), so trials cannot "
        "be capped or their peak measured");
  }
  std::string parent = *mount + (*path == "/" ? "" : *path);
  const std::string probe = parent + "/dljob-advise-probe-" + std::to_string(getpid());
  if (mkdir(probe.c_str(), 0755) != 0) {
    Status why = ErrnoStatus("cannot create a memory cgroup under", parent);
    return Status::FailedPrecondition(why.message() +
                                      ": run as root, or in a container with a writable cgroup");
  }
  rmdir(probe.c_str());
  return MemoryCgroups(parent);
}

Result<std::unique_ptr<MemoryCgroup>> MemoryCgroups::Create(const std::string& name,
                                                            std::optional<int64_t> limit_bytes,
                                                            Clock& clock) const {
  const std::string dir = parent_ + "/" + name;
  rmdir(dir.c_str());  // a leftover of a crashed run
  if (mkdir(dir.c_str(), 0755) != 0) {
    return ErrnoStatus("cannot create memory cgroup", dir);
  }
  std::unique_ptr<MemoryCgroup> cgroup(new MemoryCgroup(dir, clock));
  if (limit_bytes) {
    // No swap here, but cap memory+swap too where the kernel accounts it, so a cap is a cap.
    if (Status s = WriteFile(dir + "/memory.limit_in_bytes", std::to_string(*limit_bytes));
        !s.ok()) {
      return s;
    }
    WriteFile(dir + "/memory.memsw.limit_in_bytes", std::to_string(*limit_bytes));
  }
  return cgroup;
}

MemoryCgroup::~MemoryCgroup() {
  // The kernel frees a cgroup a moment after its last process exits: retry rmdir meanwhile.
  for (int i = 0; i < 50 && rmdir(dir_.c_str()) != 0 && errno == EBUSY; ++i) {
    clock_.SleepFor(std::chrono::milliseconds(100));
  }
}

std::vector<std::string> MemoryCgroup::Wrap(const std::vector<std::string>& argv) const {
  std::vector<std::string> out = {"/bin/sh", "-c", "echo $$ > \"$0\" && exec \"$@\"",
                                  dir_ + "/cgroup.procs"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::optional<int64_t> MemoryCgroup::PeakBytes() const {
  const std::string text = ReadAll(dir_ + "/memory.max_usage_in_bytes");
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str()) return std::nullopt;
  return static_cast<int64_t>(v);
}

bool MemoryCgroup::OutOfMemoryKilled() const {
  return OomKillCount(ReadAll(dir_ + "/memory.oom_control")) > 0;
}

}  // namespace dljob::advise
