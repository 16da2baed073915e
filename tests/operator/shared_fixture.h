// The fixture of the operator cases shared by both servers (shared_*_test.cc): each case runs once
// per ClusterKind it is instantiated with — dljob-test-apiserver in operator_e2e_test
// (shared_on_test_apiserver.cc), the real Kubernetes of scripts/cluster/kube-up.sh in
// operator_cluster_test (shared_on_kubernetes.cc, ctest label `cluster`). A case sees only
// E2eCluster (e2e_cluster.h): one node of cluster().gpus() GPUs (its jobs pinned to one node of
// several), the namespace Ns(), jobs from
// NewJob() moved by Say/EndTraining/FailWorker; what it asserts holds on both.
//
// On failure the operators' logs and the cluster's own account (Diagnostics) are printed. Objects
// a case makes outside its namespace (DLQueues) are deleted after it through CreateClusterScoped.
#pragma once

#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/operator/e2e_cluster.h"
#include "tests/operator/e2e_jobs.h"

namespace dljob::testing {

struct ClusterKind {
  std::string name;  // the test name's suffix: TestApiServer, Kubernetes
  std::function<Result<std::unique_ptr<E2eCluster>>()> start;
};

inline std::string ClusterKindName(const ::testing::TestParamInfo<ClusterKind>& info) {
  return info.param.name;
}

class SharedE2eTest : public ::testing::TestWithParam<ClusterKind> {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<E2eCluster>> c = GetParam().start();
    ASSERT_TRUE(c.ok()) << c.status().message();
    cluster_ = std::move(*c);
    SetNs(cluster_->ns());
  }

  void TearDown() override {
    if (!cluster_) return;
    if (HasFailure()) {
      for (size_t i = 0; i < operators_.size(); ++i) {
        std::string log = operators_[i]->Log();
        if (log.size() > 6000) log = "..." + log.substr(log.size() - 6000);
        std::cerr << "--- operator " << i + 1 << " (pid " << operators_[i]->pid() << ") ---\n"
                  << log << "\n";
      }
      std::cerr << "--- on " << cluster_->Name() << ", namespace " << cluster_->ns() << " ---\n"
                << cluster_->Diagnostics() << "\n";
    }
    operators_.clear();
    for (const auto& [resource, name] : cluster_scoped_) api().Delete(resource, "", name);
    cluster_.reset();
  }

  E2eCluster& cluster() { return *cluster_; }
  kube::Api& api() { return cluster_->api(); }
  int wait() { return cluster_->wait_ms(); }

  OperatorProcess& StartOperator(const std::vector<std::string>& args = {}) {
    operators_.push_back(cluster_->StartOperator(args));
    return *operators_.back();
  }

  Json NewJob(const std::string& name, int gpus, int gpus_per_worker, int backoff_limit = 0) {
    return cluster_->NewJob(name, gpus, gpus_per_worker, backoff_limit);
  }

  bool WaitForPhase(const std::string& job, const std::string& phase) {
    return testing::WaitForPhase(api(), job, phase, wait());
  }

  // Creates a cluster-scoped object that TearDown deletes.
  kube::ApiResult<Json> CreateClusterScoped(const kube::Resource& resource, const Json& object) {
    kube::ApiResult<Json> made = api().Create(resource, "", object);
    if (made.ok()) cluster_scoped_.emplace_back(resource, NameOf(object));
    return made;
  }

 private:
  std::unique_ptr<E2eCluster> cluster_;
  std::vector<std::unique_ptr<OperatorProcess>> operators_;  // stopped before cluster_ goes
  std::vector<std::pair<kube::Resource, std::string>> cluster_scoped_;
};

// The shared cases that need two nodes or more (a gang spread over nodes, packing by clique, a node
// lost): the same fixture, instantiated with two nodes of cluster().gpus() GPUs each, labelled
// with a clique each, one rack and one zone — on the test server in operator_e2e_test, on the real
// cluster (kube-up.sh --nodes 2) in operator_cluster_test.
class SharedMultiNodeTest : public SharedE2eTest {};

}  // namespace dljob::testing
