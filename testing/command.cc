#include "testing/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <regex>
#include <sstream>

#include "base/env.h"

namespace dljob::testing {
namespace {

[[noreturn]] void Exec(const std::vector<std::string>& argv,
                       const std::map<std::string, std::string>& env) {
  // Never the developer's cluster: no inherited kubeconfig or in-cluster variables, and HOME (for
  // ~/.kube/config) is the test's state directory, unless the test says otherwise.
  for (const char* name : {"KUBECONFIG", "KUBERNETES_SERVICE_HOST"}) {
    if (!env.count(name)) unsetenv(name);
  }
  if (!env.count("HOME") && env.count("XDG_STATE_HOME")) {
    setenv("HOME", env.at("XDG_STATE_HOME").c_str(), 1);
  }
  for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  dprintf(2, "exec %s: %s\n", args[0], strerror(errno));
  _exit(127);
}

int CodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

std::string BinDir() { return DLJOB_BIN_DIR; }
std::string SourceDir() { return DLJOB_SOURCE_DIR; }

CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env) {
  int out[2], err[2];
  // Close-on-exec: only the copies on 1 and 2 reach the command, so a daemon it starts in the
  // background (kube-fault.sh's kubelet) holds no pipe open and the reads below end.
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    close(out[0]);
    close(err[0]);
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    dup2(devnull, 0);
    Exec(argv, env);
  }
  close(out[1]);
  close(err[1]);
  CommandResult r;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = CodeOf(status);
  return r;
}

Background::Background(const std::vector<std::string>& argv,
                       const std::map<std::string, std::string>& env, const std::string& out_path,
                       const std::string& err_path) {
  pid_ = fork();
  if (pid_ == 0) {
    setpgid(0, 0);
    int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    Exec(argv, env);
  }
  setpgid(pid_, pid_);
}

Background::~Background() {
  if (pid_ <= 0) return;
  // The whole process group, also when the leader has ended and been reaped: what it started in
  // the background (a shell's `cmd &`) may still run. Its id cannot have been reused while any
  // member lives, and a group with no member left makes this a no-op (ESRCH).
  kill(-pid_, SIGKILL);
  if (!reaped_) Wait(10000);
}

void Background::Signal(int sig) {
  if (!reaped_) kill(pid_, sig);
}

int Background::Wait(int timeout_ms) {
  auto reap = [this] {
    int status = 0;
    if (!reaped_ && waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      exit_code_ = CodeOf(status);
    }
    return reaped_;
  };
  return WaitFor(reap, timeout_ms, 50) ? exit_code_ : -1;
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/dljob-test-XXXXXX";
  path_ = mkdtemp(tmpl);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string ReadFile(const std::string& path) {
  Result<std::string> text = DefaultEnv().ReadFile(path);
  return text.ok() ? std::move(text).value() : std::string();
}

std::string FindOnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

std::vector<std::string> ValidateProblems(const std::string& file, int* exit_code) {
  CommandResult r = RunCommand({BinDir() + "/dljob", "validate", "-f", file});
  if (exit_code) *exit_code = r.exit_code;
  static const std::regex kPosition(R"( \(line \d+(, column \d+)?\)$)");
  std::vector<std::string> out;
  std::istringstream lines(r.err);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("  ")) out.push_back(std::regex_replace(line.substr(2), kPosition, ""));
  }
  return out;
}

}  // namespace dljob::testing
