// TestCluster: a simulated Kubernetes cluster for end-to-end tests of dljob-operator — the
// dljob-test-apiserver program on a loopback port with N GPU nodes, a kube::Api client for it, its
// /_test control client, and dljob-operator processes started against it.
//
// Everything lives in a private temporary directory (port files, kubeconfig, process output, the
// operators' log archive) removed when the cluster dies. Processes are owned by handles whose
// destructors SIGKILL and reap them (command.h's Background), so a failing test leaves nothing
// running. Destroy OperatorProcess handles before their TestCluster.
//
// Waiting is by polling with a failure limit (command.h's WaitFor): limits say how long a test
// waits before giving up, never how fast anything must be.
//
// Thread-safety: the Api and ControlClient may be used from any thread; the rest from the test's
// thread.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "kube/api.h"
#include "testing/command.h"
#include "tests/operator/control_client.h"

namespace dljob::testing {

struct ClusterOptions {
  int nodes = 2;
  int gpus_per_node = 8;
  int kubelet_delay_ms = -1;  // >= 0: bound pods go Running+Ready by themselves after this delay
};

// One dljob-operator process. Its stderr is kept for failure messages (Log()).
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

class TestCluster {
 public:
  // Starts the server and waits until it serves. Errors say what did not start and its output.
  static Result<std::unique_ptr<TestCluster>> Start(const ClusterOptions& options = {});
  ~TestCluster();

  kube::Api& api() { return *api_; }
  const ControlClient& control() const { return control_; }
  int port() const { return port_; }
  const std::string& kubeconfig() const { return kubeconfig_; }
  const std::string& dir() const { return dir_.path(); }
  std::string log_archive_dir() const { return dir_.path() + "/job-logs"; }
  std::string ApiServerLog() const;

  // Starts dljob-operator with `args` plus the flags a test needs that `args` does not name
  // (--kubeconfig, --metrics-port=0, --port-file, --log-archive-dir, --lease-namespace=default,
  // --leader-elect=false, --workers=4).
  std::unique_ptr<OperatorProcess> StartOperator(const std::vector<std::string>& args = {});

 private:
  TestCluster() = default;

  TempDir dir_;
  std::unique_ptr<Background> server_;
  int port_ = 0;
  std::string kubeconfig_;
  std::unique_ptr<kube::Api> api_;
  ControlClient control_{0};
  int operators_started_ = 0;
};

}  // namespace dljob::testing
