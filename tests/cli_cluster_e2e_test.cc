// `dljob` against a cluster: the built dljob program driven as a user would, against the test API
// server (dljob-test-apiserver) started as a child process on port 0 and stopped by PID. No
// operator runs, so the test plays its part where needed (a launcher pod with a log, a status
// with throughput) through the API and the server's /_test control API.
// Skipped when dljob-test-apiserver is not built.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kube/config.h"
#include "kube/http_api.h"
#include "testing/command.h"

namespace dljob::testing {
namespace {

using nlohmann::json;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

class CliClusterE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_bin_ = BinDir() + "/dljob-test-apiserver";
    if (::access(server_bin_.c_str(), X_OK) != 0) {
      GTEST_FAIL() << "dljob-test-apiserver is not built (" << server_bin_
                   << "): run scripts/build.sh";
    }
    dir_ = std::make_unique<TempDir>();
    kubeconfig_ = dir_->path() + "/kubeconfig";
    std::string port_file = dir_->path() + "/port";
    server_ = std::make_unique<Background>(
        std::vector<std::string>{server_bin_, "--port", "0", "--port-file", port_file,
                                 "--kubeconfig-out", kubeconfig_, "--nodes", "2", "--gpus-per-node",
                                 "8", "--crd",
                                 SourceDir() + "/charts/dljob/crds/dljob.io_dljobs.yaml"},
        std::map<std::string, std::string>{}, dir_->path() + "/server.out",
        dir_->path() + "/server.err");
    ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(port_file); }, 30000))
        << "the server did not start: " << ReadFile(dir_->path() + "/server.err");
    Result<kube::Config> config = kube::LoadKubeconfig(kubeconfig_);
    ASSERT_TRUE(config.ok()) << config.status().message();
    Result<std::unique_ptr<kube::Api>> api = kube::MakeApi(*config);
    ASSERT_TRUE(api.ok()) << api.status().message();
    api_ = std::move(api).value();
    Result<http::ClientPtr> client = kube::MakeHttpClient(*config);
    ASSERT_TRUE(client.ok()) << client.status().message();
    control_ = std::move(client).value();
  }

  void TearDown() override {
    api_.reset();
    control_.reset();
    if (!server_) return;
    server_->Signal(SIGTERM);
    EXPECT_EQ(server_->Wait(30000), 0) << ReadFile(dir_->path() + "/server.err");
    server_.reset();  // a server that did not stop is killed by PID here
    dir_.reset();     // removes the kubeconfig and the logs
  }

  // dljob with a private HOME (no ~/.kube/config) and state directory, and no $KUBECONFIG: the
  // cluster is whatever the arguments say.
  CommandResult Dljob(const std::vector<std::string>& args,
                      std::map<std::string, std::string> env = {}) {
    std::vector<std::string> argv = {BinDir() + "/dljob"};
    argv.insert(argv.end(), args.begin(), args.end());
    env.emplace("HOME", dir_->path());
    env.emplace("XDG_STATE_HOME", dir_->path() + "/state");
    env.emplace("KUBECONFIG", "");
    env.emplace("KUBERNETES_SERVICE_HOST", "");
    return RunCommand(argv, env);
  }

  // POSTs to the server's /_test control API; returns the HTTP status.
  int Control(const std::string& path, const std::string& body) {
    http::ClientRequest request;
    request.method = "POST";
    request.target = path;
    request.headers = {{"Content-Type", "application/json"}};
    request.body = body;
    http::ClientResult<http::ClientResponse> answer = control_->Send(request);
    return answer.ok() ? answer->status : 0;
  }

  // What the operator would do once the job's workers are ready: the launcher pod, running,
  // with mpirun's tagged output.
  void StartLauncher(const std::string& job, const std::string& log, const std::string& phase) {
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata",
                 {{"name", job + "-launcher"},
                  {"namespace", "default"},
                  {"labels", {{"dljob.io/job-name", job}, {"dljob.io/role", "launcher"}}}}},
                {"spec", {{"containers", json::array({{{"name", "launcher"}, {"image", "t"}}})}}}};
    auto created = api_->Create(kube::resources::kPods, "default", pod);
    ASSERT_TRUE(created.ok()) << created.error().ToString();
    std::string base = "/_test/pods/default/" + job + "-launcher";
    ASSERT_EQ(Control(base + "/status", json{{"phase", phase}}.dump()), 200);
    ASSERT_EQ(Control(base + "/log", log), 200);
  }

  void SetStatus(const std::string& job, const json& status) {
    auto patched =
        api_->MergePatch(kube::resources::kDLJobs, "default", job, {{"status", status}}, "status");
    ASSERT_TRUE(patched.ok()) << patched.error().ToString();
  }

  std::string server_bin_;
  std::string kubeconfig_;
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Background> server_;
  std::unique_ptr<kube::Api> api_;
  http::ClientPtr control_;
};

