#include "tests/operator/test_cluster.h"

#include <signal.h>
#include <unistd.h>

#include "base/base64.h"
#include "jobs/child_names.h"
#include "kube/config.h"
#include "kube/http_api.h"
#include "tests/operator/e2e_jobs.h"

namespace dljob::testing {

Result<std::unique_ptr<TestCluster>> TestCluster::Start(const ClusterOptions& options) {
  std::unique_ptr<TestCluster> c(new TestCluster(options));
  std::string port_file = c->dir() + "/apiserver.port";
  c->kubeconfig_ = c->dir() + "/kubeconfig";
  std::vector<std::string> argv = {
      BinDir() + "/dljob-test-apiserver",
      "--port=0",
      "--port-file=" + port_file,
      "--kubeconfig-out=" + c->kubeconfig_,
      "--crd=" + SourceDir() + "/charts/dljob/crds/dljob.io_dljobs.yaml",
      "--crd=" + SourceDir() + "/charts/dljob/crds/dljob.io_dlqueues.yaml",
      "--nodes=" + std::to_string(options.nodes),
      "--gpus-per-node=" + std::to_string(options.gpus_per_node),
  };
  if (options.log_delay_ms > 0) {
    argv.push_back("--log-delay-ms=" + std::to_string(options.log_delay_ms));
  }
  if (options.kubelet_delay_ms >= 0) {
    argv.push_back("--kubelet-delay-ms=" + std::to_string(options.kubelet_delay_ms));
  }
  c->server_ =
      std::make_unique<Background>(argv, std::map<std::string, std::string>{},
                                   c->dir() + "/apiserver.out", c->dir() + "/apiserver.err");
  bool up = WaitFor([&] { return ReadPortFile(port_file) > 0 || c->server_->Wait(0) >= 0; }, 20000);
  c->port_ = ReadPortFile(port_file);
  if (!up || c->port_ <= 0) {
    return Status::Unavailable("dljob-test-apiserver did not start: " + c->ApiServerLog());
  }
  c->control_ = ControlClient(c->port_);
  Result<kube::Config> config = kube::LoadKubeconfig(c->kubeconfig_);
  if (!config.ok()) return config.status();
  Result<std::unique_ptr<kube::Api>> api = kube::MakeApi(*config);
  if (!api.ok()) return api.status();
  c->api_ = std::move(*api);
  return c;
}

TestCluster::~TestCluster() {
  api_.reset();
  if (server_) {
    server_->Signal(SIGTERM);
    if (server_->Wait(10000) < 0) server_.reset();  // SIGKILLs the group
  }
}

std::string TestCluster::ApiServerLog() const {
  return ReadFile(dir() + "/apiserver.err") + ReadFile(dir() + "/apiserver.out");
}

std::unique_ptr<OperatorProcess> TestCluster::StartOperator(const std::vector<std::string>& args) {
  std::string id = "operator-" + std::to_string(++operators_started_);
  return StartOperatorAt({kubeconfig_, dir(), id, ns()}, args);
}

Json TestCluster::NewJob(const std::string& name, int gpus, int gpus_per_worker,
                         int backoff_limit) {
  return testing::NewJob(name, gpus, gpus_per_worker, backoff_limit);
}

Status TestCluster::WaitForLivePod(const std::string& name) {
  bool live = WaitFor(
      [&] {
        kube::ApiResult<Json> pod = api_->Get(kube::resources::kPods, ns(), name);
        return pod.ok() && !IsDeleting(*pod);
      },
      wait_ms());
  return live ? Status::Ok() : Status::NotFound("no live pod " + name + " in " + ns());
}

Status TestCluster::Say(const std::string& job, int rank, const std::string& line) {
  std::string launcher = LauncherName(job);
  if (Status s = WaitForLivePod(launcher); !s.ok()) return s;
  return control_.AppendLog(ns(), launcher,
                            "[1," + std::to_string(rank) + "]<stdout>:" + line + "\n");
}

Status TestCluster::CutLauncherLog(const std::string& job) {
  if (Status s = WaitForLivePod(LauncherName(job)); !s.ok()) return s;
  return control_.DropWatches();  // ends every followed log cleanly, as a kubelet restart does
}

Status TestCluster::RestartControlPlane(const std::string& part) {
  if (part != "kube-apiserver" && part != "etcd") return Status::InvalidArgument("no part " + part);
  Fault down;
  down.code = 503;
  down.count = 20;
  if (Status s = control_.AddFault(down, part + " is restarting"); !s.ok()) return s;
  return control_.DropWatches();
}

Status TestCluster::StopKubelet(const std::string& node) {
  return control_.SetKubelet(node, false);
}

Status TestCluster::StartKubelet(const std::string& node) {
  return control_.SetKubelet(node, true);
}

Status TestCluster::EndTraining(const std::string& job, int exit_code) {
  std::string launcher = LauncherName(job);
  if (Status s = WaitForLivePod(launcher); !s.ok()) return s;
  return Finish(control_, launcher, exit_code);
}

Result<std::string> TestCluster::ServiceAccountToken(const std::string& sa) {
  // The test server takes any token its Secret holds; this one is unguessable by other cases.
  const std::string token =
      "test-token-" + sa + "-" + std::to_string(++tokens_made_) + "-" + std::to_string(::getpid());
  Json secret = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"type", "kubernetes.io/service-account-token"},
                 {"metadata",
                  {{"name", sa + "-token-" + std::to_string(tokens_made_)},
                   {"annotations", {{"kubernetes.io/service-account.name", sa}}}}},
                 {"data", {{"token", Base64Encode(token)}}}};
  kube::ApiResult<Json> made = api_->Create(kube::resources::kSecrets, ns(), secret);
  if (!made.ok()) return made.error().ToStatus().WithContext("the token Secret of " + sa);
  return token;
}

Status TestCluster::FailWorker(const std::string& job, int index) {
  std::string worker = WorkerName(job, index);
  if (Status s = WaitForLivePod(worker); !s.ok()) return s;
  return Finish(control_, worker, 1);
}

}  // namespace dljob::testing
