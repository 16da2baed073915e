#include "cli/local/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/errno_status.h"

namespace dljob {
namespace {

std::optional<std::pair<char, unsigned long long>> ReadStat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!in || !std::getline(in, stat)) return std::nullopt;
  // The command name (field 2) may hold spaces and ')': fields resume after the last ')'.
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  char state = 0;
  std::string skip;
  fields >> state;
  for (int field = 4; field < 22; ++field) fields >> skip;
  unsigned long long start = 0;
  if (!(fields >> start)) return std::nullopt;
  return std::pair{state, start};
}

[[noreturn]] void ExecChild(const SpawnOptions& o, int out_w, int err_w, pid_t parent) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(127);  // the parent died before prctl took effect
  dup2(out_w, STDOUT_FILENO);
  dup2(err_w, STDERR_FILENO);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, STDIN_FILENO);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  if (!o.working_dir.empty() && chdir(o.working_dir.c_str()) != 0) {
    dprintf(STDERR_FILENO, "cannot enter working directory %s: %s\n", o.working_dir.c_str(),
            strerror(errno));
    _exit(127);
  }
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : o.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> argv, envp;
  for (const std::string& a : o.argv) argv.push_back(const_cast<char*>(a.c_str()));
  for (std::string& e : env_strings) envp.push_back(e.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  // execvpe searches the PATH of dljob's own environment, which is what the user expects.
  execvpe(argv[0], argv.data(), envp.data());
  dprintf(STDERR_FILENO, "cannot run %s: %s\n", argv[0], strerror(errno));
  _exit(127);
}

}  // namespace

ProcessId SelfProcessId() {
  ProcessId id{getpid(), 0};
  if (auto stat = ReadStat(id.pid)) id.start_ticks = stat->second;
  return id;
}

bool IsAlive(const ProcessId& id) {
  if (id.pid <= 0) return false;
  auto stat = ReadStat(id.pid);
  return stat && stat->first != 'Z' && stat->first != 'X' && stat->second == id.start_ticks;
}

Result<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(const SpawnOptions& options) {
  if (options.argv.empty()) return Status::InvalidArgument("nothing to run");
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return ErrnoStatus("pipe", "");
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return ErrnoStatus("pipe", "");
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
    return ErrnoStatus("fork", "");
  }
  if (pid == 0) ExecChild(options, out[1], err[1], parent);
  setpgid(pid, pid);  // also in the parent, so the group exists before anyone signals it
  close(out[1]);
  close(err[1]);
  fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
  fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK);
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, out[0], err[0]));
}

ChildProcess::~ChildProcess() {
  if (!wait_status_) {
    SignalGroup(SIGKILL);
    Wait();
  }
  CloseStdout();
  CloseStderr();
}

void ChildProcess::CloseStdout() {
  if (out_fd_ >= 0) close(out_fd_);
  out_fd_ = -1;
}

void ChildProcess::CloseStderr() {
  if (err_fd_ >= 0) close(err_fd_);
  err_fd_ = -1;
}

void ChildProcess::Signal(int signal) {
  if (!wait_status_) kill(pid_, signal);
}

int ChildProcess::SignalChildren(int signal) {
  if (wait_status_) return 0;
  int signalled = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!in || !std::getline(in, stat)) continue;  // gone meanwhile
    // Fields resume after the command name's last ')': state, then the parent's pid.
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 1));
    char state = 0;
    pid_t parent = 0;
    if (!(fields >> state >> parent) || parent != pid_ || state == 'Z') continue;
    if (kill(static_cast<pid_t>(std::stol(name)), signal) == 0) ++signalled;
  }
  return signalled;
}

void ChildProcess::SignalGroup(int signal) {
  // The group can outlive its leader (ranks still exiting), so signal it even after the wait.
  kill(-pid_, signal);
}

std::optional<int> ChildProcess::Poll() {
  if (wait_status_) return wait_status_;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) wait_status_ = status;
  return wait_status_;
}

int ChildProcess::Wait() {
  while (!wait_status_) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, 0);
    if (r == pid_)
      wait_status_ = status;
    else if (r < 0 && errno != EINTR)
      wait_status_ = 0;  // not our child anymore: nothing to reap
  }
  return *wait_status_;
}

std::string DescribeWaitStatus(int s) {
  if (WIFEXITED(s)) return "exited with code " + std::to_string(WEXITSTATUS(s));
  if (WIFSIGNALED(s)) {
    return "killed by signal " + std::to_string(WTERMSIG(s)) + " (" + strsignal(WTERMSIG(s)) + ")";
  }
  return "ended with wait status " + std::to_string(s);
}

}  // namespace dljob
