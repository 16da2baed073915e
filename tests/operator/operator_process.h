// OperatorProcess: one dljob-operator process started by an end-to-end test, and OperatorArgv,
// the command line the tests start it with. Its output goes to files kept for failure messages
// (Log()); the handle's destructor SIGKILLs and reaps it (command.h's Background).
#pragma once

#include <sys/types.h>

#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include "testing/command.h"

namespace dljob::testing {

class OperatorProcess {
 public:
  OperatorProcess(const std::vector<std::string>& argv, std::string out_path, std::string err_path,
                  std::string port_file);
  pid_t pid() const { return process_.pid(); }
  // The /metrics port, once the operator wrote its port file (waits up to timeout_ms); -1 if not.
  int MetricsPort(int timeout_ms = 20000);
  void Kill() { process_.Signal(SIGKILL); }
  // The exit code (128 + signal when killed), or -1 when still running after timeout_ms.
  int Wait(int timeout_ms) { return process_.Wait(timeout_ms); }
  std::string Log() const;

 private:
  Background process_;
  std::string out_path_;
  std::string err_path_;
  std::string port_file_;
};

// The port a program wrote to its port file ("<port>\n"), or -1 while the file is missing or not
// complete (no newline yet).
int ReadPortFile(const std::string& path);

// Where an operator started by a test keeps its files, and whom it tells it is.
struct OperatorPlace {
  std::string kubeconfig;
  std::string dir;              // port file, output, log archive (dir + "/job-logs")
  std::string id;               // --identity, and the name of its files in dir
  std::string lease_namespace;  // --lease-namespace
};

// dljob-operator with `args` plus what a test needs that `args` does not name: --kubeconfig,
// --metrics-port=0, --port-file, --log-archive (a directory), --lease-namespace,
// --leader-elect=false,
// --identity, --workers=4. Creates the log archive directory.
std::unique_ptr<OperatorProcess> StartOperatorAt(const OperatorPlace& place,
                                                 const std::vector<std::string>& args);

}  // namespace dljob::testing
