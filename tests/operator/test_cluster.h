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

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "kube/api.h"
#include "testing/command.h"
#include "tests/operator/control_client.h"
#include "tests/operator/e2e_cluster.h"

namespace dljob::testing {

struct ClusterOptions {
  int nodes = 2;
  int gpus_per_node = 8;
  int kubelet_delay_ms = -1;  // >= 0: bound pods go Running+Ready by themselves after this delay
  int log_delay_ms = 0;       // pod log lines reach readers this long after they are written
};

class TestCluster : public E2eCluster {
 public:
  // Starts the server and waits until it serves. Errors say what did not start and its output.
  static Result<std::unique_ptr<TestCluster>> Start(const ClusterOptions& options = {});
  ~TestCluster();

  // E2eCluster, with the simulated kubelet on (ClusterOptions::kubelet_delay_ms >= 0) or pods
  // driven by the test: Say appends "[1,<rank>]<stdout>:<line>" to the launcher's log,
  // EndTraining ends the launcher with the code, FailWorker ends the worker with 1 (each once the
  // pod exists and is not being deleted). ns() is "default"; gpus() is gpus_per_node.
  std::string Name() const override { return "test-apiserver"; }
  kube::Api& api() override { return *api_; }
  std::string ns() const override { return "default"; }
  int gpus() const override { return options_.gpus_per_node; }
  int cluster_gpus() const override { return options_.nodes * options_.gpus_per_node; }
  int wait_ms() const override { return 45'000; }
  std::unique_ptr<OperatorProcess> StartOperator(const std::vector<std::string>& args) override;
  nlohmann::json NewJob(const std::string& name, int gpus, int gpus_per_worker,
                        int backoff_limit) override;
  Status Say(const std::string& job, int rank, const std::string& line) override;
  Status EndTraining(const std::string& job, int exit_code) override;
  Status FailWorker(const std::string& job, int index) override;
  // Ends every open watch and followed log (/_test/watches/drop): the test server cannot restart
  // one node's kubelet alone.
  Status CutLauncherLog(const std::string& job) override;
  Status StopKubelet(const std::string& node) override;  // /_test/nodes/{node}/kubelet
  // The server cannot lose its state and come back: every watch and followed log ends and the
  // next 20 API requests answer 503, as while kube-apiserver (or etcd under it) restarts.
  Status RestartControlPlane(const std::string& part) override;
  Status StartKubelet(const std::string& node) override;
  Result<std::string> ServiceAccountToken(const std::string& sa) override;
  std::string Diagnostics() const override {
    return "--- dljob-test-apiserver ---\n" + ApiServerLog();
  }

  const ControlClient& control() const { return control_; }
  int port() const { return port_; }
  const std::string& kubeconfig() const { return kubeconfig_; }
  const std::string& dir() const { return dir_.path(); }
  std::string log_archive_dir() const { return dir_.path() + "/job-logs"; }
  std::string ApiServerLog() const;

 private:
  explicit TestCluster(const ClusterOptions& options) : options_(options) {}
  // The live (not deleting) pod `name`, once there is one; an error naming it otherwise.
  Status WaitForLivePod(const std::string& name);

  ClusterOptions options_;

  TempDir dir_;
  std::unique_ptr<Background> server_;
  int port_ = 0;
  std::string kubeconfig_;
  std::unique_ptr<kube::Api> api_;
  ControlClient control_{0};
  int operators_started_ = 0;
  int tokens_made_ = 0;
};

}  // namespace dljob::testing