TEST_F(CliClusterE2eTest, SubmitListGetAndDeleteAJobBuiltFromFlags) {
  CommandResult submitted =
      Dljob({"submit", "--kubeconfig", kubeconfig_, "--name", "resnet", "--gpus", "16", "--image",
             "registry.example.com/trainer:cuda", "--data", "oss://bucket/imagenet:/data", "--",
             "dljob-train", "--model=resnet50"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  EXPECT_EQ(submitted.out, "dljob \"resnet\" created in namespace \"default\"\n");
  EXPECT_TRUE(Contains(submitted.err, "dljob logs -f resnet")) << submitted.err;

  // The object is in the cluster as the API server stores it.
  auto stored = api_->Get(kube::resources::kDLJobs, "default", "resnet");
  ASSERT_TRUE(stored.ok()) << stored.error().ToString();
  EXPECT_EQ((*stored)["spec"]["gpus"], 16);
  EXPECT_EQ((*stored)["spec"]["command"], json::array({"dljob-train", "--model=resnet50"}));
  EXPECT_EQ((*stored)["spec"]["data"][0]["source"], "oss://bucket/imagenet");
  EXPECT_EQ((*stored)["spec"]["data"][0]["mountPath"], "/data");

  CommandResult again = Dljob({"submit", "--kubeconfig", kubeconfig_, "--name", "resnet", "--gpus",
                               "8", "--image", "i", "--", "true"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_TRUE(Contains(again.err, "already exists in namespace \"default\"")) << again.err;
  EXPECT_TRUE(Contains(again.err, "dljob delete resnet")) << again.err;

  CommandResult list = Dljob({"list", "--kubeconfig", kubeconfig_});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out.substr(0, list.out.find('\n')),
            "NAME     STATUS    GPUS   IMG/SEC   DURATION   AGE");
  EXPECT_EQ(list.out.rfind("resnet   ", list.out.find('\n') + 1), list.out.find('\n') + 1)
      << list.out;
  EXPECT_TRUE(Contains(list.out, "   16   ")) << list.out;

  CommandResult all = Dljob({"list", "--kubeconfig", kubeconfig_, "-A"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_TRUE(Contains(all.out, "NAMESPACE   NAME")) << all.out;
  EXPECT_TRUE(Contains(all.out, "default     resnet")) << all.out;

  CommandResult get = Dljob({"get", "resnet", "--kubeconfig", kubeconfig_, "-o", "json"});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  json job = json::parse(get.out, nullptr, false);
  ASSERT_FALSE(job.is_discarded()) << get.out;
  EXPECT_EQ(job["kind"], "DLJob");
  EXPECT_EQ(job["metadata"]["namespace"], "default");
  EXPECT_EQ(job["metadata"]["uid"], (*stored)["metadata"]["uid"]);
  EXPECT_EQ(job["spec"]["image"], "registry.example.com/trainer:cuda");
  EXPECT_EQ(job["spec"]["gpusPerWorker"], 8);

  CommandResult deleted = Dljob({"delete", "resnet", "--kubeconfig", kubeconfig_});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_EQ(deleted.out, "dljob \"resnet\" deleted\n");
  EXPECT_FALSE(api_->Get(kube::resources::kDLJobs, "default", "resnet").ok());

  CommandResult gone = Dljob({"get", "resnet", "--kubeconfig", kubeconfig_});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_TRUE(Contains(gone.err, "no DLJob \"resnet\" in namespace \"default\"")) << gone.err;
  CommandResult ignored =
      Dljob({"delete", "resnet", "--ignore-not-found", "--kubeconfig", kubeconfig_});
  EXPECT_EQ(ignored.exit_code, 0) << ignored.err;
  CommandResult empty = Dljob({"list", "--kubeconfig", kubeconfig_});
  EXPECT_EQ(empty.exit_code, 0);
  EXPECT_EQ(empty.err, "No DLJobs found in namespace \"default\".\n");
}

TEST_F(CliClusterE2eTest, KubeconfigFromTheEnvironmentAndAFileJob) {
  std::map<std::string, std::string> env = {{"KUBECONFIG", kubeconfig_}};
  CommandResult submitted =
      Dljob({"submit", "-f", SourceDir() + "/examples/mnist-job.yaml", "--name", "mnist"}, env);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  CommandResult list = Dljob({"list", "-o", "json"}, env);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  json jobs = json::parse(list.out, nullptr, false);
  ASSERT_EQ(jobs["items"].size(), 1u) << list.out;
  EXPECT_EQ(jobs["items"][0]["metadata"]["name"], "mnist");
  // --local still means this machine, where nothing ran.
  CommandResult local = Dljob({"list", "--local"}, env);
  EXPECT_EQ(local.exit_code, 0) << local.err;
  EXPECT_TRUE(Contains(local.err, "No jobs found.")) << local.err;
}

TEST_F(CliClusterE2eTest, LogsReadTheLauncherInTheJobLogFormat) {
  ASSERT_EQ(Dljob({"submit", "--kubeconfig", kubeconfig_, "--name", "resnet", "--gpus", "2",
                   "--image", "i", "--", "dljob-train"})
                .exit_code,
            0);
  CommandResult early = Dljob({"logs", "resnet", "--kubeconfig", kubeconfig_});
  EXPECT_EQ(early.exit_code, 1);
  EXPECT_TRUE(Contains(early.err, "has no running launcher yet")) << early.err;

  StartLauncher("resnet",
                "[1,0]<stdout>:Step 1 loss 2.5\n[1,1]<stdout>:Step 1 loss 2.6\n"
                "Primary job terminated normally\n",
                "Succeeded");
  CommandResult logs = Dljob({"logs", "resnet", "--kubeconfig", kubeconfig_});
  ASSERT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out,
            "[rank 0] Step 1 loss 2.5\n[rank 1] Step 1 loss 2.6\n"
            "[mpirun] Primary job terminated normally\n");
  CommandResult rank = Dljob({"logs", "resnet", "--rank", "1", "--kubeconfig", kubeconfig_});
  ASSERT_EQ(rank.exit_code, 0) << rank.err;
  EXPECT_EQ(rank.out, "Step 1 loss 2.6\n");

  // Following a finished job prints its launcher's log and ends.
  SetStatus("resnet", {{"phase", "Succeeded"}});
  CommandResult followed = Dljob({"logs", "-f", "resnet", "--kubeconfig", kubeconfig_});
  ASSERT_EQ(followed.exit_code, 0) << followed.err;
  EXPECT_EQ(followed.out, logs.out);
}

TEST_F(CliClusterE2eTest, TopShowsUnfinishedJobsWithTheirThroughput) {
  for (const char* name : {"fast", "done"}) {
    ASSERT_EQ(Dljob({"submit", "--kubeconfig", kubeconfig_, "--name", name, "--gpus", "16",
                     "--image", "i", "--", "dljob-train"})
                  .exit_code,
              0);
  }
  SetStatus("fast", {{"phase", "Running"},
                     {"workers", {{"desired", 2}, {"ready", 2}, {"failed", 0}}},
                     {"throughput", {{"imagesPerSec", 9843.1}, {"step", 3100}}}});
  SetStatus("done", {{"phase", "Succeeded"}});
  CommandResult top = Dljob({"top", "--kubeconfig", kubeconfig_});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_TRUE(Contains(top.out, "fast   Running   16     2/2       9843.1    615.2         3100"))
      << top.out;
  EXPECT_FALSE(Contains(top.out, "done")) << top.out;
  EXPECT_TRUE(Contains(top.out, "1 job, 16 GPUs, 9843.1 images/sec")) << top.out;
  CommandResult all = Dljob({"top", "--all", "--kubeconfig", kubeconfig_});
  EXPECT_TRUE(Contains(all.out, "done")) << all.out;
}

// Without a cluster: submit says what to do; the readers keep reading this machine's jobs.
TEST(CliWithoutCluster, SubmitSaysWhatToDoAndListStaysLocal) {
  TempDir dir;
  std::map<std::string, std::string> env = {{"HOME", dir.path()},
                                            {"XDG_STATE_HOME", dir.path() + "/state"},
                                            {"KUBECONFIG", ""},
                                            {"KUBERNETES_SERVICE_HOST", ""}};
  CommandResult submit = RunCommand(
      {BinDir() + "/dljob", "submit", "--name", "x", "--gpus", "1", "--image", "i", "--", "true"},
      env);
  EXPECT_EQ(submit.exit_code, 1);
  EXPECT_TRUE(
      Contains(submit.err, "error: no cluster configured: pass --kubeconfig or use --local"))
      << submit.err;
  CommandResult list = RunCommand({BinDir() + "/dljob", "list"}, env);
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_TRUE(Contains(list.err, "No jobs found. Run one with: dljob submit --local")) << list.err;
  CommandResult ns = RunCommand({BinDir() + "/dljob", "list", "-n", "team-a"}, env);
  EXPECT_EQ(ns.exit_code, 1);
  EXPECT_TRUE(Contains(ns.err, "no cluster configured for --namespace")) << ns.err;
}

}  // namespace
}  // namespace dljob::testing
