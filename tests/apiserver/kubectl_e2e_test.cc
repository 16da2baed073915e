// Stock kubectl against dljob-test-apiserver: the test API server must be faithful enough for
// apply, get (server-side printing of the DLJob CRD's columns), -o json, watch and delete.
// Each test starts the server as a child process on port 0 and kills it by PID at the end;
// kubectl gets a private HOME and cache dir under the test's temporary directory.
// Skipped when kubectl is not installed.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/command.h"

namespace dljob::testing {
namespace {

std::string FindKubectl() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/kubectl";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

class KubectlE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kubectl_ = FindKubectl();
    if (kubectl_.empty())
      GTEST_FAIL()
          << "kubectl is not installed: run scripts/setup.sh (Debian package kubernetes-client)";
    dir_ = std::make_unique<TempDir>();
    kubeconfig_ = dir_->path() + "/kubeconfig";
    std::string port_file = dir_->path() + "/port";
    server_ = std::make_unique<Background>(
        std::vector<std::string>{BinDir() + "/dljob-test-apiserver", "--port", "0", "--port-file",
                                 port_file, "--kubeconfig-out", kubeconfig_, "--nodes", "2",
                                 "--gpus-per-node", "8", "--crd",
                                 SourceDir() + "/charts/dljob/crds/dljob.io_dljobs.yaml"},
        std::map<std::string, std::string>{}, dir_->path() + "/server.out",
        dir_->path() + "/server.err");
    ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(port_file); }, 30000))
        << "the server did not start: " << ReadFile(dir_->path() + "/server.err");
  }

  void TearDown() override { StopServer(); }

  // A clean stop (SIGTERM) ends open watches and exits 0; the destructor kills it otherwise.
  void StopServer() {
    if (!server_) return;
    server_->Signal(SIGTERM);
    EXPECT_EQ(server_->Wait(30000), 0) << ReadFile(dir_->path() + "/server.err");
    server_.reset();
  }

  std::vector<std::string> KubectlArgv(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {kubectl_,      "--kubeconfig",          kubeconfig_,
                                     "--cache-dir", dir_->path() + "/cache", "--request-timeout",
                                     "30s"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  std::map<std::string, std::string> Env() const { return {{"HOME", dir_->path()}}; }

  CommandResult Kubectl(const std::vector<std::string>& args) {
    return RunCommand(KubectlArgv(args), Env());
  }

  std::string WriteManifest(const std::string& name, const std::string& yaml) {
    std::string path = dir_->path() + "/" + name;
    std::ofstream(path) << yaml;
    return path;
  }

  std::string kubectl_;
  std::string kubeconfig_;
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Background> server_;
};

TEST_F(KubectlE2eTest, ApplyGetListAndDeleteADLJob) {
  // Not `kubectl create namespace`: that sends protobuf, which the test server does not read.
  CommandResult ns = Kubectl({"apply", "-f",
                              WriteManifest("ns.yaml",
                                            "apiVersion: v1\nkind: Namespace\n"
                                            "metadata:\n  name: team-a\n"),
                              "--validate=false"});
  ASSERT_EQ(ns.exit_code, 0) << ns.err;
  std::string job = SourceDir() + "/examples/resnet-job.yaml";
  CommandResult applied = Kubectl({"apply", "-f", job, "--validate=false"});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  EXPECT_EQ(applied.out, "dljob.dljob.io/resnet50 created\n");
  CommandResult again = Kubectl({"apply", "-f", job, "--validate=false"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "dljob.dljob.io/resnet50 unchanged\n");

  CommandResult table = Kubectl({"get", "dljobs", "-n", "team-a"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  std::string header = table.out.substr(0, table.out.find('\n'));
  for (const char* column : {"NAME", "STATUS", "GPUS", "IMG/S", "RESTARTS", "AGE"}) {
    EXPECT_TRUE(Contains(header, column)) << column << " missing from:\n" << table.out;
  }
  EXPECT_TRUE(Contains(table.out, "resnet50")) << table.out;
  EXPECT_TRUE(Contains(table.out, " 16 ")) << table.out;
  CommandResult short_name = Kubectl({"get", "dlj", "resnet50", "-n", "team-a"});
  EXPECT_EQ(short_name.exit_code, 0) << short_name.err;

  CommandResult json = Kubectl({"get", "dljobs", "-n", "team-a", "-o", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json list = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(list.is_discarded()) << json.out;
  ASSERT_EQ(list["items"].size(), 1u) << json.out;
  const nlohmann::json& item = list["items"][0];
  EXPECT_EQ(item["kind"], "DLJob");
  EXPECT_EQ(item["metadata"]["name"], "resnet50");
  EXPECT_EQ(item["metadata"]["labels"]["team"], "vision");
  EXPECT_EQ(item["spec"]["gpus"], 16);
  EXPECT_FALSE(item["metadata"]["uid"].get<std::string>().empty());

  CommandResult deleted = Kubectl({"delete", "dljob", "resnet50", "-n", "team-a"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_EQ(deleted.out, "dljob.dljob.io \"resnet50\" deleted\n");
  CommandResult empty = Kubectl({"get", "dljobs", "-n", "team-a"});
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_TRUE(Contains(empty.err, "No resources found in team-a namespace.")) << empty.err;
  CommandResult missing = Kubectl({"get", "dljob", "resnet50", "-n", "team-a"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_TRUE(Contains(missing.err, "\"resnet50\" not found")) << missing.err;
}

TEST_F(KubectlE2eTest, GetNodesShowsTheSimulatedGpuNodes) {
  CommandResult nodes = Kubectl({"get", "nodes", "-o", "json"});
  ASSERT_EQ(nodes.exit_code, 0) << nodes.err;
  nlohmann::json list = nlohmann::json::parse(nodes.out, nullptr, false);
  ASSERT_EQ(list["items"].size(), 2u) << nodes.out;
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "gpu-node-0");
  EXPECT_EQ(list["items"][0]["status"]["allocatable"]["nvidia.com/gpu"], "8");
  CommandResult table = Kubectl({"get", "nodes"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_TRUE(Contains(table.out, "gpu-node-1")) << table.out;
  EXPECT_TRUE(Contains(table.out, "Ready")) << table.out;
}

TEST_F(KubectlE2eTest, WatchPrintsPodsCreatedAfterItStarted) {
  const char* kPod = R"(apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  containers:
    - name: main
      image: busybox
)";
  auto pod = [&](const std::string& name) {
    char text[512];
    std::snprintf(text, sizeof text, kPod, name.c_str());
    return WriteManifest(name + ".yaml", text);
  };
  ASSERT_EQ(Kubectl({"apply", "-f", pod("first"), "--validate=false"}).exit_code, 0);
  std::string out = dir_->path() + "/watch.out", err = dir_->path() + "/watch.err";
  Background watch(KubectlArgv({"get", "pods", "-w"}), Env(), out, err);
  // The watch lists first; once it printed "first", "second" can only reach it as an event.
  ASSERT_TRUE(WaitFor([&] { return Contains(ReadFile(out), "first"); }, 30000))
      << ReadFile(out) << ReadFile(err);
  CommandResult created = Kubectl({"apply", "-f", pod("second"), "--validate=false"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  ASSERT_TRUE(WaitFor([&] { return Contains(ReadFile(out), "second"); }, 30000))
      << ReadFile(out) << ReadFile(err);
  EXPECT_TRUE(Contains(ReadFile(out), "Pending")) << ReadFile(out);
  StopServer();  // with the watch still open: it must still stop cleanly
  watch.Signal(SIGKILL);
  watch.Wait(30000);
}

}  // namespace
}  // namespace dljob::testing
