// E2eCluster: what the shared operator end-to-end cases (shared_cases_*.cc) need of a cluster,
// so that one set of cases runs against dljob-test-apiserver (TestCluster, test_cluster.h) and
// against a real Kubernetes (KubeCluster, kube_cluster.h). Where the two differ, the real one is
// right and the test server is fixed.
//
// A cluster offers one node with gpus() nvidia.com/gpu (or, for the multi-node cases, several of
// as many GPUs each), a namespace of the test's own (ns()), an
// admin kube::Api, and dljob-operator processes started against it. The cases create jobs with
// NewJob() and move them only through what a training job itself does, so each cluster maps it to
// its own means: on the test server its /_test API sets pod phases and appends launcher log
// lines; on a real cluster the job's ranks are a small shell loop that prints what the test gives
// it, and exits with the code the test gives it, through files on a hostPath volume.
//
// Every call waits at most wait_ms() for what it needs (a pod to exist, a rank to have an
// address) and returns an error naming what it did not find; never how fast anything happened.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "kube/api.h"
#include "tests/operator/operator_process.h"

namespace dljob::testing {

class E2eCluster {
 public:
  virtual ~E2eCluster() = default;

  // "test-apiserver" or "kubernetes", for messages.
  virtual std::string Name() const = 0;
  virtual kube::Api& api() = 0;
  // The namespace the test's jobs live in (SetNs'd by the fixture).
  virtual std::string ns() const = 0;
  // nvidia.com/gpu of the cluster's one node (of each node, for the multi-node cases).
  virtual int gpus() const = 0;
  // nvidia.com/gpu of every node together: what the queue counts free ("N free" in its messages
  // is cluster-wide, also for a job that may use only one node).
  virtual int cluster_gpus() const = 0;
  // How long a case waits for something before it fails (a failure limit, never a timing check).
  virtual int wait_ms() const = 0;

  // Starts dljob-operator with `args` plus the flags the cluster needs that `args` does not name
  // (StartOperatorAt, operator_process.h); its lease lives in ns().
  virtual std::unique_ptr<OperatorProcess> StartOperator(const std::vector<std::string>& args) = 0;

  // A DLJob in ns() of `gpus` ranks in workers of `gpus_per_worker`, with backoffLimit
  // `backoff_limit`, whose ranks this cluster can drive with the calls below.
  virtual nlohmann::json NewJob(const std::string& name, int gpus, int gpus_per_worker,
                                int backoff_limit = 0) = 0;
  // Rank `rank` of the job's current run prints `line` (no newline) on its stdout.
  virtual Status Say(const std::string& job, int rank, const std::string& line) = 0;
  // Every rank of the job's current run exits with `exit_code`, so its launcher ends with it.
  virtual Status EndTraining(const std::string& job, int exit_code) = 0;
  // The job's current worker `index` fails (its container exits non-zero).
  virtual Status FailWorker(const std::string& job, int index) = 0;
  // The kubelet of `node` stops, the containers it started running on, until StartKubelet; the
  // node goes not Ready as the node lifecycle controller marks it (on the test server at once, on
  // Kubernetes after its node-monitor grace period).
  virtual Status StopKubelet(const std::string& node) = 0;
  virtual Status StartKubelet(const std::string& node) = 0;
  // A part of the control plane ("kube-apiserver" or "etcd") is stopped and started again; returns
  // once it serves again. Watches and followed logs end meanwhile, and requests fail.
  virtual Status RestartControlPlane(const std::string& part) = 0;
  // Every stream of the job's launcher log ends the way a kubelet restart ends it: cleanly, while
  // the launcher runs on. Returns once the log can be read again.
  virtual Status CutLauncherLog(const std::string& job) = 0;

  // A bearer token of the service account `sa` of ns() (made if missing), as the server
  // authenticates it (TokenReview): the legacy token Secret, filled by the real token
  // controller, or holding a token the test server takes (tests/apiserver/rest_reviews.h).
  virtual Result<std::string> ServiceAccountToken(const std::string& sa) = 0;

  // What to print when a case fails: the server's or the cluster's own account.
  virtual std::string Diagnostics() const = 0;
};

}  // namespace dljob::testing
