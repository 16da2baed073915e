// KubeCluster: the real Kubernetes that scripts/cluster/kube-up.sh starts (1 to 4 nodes each
// advertising 8 nvidia.com/gpu, dljob's images in containerd), as an E2eCluster for the shared
// operator cases.
//
// Found through $KUBECONFIG, else ${DLJOB_KUBE_DIR:-/var/lib/dljob-kube}/kubeconfig. Start(n)
// fails, never skips, when no cluster answers there (naming scripts/cluster/kube-up.sh), when it
// has fewer than n Ready nodes with GPUs (or they differ in GPUs), when the DLJob CRDs are missing
// (EnsureCrds installs them), or when the chart's operator runs in dljob-system (two operators
// would share the nodes' GPUs; the cases start their own, on this machine, with the admin
// kubeconfig).
//
// Nodes: Start(1), for the single-node cases, pins every NewJob to the first Ready GPU node by name
// (spec.scheduling.nodeSelector kubernetes.io/hostname), so they hold on a cluster of several
// nodes as on one; Start(2) leaves the jobs free to use every node (SharedMultiNodeTest).
//
// Each cluster object is one test: a fresh namespace dljob-e2e-<pid>-<n>, deleted (and waited
// for, so the next test has the node's GPUs) when the object dies, and a private directory on this
// machine mounted into the job's pods as a hostPath data volume at /dljob-e2e.
//
// Driving ranks: NewJob's ranks run a shell loop (kRankLoop in the .cc) on the real trainer image
// (dljob/trainer:cpu). Each rank watches /dljob-e2e/<its worker's pod IP>/, so a file meant for one
// run of a worker is never read by a later one (every pod gets its own address): say.<rank>.<n>
// is printed, in order of n; `exit` holding a code ends the rank with it (mpirun then ends the
// launcher with it); `kill` stops the worker's sshd, so its container exits 255. Files are written
// whole (a rename), so a rank never reads half a file.
//
// Thread-safety: as TestCluster — the Api from any thread, the rest from the test's thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "kube/api.h"
#include "testing/command.h"
#include "tests/operator/e2e_cluster.h"

namespace dljob::testing {

class KubeCluster : public E2eCluster {
 public:
  // The kubeconfig path the cases use.
  static std::string KubeconfigPath();
  // Installs the DLJob and DLQueue CRDs (charts/dljob/crds, with kubectl apply) unless both are
  // there, and waits until they are Established. `installed` says whether it installed them.
  static Status EnsureCrds(bool* installed);
  // Deletes the CRDs (kubectl delete), for a suite that installed them.
  static Status DeleteCrds();

  // `nodes_used`: 1 (jobs pinned to one node) or the number of nodes the cases need at least.
  static Result<std::unique_ptr<KubeCluster>> Start(int nodes_used = 1);
  ~KubeCluster() override;

  std::string Name() const override { return "kubernetes"; }
  kube::Api& api() override { return *api_; }
  std::string ns() const override { return ns_; }
  int gpus() const override { return gpus_; }
  int cluster_gpus() const override { return cluster_gpus_; }
  // Real pods start in seconds, but a loaded 2-core machine can take a minute for a gang.
  static constexpr int kWaitMs = 180'000;
  int wait_ms() const override { return kWaitMs; }
  std::unique_ptr<OperatorProcess> StartOperator(const std::vector<std::string>& args) override;
  nlohmann::json NewJob(const std::string& name, int gpus, int gpus_per_worker,
                        int backoff_limit) override;
  Status Say(const std::string& job, int rank, const std::string& line) override;
  Status EndTraining(const std::string& job, int exit_code) override;
  Status FailWorker(const std::string& job, int index) override;
  // Restarts the kubelet of the launcher's node (scripts/cluster/kube-fault.sh restart-kubelet),
  // which ends every log stream it serves; returns once the node is Ready again.
  Status CutLauncherLog(const std::string& job) override;
  // scripts/cluster/kube-fault.sh stop-kubelet / start-kubelet.
  Status StopKubelet(const std::string& node) override;
  // kube-fault.sh restart-apiserver / restart-etcd.
  Status RestartControlPlane(const std::string& part) override;
  Status StartKubelet(const std::string& node) override;
  Result<std::string> ServiceAccountToken(const std::string& sa) override;
  // The namespace's pods (phase, node, container states) and its Events, oldest first.
  std::string Diagnostics() const override;

 private:
  KubeCluster() = default;
  // The pod IP of the job's live, Running worker `index`, once it has one.
  Result<std::string> WorkerAddress(const std::string& job, int64_t index);
  // Writes `text` to <ranks dir>/<address>/<name> whole.
  Status Put(const std::string& address, const std::string& name, const std::string& text);

  TempDir dir_;
  std::string ranks_dir_;  // dir_/ranks: the hostPath volume
  std::string kubeconfig_;
  std::unique_ptr<kube::Api> api_;
  std::string ns_;
  int gpus_ = 0;             // of each node used
  int cluster_gpus_ = 0;     // of every Ready node with GPUs
  std::string pinned_node_;  // Start(1): the node NewJob's jobs are pinned to
  int operators_started_ = 0;
  std::map<std::string, int> said_;  // "<address>/<rank>" → the next say.<rank>.<n>
};

}  // namespace dljob::testing
