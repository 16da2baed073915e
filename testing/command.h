// Running the built dljob programs from tests, as a user would from a shell.
//
// Each command runs with a private state directory (XDG_STATE_HOME) owned by the test, so tests
// never see each other's jobs or the developer's. Background commands are owned by a handle
// whose destructor kills (SIGKILL) and reaps the process group, so a failing test leaves nothing
// running.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "testing/wait.h"  // WaitFor, to wait on what the commands do

namespace dljob::testing {

struct CommandResult {
  int exit_code = -1;  // 128 + signal if killed
  std::string out;
  std::string err;
};

// The directory holding dljob and dljob-train.
std::string BinDir();
std::string SourceDir();

// Runs argv to completion with `env` added to this process's environment. KUBECONFIG and
// KUBERNETES_SERVICE_HOST are removed and HOME becomes XDG_STATE_HOME (when given), unless `env`
// sets them, so a test never reaches the developer's cluster.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env = {});

class Background {
 public:
  // Starts argv with stdout/stderr going to files (out_path, err_path).
  Background(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
             const std::string& out_path, const std::string& err_path);
  // SIGKILLs the command's process group (everything it started that did not leave the group,
  // also after the command itself has ended) and reaps the command.
  ~Background();
  pid_t pid() const { return pid_; }
  void Signal(int sig);
  // Waits up to timeout_ms; returns the exit code (128 + signal if killed) or -1 on timeout.
  int Wait(int timeout_ms);

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int exit_code_ = -1;
};

// A fresh directory under /tmp, removed with everything in it when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The file's content, or "" when it cannot be read (base/env.h's Env::ReadFile).
std::string ReadFile(const std::string& path);

// The first executable `program` in a directory of $PATH (/usr/bin when unset), as a shell
// finds it; "" when there is none.
std::string FindOnPath(const std::string& program);

// The problems the built `dljob validate -f file` prints, one per line as "path: reason", without
// their indentation and file positions ("(line L, column C)"); `exit_code`, when given, gets its
// exit code. Empty when it accepted the file.
std::vector<std::string> ValidateProblems(const std::string& file, int* exit_code = nullptr);

}  // namespace dljob::testing
