// Processes at the edge of the local runner: spawning mpirun with its output piped back,
// signalling it, and telling whether a recorded process still lives.
//
// ChildProcess owns the child: its destructor kills (SIGKILL) and reaps a child still running, so
// no early return leaks a process. The child runs in its own process group (so the terminal's
// Ctrl-C reaches dljob, which decides what to do) and receives SIGTERM if dljob dies
// (PR_SET_PDEATHSIG), so a crashed dljob never leaves ranks running. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace dljob {

// A process identity that survives pid reuse: the pid plus its start time in clock ticks since
// boot (field 22 of /proc/<pid>/stat).
struct ProcessId {
  pid_t pid = 0;
  unsigned long long start_ticks = 0;
  bool operator==(const ProcessId&) const = default;
};

ProcessId SelfProcessId();
// True if a process with this pid and start time is running (not a zombie).
bool IsAlive(const ProcessId& id);

struct SpawnOptions {
  std::vector<std::string> argv;           // argv[0] is looked up on PATH if it has no '/'
  std::map<std::string, std::string> env;  // the child's whole environment
  std::string working_dir;                 // "" = inherit
};

class ChildProcess {
 public:
  // Starts the child with stdout and stderr on two non-blocking pipes.
  static Result<std::unique_ptr<ChildProcess>> Spawn(const SpawnOptions& options);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  int stdout_fd() const { return out_fd_; }  // -1 once closed
  int stderr_fd() const { return err_fd_; }
  void CloseStdout();
  void CloseStderr();

  // Sends `signal` to the child only, or to its whole process group.
  void Signal(int signal);
  void SignalGroup(int signal);
  // Sends `signal` to the child's own children (not to it, not further down); returns how many
  // got it. For mpirun on this machine these are the ranks.
  int SignalChildren(int signal);

  // Non-blocking: the exit status once the child has ended (as from waitpid), else nullopt.
  std::optional<int> Poll();
  // Blocks until the child ends; returns the wait status.
  int Wait();

 private:
  ChildProcess(pid_t pid, int out_fd, int err_fd) : pid_(pid), out_fd_(out_fd), err_fd_(err_fd) {}
  pid_t pid_;
  int out_fd_;
  int err_fd_;
  std::optional<int> wait_status_;
};

// Human description of a wait status: "exited with code 1", "killed by signal 9 (Killed)".
std::string DescribeWaitStatus(int wait_status);

}  // namespace dljob
