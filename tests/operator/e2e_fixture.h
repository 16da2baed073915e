// The fixture of the operator end-to-end tests: one TestCluster (dljob-test-apiserver) per test and
// the dljob-operator processes started against it, with the operators' and the server's output
// printed when a test fails. Waits are failure limits (kWait), never timing assertions.
#pragma once

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "http/testing/http_test_client.h"
#include "tests/operator/e2e_jobs.h"
#include "tests/operator/test_cluster.h"

namespace dljob::testing {

// How long a test waits for something before it fails (generous: a loaded 2-core machine).
inline constexpr int kWait = 45'000;

class OperatorE2eTest : public ::testing::Test {
 protected:
  void StartCluster(const ClusterOptions& options) {
    Result<std::unique_ptr<TestCluster>> c = TestCluster::Start(options);
    ASSERT_TRUE(c.ok()) << c.status().message();
    cluster_ = std::move(*c);
  }

  // Starts an operator that the fixture keeps (and prints the log of on failure).
  OperatorProcess& StartOperator(const std::vector<std::string>& args = {}) {
    operators_.push_back(cluster_->StartOperator(args));
    return *operators_.back();
  }

  void TearDown() override {
    if (!HasFailure() || !cluster_) return;
    for (size_t i = 0; i < operators_.size(); ++i) {
      std::string log = operators_[i]->Log();
      if (log.size() > 6000) log = "..." + log.substr(log.size() - 6000);
      std::cerr << "--- operator " << i + 1 << " (pid " << operators_[i]->pid() << ") ---\n"
                << log << "\n";
    }
  }

  kube::Api& api() { return cluster_->api(); }
  const ControlClient& control() { return cluster_->control(); }

  // GET `path` from an operator's HTTP endpoint.
  static http::testing::ClientResponse Get(int port, const std::string& path) {
    return http::testing::Fetch(
        port, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  }

  std::unique_ptr<TestCluster> cluster_;
  std::vector<std::unique_ptr<OperatorProcess>> operators_;  // destroyed before cluster_
};

}  // namespace dljob::testing
