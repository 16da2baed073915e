// See subprocess.h.
#include "base/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <vector>

#include "base/errno_status.h"

extern char** environ;

namespace dljob {
namespace {

// How long one poll() waits at most, so a child that ends while a grandchild holds its pipes is
// noticed (waitpid) and the timeout is checked.
constexpr int kPollSliceMs = 20;

// One captured stream: the parent's read end of a pipe and what has been read from it.
struct Capture {
  int fd = -1;  // -1 once closed (EOF, or not captured)
  std::string* text = nullptr;
  size_t* dropped = nullptr;
  size_t limit = 0;

  // Reads what is there without blocking; closes the descriptor at end of file or on error.
  void ReadAvailable() {
    char buf[16384];
    while (fd >= 0) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) {
        size_t keep = std::min(static_cast<size_t>(n), limit - std::min(limit, text->size()));
        text->append(buf, keep);
        *dropped += static_cast<size_t>(n) - keep;
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      } else {
        Close();
      }
    }
  }
  void Close() {
    if (fd >= 0) close(fd);
    fd = -1;
  }
};

// This process's environment with `overrides` laid over it, as "NAME=value" strings.
std::vector<std::string> ChildEnvironment(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::set<std::string> replaced;
  for (const auto& [name, value] : overrides) replaced.insert(name);
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string entry = *e;
    if (!replaced.count(entry.substr(0, entry.find('=')))) out.push_back(std::move(entry));
  }
  for (const auto& [name, value] : overrides) out.push_back(name + "=" + value);
  return out;
}

// The spawn attributes: an empty signal mask and default actions for the signals callers
// commonly block or ignore.
struct SpawnAttributes {
  posix_spawnattr_t attr;
  SpawnAttributes() {
    posix_spawnattr_init(&attr);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD}) sigaddset(&defaults, s);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  }
  ~SpawnAttributes() { posix_spawnattr_destroy(&attr); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
};

// Starts the child with stdout (and stderr, when err_w >= 0) on the given pipe ends.
Result<pid_t> Spawn(const ProcessSpec& spec, int out_w, int err_w) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!spec.inherit_stdin) {
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, out_w, STDOUT_FILENO);
  if (err_w >= 0) posix_spawn_file_actions_adddup2(&actions, err_w, STDERR_FILENO);
  std::vector<std::string> env = ChildEnvironment(spec.env);
  std::vector<char*> argv, envp;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  for (std::string& e : env) envp.push_back(e.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  SpawnAttributes attributes;
  pid_t pid = -1;
  int err = posix_spawnp(&pid, argv[0], &actions, &attributes.attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) return ErrnoStatus("cannot run", spec.argv[0], err);
  return pid;
}

// A pipe whose read end is non-blocking; both ends close-on-exec (the child's end is dup2'ed
// onto its stdout or stderr, which clears that flag for the copy).
Status MakePipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) return ErrnoStatus("cannot make a pipe", "");
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  return Status::Ok();
}

// The child's wait status once it has ended; nullopt while it runs (WNOHANG); -1 when it cannot
// be reaped (someone else reaped it: SIGCHLD ignored).
std::optional<int> Reap(pid_t pid, int options) {
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid, &status, options);
    if (r == pid) return status;
    if (r == 0) return std::nullopt;  // WNOHANG: still running
    if (errno != EINTR) return -1;
  }
}

// Reads the child's output until it ends or the deadline passes (then kills it), and reaps it.
// Returns its wait status, or -1 when it was reaped elsewhere.
int Supervise(pid_t pid, Capture* captures, size_t count, Clock& clock,
              Clock::MonotonicTime deadline, ProcessResult& result) {
  std::optional<int> status;
  while (!(status = Reap(pid, WNOHANG))) {
    if (clock.MonotonicNow() >= deadline) {
      kill(pid, SIGKILL);
      status = Reap(pid, 0);
      result.timed_out = true;
      break;
    }
    std::vector<pollfd> fds;
    for (size_t i = 0; i < count; ++i) {
      if (captures[i].fd >= 0) fds.push_back({captures[i].fd, POLLIN, 0});
    }
    // Both pipes closed: the child is ending (or lingers without output); look again soon.
    poll(fds.data(), fds.size(), fds.empty() ? kPollSliceMs / 4 : kPollSliceMs);
    for (size_t i = 0; i < count; ++i) captures[i].ReadAvailable();
  }
  for (size_t i = 0; i < count; ++i) {
    captures[i].ReadAvailable();  // what the child wrote before it ended
    captures[i].Close();
  }
  return *status;
}

}  // namespace

std::string ProcessResult::Describe() const {
  if (timed_out) return "timed out and was killed";
  if (signal != 0) {
    return "was killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  }
  return "exited with status " + std::to_string(exit_code);
}

Result<ProcessResult> RunProcess(const ProcessSpec& spec, Clock& clock) {
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return Status::InvalidArgument("no command to run");
  }
  int out[2] = {-1, -1}, err[2] = {-1, -1};
  if (Status s = MakePipe(out); !s.ok()) return s;
  if (spec.capture_stderr) {
    if (Status s = MakePipe(err); !s.ok()) {
      close(out[0]);
      close(out[1]);
      return s;
    }
  }
  Clock::MonotonicTime deadline = clock.MonotonicNow() + spec.timeout;
  Result<pid_t> pid = Spawn(spec, out[1], err[1]);
  for (int fd : {out[1], err[1]}) {
    if (fd >= 0) close(fd);  // the child has its copies; EOF comes when it closes them
  }
  ProcessResult result;
  Capture captures[] = {{out[0], &result.out, &result.out_dropped, spec.max_output},
                        {err[0], &result.err, &result.err_dropped, spec.max_output}};
  if (!pid.ok()) {
    for (Capture& c : captures) c.Close();
    return pid.status();
  }
  int status = Supervise(*pid, captures, 2, clock, deadline, result);
  if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (status != -1 && WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace dljob
