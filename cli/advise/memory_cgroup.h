// Memory caps for trials: a child of this process's memory cgroup (cgroup v1), one per trial.
//
// Why cgroup v1: it is what a container runtime gives a pod, it charges what the kernel charges a
// container (anonymous memory and the page cache its reads bring in), it can cap a whole process
// tree (mpirun and its ranks) at once, and it records the peak (memory.max_usage_in_bytes) and
// whether the OOM killer fired (memory.oom_control's oom_kill). A trial's command is started as
// `/bin/sh -c 'echo $$ > <cgroup>/cgroup.procs && exec "$@"' …`, so mpirun and every rank are
// in the cgroup from their first instruction. Page cache a trial reads is charged to it unless
// another cgroup read those pages first, so a peak includes the data files the trial read.
//
// Needs a writable memory hierarchy (root, or a delegated cgroup). cgroup v2 is not supported
// (a process cannot create a child of its own cgroup and stay in the parent under v2's
// no-internal-process rule without a delegated subtree); Probe says so and advise runs without the
// memory axis.
//
// MemoryCgroup's destructor removes the directory (retrying briefly while the last processes
// exit). Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace dljob::advise {

class MemoryCgroup {
 public:
  ~MemoryCgroup();
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;

  const std::string& dir() const { return dir_; }
  // `argv` started inside this cgroup (see above).
  std::vector<std::string> Wrap(const std::vector<std::string>& argv) const;
  std::optional<int64_t> PeakBytes() const;
  bool OutOfMemoryKilled() const;

 private:
  friend class MemoryCgroups;
  MemoryCgroup(std::string dir, Clock& clock) : dir_(std::move(dir)), clock_(clock) {}
  std::string dir_;
  Clock& clock_;  // the destructor's waits for the kernel to release the cgroup
};

class MemoryCgroups {
 public:
  // This process's memory cgroup, if it can have children here; the error says why not.
  static Result<MemoryCgroups> Probe();
  // A new child `name` with `limit_bytes` (none: uncapped, measured only). Its destructor waits on
  // `clock` (up to 5 s) for the kernel to release it; the clock must outlive it.
  Result<std::unique_ptr<MemoryCgroup>> Create(const std::string& name,
                                               std::optional<int64_t> limit_bytes,
                                               Clock& clock) const;

 private:
  explicit MemoryCgroups(std::string parent) : parent_(std::move(parent)) {}
  std::string parent_;
};

// Pure helpers, exposed for tests. The memory cgroup path of /proc/self/cgroup's text (v1 line
// "N:memory:/path" or "N:…,memory,…:/path"), and the v1 memory hierarchy's mount point from
// /proc/mounts' text.
std::optional<std::string> MemoryCgroupPath(const std::string& proc_self_cgroup);
std::optional<std::string> MemoryCgroupMount(const std::string& proc_mounts);
// "oom_kill N" of memory.oom_control's text (0 when absent).
int64_t OomKillCount(const std::string& oom_control);

}  // namespace dljob::advise
