#include "tests/operator/test_cluster.h"

#include <signal.h>

#include <algorithm>
#include <filesystem>

#include "kube/config.h"
#include "kube/http_api.h"

namespace dljob::testing {
namespace {

// A port file holds "<port>\n"; until the newline is there the writer may not be done.
int ReadPortFile(const std::string& path) {
  std::string text = ReadFile(path);
  if (text.empty() || text.back() != '\n') return -1;
  try {
    return std::stoi(text);
  } catch (const std::exception&) {
    return -1;
  }
}

bool Names(const std::vector<std::string>& args, const std::string& flag) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& a) {
    return a == flag || a.rfind(flag + "=", 0) == 0;
  });
}

}  // namespace

OperatorProcess::OperatorProcess(const std::vector<std::string>& argv, std::string out_path,
                                 std::string err_path, std::string port_file)
    : process_(argv, {}, out_path, err_path),
      out_path_(std::move(out_path)),
      err_path_(std::move(err_path)),
      port_file_(std::move(port_file)) {}

int OperatorProcess::MetricsPort(int timeout_ms) {
  int port = -1;
  WaitFor([&] { return (port = ReadPortFile(port_file_)) > 0; }, timeout_ms);
  return port;
}

std::string OperatorProcess::Log() const { return ReadFile(err_path_) + ReadFile(out_path_); }

Result<std::unique_ptr<TestCluster>> TestCluster::Start(const ClusterOptions& options) {
  std::unique_ptr<TestCluster> c(new TestCluster());
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
  std::string port_file = dir() + "/" + id + ".port";
  std::filesystem::create_directories(log_archive_dir());
  std::vector<std::string> argv = {BinDir() + "/dljob-operator"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto add = [&](const std::string& flag, const std::string& value) {
    if (!Names(args, flag)) argv.push_back(flag + "=" + value);
  };
  add("--kubeconfig", kubeconfig_);
  add("--metrics-port", "0");
  add("--port-file", port_file);
  add("--log-archive-dir", log_archive_dir());
  add("--lease-namespace", "default");
  add("--leader-elect", "false");
  add("--identity", id);
  add("--workers", "4");
  return std::make_unique<OperatorProcess>(argv, dir() + "/" + id + ".out",
                                           dir() + "/" + id + ".err", port_file);
}

}  // namespace dljob::testing
