// RunProcess: runs a short-lived helper program to completion and hands back how it ended and
// what it printed — the one-shot runner (kubeconfig credential plugins are its first user). Not
// for long-running children whose output is followed while they run (cli/local/process.h).
//
// No shell: argv goes to posix_spawnp as it is, and argv[0] is looked up on this process's PATH
// when it has no '/'. The child gets this process's environment with `env` laid over it, an empty
// signal mask and the default action for the signals a caller commonly blocks or ignores (INT,
// TERM, HUP, QUIT, PIPE, CHLD), so a program that blocks SIGTERM for sigwait or ignores SIGPIPE
// does not hand that on. Its stdout is captured; its stderr is captured or left as this
// process's; its stdin is /dev/null or this process's (for a helper that must ask the person at
// the terminal).
//
// The run is bounded by `timeout`, measured on the injected Clock's monotonic time: past it the
// child is killed with SIGKILL (by pid: its own children are not) and reaped, and the result says
// it timed out. The child is reaped before RunProcess returns, whatever happened. Once the child
// has ended, output still in the pipes is collected, but a grandchild that keeps them open is not
// waited for. Each captured stream keeps its first `max_output` bytes; the rest is read and
// counted, so a chatty child never blocks on a full pipe.
//
// Errors (Status) are failures to start: an empty argv, a command that does not exist (kNotFound)
// or cannot be executed, no pipes. A program that ran and failed is a ProcessResult, not an error.
//
// Thread-safety: calls are independent and may run on many threads at once. Descriptors are
// opened close-on-exec, so one call's child never inherits another call's pipes.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace dljob {

struct ProcessSpec {
  std::vector<std::string> argv;
  // Set in the child's environment on top of this process's (an entry here wins).
  std::vector<std::pair<std::string, std::string>> env;
  bool inherit_stdin = false;  // the child reads this process's stdin; else /dev/null
  bool capture_stderr = true;  // else the child writes to this process's stderr
  Clock::Duration timeout = std::chrono::seconds(60);
  size_t max_output = 1 << 20;  // per captured stream
};

struct ProcessResult {
  int exit_code = -1;      // the exit status when the child exited, else -1
  int signal = 0;          // the signal that ended it (SIGKILL after a timeout), else 0
  bool timed_out = false;  // killed because `timeout` passed
  std::string out;         // stdout, at most max_output bytes
  std::string err;         // stderr when captured, at most max_output bytes
  size_t out_dropped = 0;  // bytes read past max_output and thrown away
  size_t err_dropped = 0;

  bool succeeded() const { return exit_code == 0; }
  // "exited with status 3", "was killed by signal 11 (Segmentation fault)", "timed out and was
  // killed".
  std::string Describe() const;
};

Result<ProcessResult> RunProcess(const ProcessSpec& spec, Clock& clock);

}  // namespace dljob
