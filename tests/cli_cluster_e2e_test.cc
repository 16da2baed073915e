// `dljob` against a cluster: the built dljob program driven as a user would, against the test API
// server (dljob-test-apiserver) started as a child process on port 0 and stopped by PID. No
// operator runs, so the test plays its part where needed (a launcher pod with a log, a status
// with throughput) through the API and the server's /_test control API.
// Skipped when dljob-test-apiserver is not built.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jobs/generated_name.h"
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
                   << "): run scripts/dev/build.sh";
    }
    dir_ = std::make_unique<TempDir>();
    kubeconfig_ = dir_->path() + "/kubeconfig";
    std::string port_file = dir_->path() + "/port";
    server_ = std::make_unique<Background>(
        std::vector<std::string>{server_bin_, "--port", "0", "--port-file", port_file,
                                 "--kubeconfig-out", kubeconfig_, "--nodes", "2", "--gpus-per-node",
                                 "8", "--crd",
                                 SourceDir() + "/charts/dljob/crds/dljob.io_dljobs.yaml", "--crd",
                                 SourceDir() + "/charts/dljob/crds/dljob.io_dlqueues.yaml"},
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

  // The namespace `ns`, which the server wants to exist before anything is created in it.
  void CreateNamespace(const std::string& ns) {
    static const kube::Resource kNamespaces{"", "v1", "namespaces", false, "Namespace"};
    json object = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
    auto created = api_->Create(kNamespaces, "", object);
    ASSERT_TRUE(created.ok()) << created.error().ToString();
  }

  // A pod bound to `node` in `ns` taking `gpus` (as a request, or as a limit only), left in
  // `phase` (the test server runs no kubelet: a bound pod stays Pending unless told).
  void BindPod(const std::string& ns, const std::string& name, const std::string& node, int gpus,
               bool as_limit = false, const std::string& phase = "Running") {
    json resources = {{"requests", {{"cpu", "2"}, {"memory", "8Gi"}}}};
    if (as_limit) {
      resources["limits"] = {{"nvidia.com/gpu", std::to_string(gpus)}};
    } else {
      resources["requests"]["nvidia.com/gpu"] = std::to_string(gpus);
    }
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"namespace", ns}}},
                {"spec",
                 {{"nodeName", node},
                  {"containers",
                   json::array({{{"name", "c"}, {"image", "t"}, {"resources", resources}}})}}}};
    auto created = api_->Create(kube::resources::kPods, ns, pod);
    ASSERT_TRUE(created.ok()) << created.error().ToString();
    ASSERT_EQ(Control("/_test/pods/" + ns + "/" + name + "/status", json{{"phase", phase}}.dump()),
              200);
  }

  // A DLQueue with `quotas`, and a status when it is not null.
  void CreateQueue(const std::string& name, const json& quotas, const json& status = nullptr) {
    json queue = {{"apiVersion", "dljob.io/v1alpha1"},
                  {"kind", "DLQueue"},
                  {"metadata", {{"name", name}}},
                  {"spec", {{"quotas", quotas}}}};
    auto created = api_->Create(kube::resources::kDLQueues, "", queue);
    ASSERT_TRUE(created.ok()) << created.error().ToString();
    if (status.is_null()) return;
    auto patched =
        api_->MergePatch(kube::resources::kDLQueues, "", name, {{"status", status}}, "status");
    ASSERT_TRUE(patched.ok()) << patched.error().ToString();
  }

  // A DLJob in `ns` as the operator would leave it: in `queue` (none: the default), with the
  // phase and, when waiting, a Queued condition saying why.
  void CreateJob(const std::string& ns, const std::string& name, int gpus, const json& queue,
                 int priority, const std::string& phase, const std::string& why = "") {
    json scheduling = {{"priority", priority}};
    if (!queue.is_null()) scheduling["queue"] = queue;
    json job = {{"apiVersion", "dljob.io/v1alpha1"},
                {"kind", "DLJob"},
                {"metadata", {{"name", name}, {"namespace", ns}}},
                {"spec",
                 {{"image", "t"},
                  {"command", json::array({"true"})},
                  {"gpus", gpus},
                  {"scheduling", scheduling}}}};
    auto created = api_->Create(kube::resources::kDLJobs, ns, job);
    ASSERT_TRUE(created.ok()) << created.error().ToString();
    json status = {{"phase", phase}};
    if (!why.empty()) {
      status["conditions"] = json::array({{{"type", "Queued"},
                                           {"status", "True"},
                                           {"reason", "Unschedulable"},
                                           {"message", why},
                                           {"lastTransitionTime", "2026-11-22T05:00:00Z"}}});
    }
    auto patched =
        api_->MergePatch(kube::resources::kDLJobs, ns, name, {{"status", status}}, "status");
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
            "NAME     STATUS    GPUS   IMG/SEC   DURATION   ESTIMATED START   AGE");
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

// "<prefix>" and kGeneratedSuffixLength characters of the API server's alphabet.
bool IsGeneratedFrom(const std::string& name, const std::string& prefix) {
  return name.size() == prefix.size() + kGeneratedSuffixLength && name.rfind(prefix, 0) == 0 &&
         name.find_first_not_of(kGeneratedNameAlphabet, prefix.size()) == std::string::npos;
}

TEST_F(CliClusterE2eTest, AJobWithoutANameIsNamedByTheApiServerAfterItsModel) {
  CommandResult submitted = Dljob({"submit", "--kubeconfig", kubeconfig_, "--gpus", "16", "--image",
                                   "registry.example.com:5000/dljob/trainer:cuda", "--",
                                   "dljob-train", "--model=resnet50"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const std::string prefix = "dljob \"";
  ASSERT_EQ(submitted.out.rfind(prefix, 0), 0u) << submitted.out;
  const std::string name =
      submitted.out.substr(prefix.size(), submitted.out.find('"', prefix.size()) - prefix.size());
  EXPECT_TRUE(IsGeneratedFrom(name, "resnet50-")) << name;
  EXPECT_EQ(submitted.out, "dljob \"" + name + "\" created in namespace \"default\"\n");
  for (const std::string& next : {"dljob logs -f " + name, "dljob get " + name}) {
    EXPECT_TRUE(Contains(submitted.err, next)) << submitted.err;
  }
  auto stored = api_->Get(kube::resources::kDLJobs, "default", name);
  ASSERT_TRUE(stored.ok()) << stored.error().ToString();
  EXPECT_EQ((*stored)["metadata"]["generateName"], "resnet50-");
  CommandResult get = Dljob({"get", name, "--kubeconfig", kubeconfig_});
  EXPECT_EQ(get.exit_code, 0) << get.err;

  // Again: another name from the same prefix. With -o json the document is all of stdout.
  CommandResult json_out = Dljob({"submit", "--kubeconfig", kubeconfig_, "-o", "json", "--gpus",
                                  "8", "--image", "i", "--", "dljob-train", "--model", "resnet50"});
  ASSERT_EQ(json_out.exit_code, 0) << json_out.err;
  json document = json::parse(json_out.out, nullptr, false);
  ASSERT_FALSE(document.is_discarded()) << json_out.out;
  const std::string second = document["metadata"]["name"];
  EXPECT_TRUE(IsGeneratedFrom(second, "resnet50-")) << second;
  EXPECT_NE(second, name);
  EXPECT_EQ(document["metadata"]["generateName"], "resnet50-");
  EXPECT_FALSE(document["metadata"]["uid"].get<std::string>().empty()) << "the created object";
  EXPECT_TRUE(Contains(json_out.err, "dljob logs -f " + second)) << json_out.err;
  CommandResult yaml_out =
      Dljob({"submit", "--kubeconfig", kubeconfig_, "-o", "yaml", "--gpus", "8", "--image",
             "registry.example.com/team/my_trainer:v2", "--", "python", "train.py"});
  ASSERT_EQ(yaml_out.exit_code, 0) << yaml_out.err;
  EXPECT_TRUE(Contains(yaml_out.out, "\n  name: my-trainer-")) << yaml_out.out;
  EXPECT_TRUE(Contains(yaml_out.out, "\n  generateName: my-trainer-\n")) << yaml_out.out;

  // A file's generateName is honoured; a file's name, and --name, still win.
  TempDir files;
  const std::string file = files.path() + "/job.yaml";
  std::ofstream(file) << "apiVersion: dljob.io/v1alpha1\nkind: DLJob\nmetadata:\n"
                         "  generateName: nightly-\nspec:\n  image: i\n  gpus: 8\n"
                         "  command: [dljob-train, --model=vgg16]\n";
  CommandResult from_file = Dljob({"submit", "--kubeconfig", kubeconfig_, "-f", file});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_TRUE(Contains(from_file.out, "dljob \"nightly-")) << from_file.out;
  CommandResult named = Dljob({"submit", "--kubeconfig", kubeconfig_, "-f", file, "--name", "n1"});
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_EQ(named.out, "dljob \"n1\" created in namespace \"default\"\n");

  CommandResult list = Dljob({"list", "--kubeconfig", kubeconfig_, "-o", "json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(json::parse(list.out)["items"].size(), 5u) << list.out;
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

// The server's two A100 nodes (gpu-node-0, gpu-node-1) plus an H100 node and a node without GPUs;
// pods from several namespaces bound to them, finished ones among them; one node cordoned and
// one tainted for dljob.
TEST_F(CliClusterE2eTest, TopNodesShowsGpusPerNodeAndASummary) {
  for (const auto& [name, labels, gpus] : {std::tuple<std::string, json, std::string>{
                                               "h100-0",
                                               {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
                                                {"nvidia.com/gpu.clique", "nvl-1"},
                                                {"topology.kubernetes.io/zone", "zone-b"},
                                                {"dljob.io/rack", "rack-7"}},
                                               "8"},
                                           {"cpu-0", json::object(), "0"}}) {
    json node = {{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata", {{"name", name}, {"labels", labels}}},
                 {"spec", json::object()}};
    ASSERT_TRUE(api_->Create(kube::resources::kNodes, "", node).ok());
    json status = {
        {"allocatable",
         {{"nvidia.com/gpu", gpus}, {"cpu", "64"}, {"memory", "512Gi"}, {"pods", "110"}}},
        {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}};
    auto patched =
        api_->MergePatch(kube::resources::kNodes, "", name, {{"status", status}}, "status");
    ASSERT_TRUE(patched.ok()) << patched.error().ToString();
  }
  ASSERT_TRUE(api_->MergePatch(kube::resources::kNodes, "", "gpu-node-1",
                               {{"spec", {{"unschedulable", true}}}})
                  .ok());
  ASSERT_TRUE(api_->MergePatch(kube::resources::kNodes, "", "gpu-node-0",
                               {{"spec",
                                 {{"taints", json::array({{{"key", "nvidia.com/gpu"},
                                                           {"value", "present"},
                                                           {"effect", "NoSchedule"}}})}}}})
                  .ok());
  CreateNamespace("team-b");
  BindPod("default", "w-0", "gpu-node-0", 4);
  BindPod("team-b", "w-1", "gpu-node-0", 2, /*as_limit=*/true, "Pending");
  BindPod("team-b", "done", "gpu-node-0", 2, false, "Succeeded");  // holds nothing any more
  BindPod("team-b", "failed", "h100-0", 8, false, "Failed");
  BindPod("default", "h-0", "h100-0", 3);
  BindPod("default", "g-1", "gpu-node-1", 8);

  CommandResult top = Dljob({"top", "nodes", "--kubeconfig", kubeconfig_});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_EQ(
      top.out,
      "NAME         GPUS   ALLOCATED   FREE   PRODUCT                 CLIQUE   SCHEDULABLE\n"
      "cpu-0        0      0           0      -                       -        yes\n"
      "gpu-node-0   8      6           2      NVIDIA-A100-SXM4-80GB   -        yes (tainted)\n"
      "gpu-node-1   8      8           0      NVIDIA-A100-SXM4-80GB   -        cordoned\n"
      "h100-0       8      3           5      NVIDIA-H100-80GB-HBM3   nvl-1    yes\n"
      "\n"
      "PRODUCT                 NODES   GPUS   ALLOCATED   FREE   LARGEST FREE\n"
      "NVIDIA-A100-SXM4-80GB   2       16     14          2      2 (gpu-node-0)\n"
      "NVIDIA-H100-80GB-HBM3   1       8      3           5      5 (h100-0)\n"
      "total                   4       24     17          7      5 (h100-0)\n");

  CommandResult wide = Dljob({"top", "nodes", "--kubeconfig", kubeconfig_, "-o", "wide"});
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_TRUE(Contains(wide.out, "ZONE     RACK     TAINTS")) << wide.out;
  EXPECT_TRUE(Contains(wide.out, "nvidia.com/gpu=present:NoSchedule")) << wide.out;
  std::string h100 = wide.out.substr(wide.out.find("\nh100-0 ") + 1);
  h100 = h100.substr(0, h100.find('\n'));
  EXPECT_TRUE(Contains(h100, "   2/64   ")) << wide.out;
  EXPECT_TRUE(Contains(h100, "   8Gi/512Gi   ")) << wide.out;
  EXPECT_TRUE(Contains(h100, "   1/110   ")) << wide.out;
  EXPECT_TRUE(Contains(h100, "   zone-b   rack-7   -")) << wide.out;

  CommandResult j = Dljob({"top", "nodes", "--kubeconfig", kubeconfig_, "-o", "json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  json report = json::parse(j.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << j.out;
  ASSERT_EQ(report["nodes"].size(), 4u);
  EXPECT_EQ(report["nodes"][1]["gpus"], (json{{"allocatable", 8}, {"allocated", 6}, {"free", 2}}));
  EXPECT_EQ(report["nodes"][2]["cordoned"], true);
  EXPECT_EQ(report["summary"]["allocated"], 17);
  EXPECT_EQ(report["summary"]["unavailableFree"], 0);
  CommandResult y = Dljob({"top", "nodes", "--kubeconfig", kubeconfig_, "-o", "yaml"});
  ASSERT_EQ(y.exit_code, 0) << y.err;
  EXPECT_TRUE(Contains(y.out, "largestFreeNode: h100-0")) << y.out;

  // `dljob top` alone still means jobs.
  CommandResult jobs = Dljob({"top", "--kubeconfig", kubeconfig_});
  EXPECT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_TRUE(Contains(jobs.err, "No unfinished jobs")) << jobs.err;
}

TEST_F(CliClusterE2eTest, TopNodesAndQueueNeedACluster) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"top", "nodes"}, {"queue", "list"}, {"queue", "get", "default"}}) {
    CommandResult r = Dljob(args);
    EXPECT_EQ(r.exit_code, 1) << args[1];
    EXPECT_TRUE(Contains(r.err, "reads a Kubernetes cluster, and none is configured")) << r.err;
    EXPECT_TRUE(Contains(r.err, "hint: pass --kubeconfig FILE")) << r.err;
    EXPECT_EQ(r.out, "");
  }
  CommandResult local = Dljob({"top", "nodes", "--local"});
  EXPECT_EQ(local.exit_code, 2);
  EXPECT_TRUE(Contains(local.err, "--local")) << local.err;
}

TEST_F(CliClusterE2eTest, QueueListAndGetShowQuotaUseAndWhyJobsWait) {
  CreateQueue("default", json::array({{{"nominal", 16}, {"borrowingLimit", 16}}}));
  CreateQueue("team-a",
              json::array({{{"gpuProduct", "NVIDIA-A100-SXM4-80GB"}, {"nominal", 32}},
                           {{"nominal", 8}, {"borrowingLimit", 4}}}),
              {{"used", json::array({{{"gpuProduct", "NVIDIA-A100-SXM4-80GB"}, {"gpus", 40}}})},
               {"borrowed", json::array({{{"gpuProduct", "NVIDIA-A100-SXM4-80GB"}, {"gpus", 8}}})},
               {"pendingJobs", 2},
               {"runningJobs", 1}});
  CreateNamespace("ml");
  CreateNamespace("vision");
  CreateJob("ml", "small", 8, "team-a", 0, "Running");
  CreateJob("ml", "big", 16, "team-a", 0, "Queued",
            "needs 16 GPUs (NVIDIA-A100-SXM4-80GB) in queue team-a; quota 32, used 40");
  CreateJob("vision", "urgent", 8, "team-a", 5, "Queued", "needs 8 GPUs; 2 free, largest node 2");
  CreateJob("ml", "finished", 8, "team-a", 0, "Succeeded");
  CreateJob("ml", "elsewhere", 8, nullptr, 0, "Running");  // the default queue

  CommandResult list = Dljob({"queue", "list", "--kubeconfig", kubeconfig_});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out,
            "NAME      GPU PRODUCT             NOMINAL   BORROWING LIMIT   USED   BORROWED   "
            "PENDING   RUNNING\n"
            "default   (any)                   16        16                -      -          "
            "-         -\n"
            "team-a    NVIDIA-A100-SXM4-80GB   32        unlimited         40     8          "
            "2         1\n"
            "team-a    (any)                   8         4                 0      0          "
            "2         1\n");

  CommandResult get = Dljob({"queue", "get", "team-a", "--kubeconfig", kubeconfig_});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  std::string jobs = get.out.substr(get.out.find("NAMESPACE"));
  EXPECT_EQ(
      jobs,
      "NAMESPACE   NAME     PHASE     GPUS   PRIORITY   ESTIMATED START   REASON\n"
      "ml          small    Running   8      0          -                 -\n"
      "vision      urgent   Queued    8      5          unknown           needs 8 GPUs; 2 free, "
      "largest node 2\n"
      "ml          big      Queued    16     0          unknown           needs 16 GPUs "
      "(NVIDIA-A100-SXM4-80GB) in queue team-a; quota 32, used 40\n");
  EXPECT_TRUE(Contains(get.out, "Pending:   2\nRunning:   1\n")) << get.out;
  CommandResult all = Dljob({"queue", "get", "team-a", "--all", "--kubeconfig", kubeconfig_});
  EXPECT_TRUE(Contains(all.out, "ml          finished   Succeeded")) << all.out;
  CommandResult def = Dljob({"queue", "get", "default", "--kubeconfig", kubeconfig_});
  EXPECT_TRUE(Contains(def.out, "ml          elsewhere   Running")) << def.out;

  // json and yaml print the API object, as kubectl does.
  CommandResult j = Dljob({"queue", "get", "team-a", "-o", "json", "--kubeconfig", kubeconfig_});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  json queue = json::parse(j.out, nullptr, false);
  auto stored = api_->Get(kube::resources::kDLQueues, "", "team-a");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(queue["kind"], "DLQueue");
  EXPECT_EQ(queue["spec"], (*stored)["spec"]);
  EXPECT_EQ(queue["status"], (*stored)["status"]);
  EXPECT_EQ(queue["metadata"]["uid"], (*stored)["metadata"]["uid"]);
  CommandResult ly = Dljob({"queue", "list", "-o", "yaml", "--kubeconfig", kubeconfig_});
  ASSERT_EQ(ly.exit_code, 0) << ly.err;
  EXPECT_TRUE(Contains(ly.out, "kind: DLQueueList")) << ly.out;

  CommandResult missing = Dljob({"queue", "get", "team-z", "--kubeconfig", kubeconfig_});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err,
            "error: no DLQueue \"team-z\"; the queues are: default and team-a\n"
            "hint: list them with: dljob queue list\n");
}

TEST_F(CliClusterE2eTest, HelpListsTheClusterViews) {
  CommandResult help = Dljob({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(Contains(help.out, "top nodes")) << help.out;
  EXPECT_TRUE(Contains(help.out, "queue")) << help.out;
  CommandResult queue = Dljob({"queue", "--help"});
  EXPECT_EQ(queue.exit_code, 0);
  EXPECT_TRUE(Contains(queue.out, "list")) << queue.out;
  EXPECT_TRUE(Contains(queue.out, "get")) << queue.out;
  CommandResult top = Dljob({"top", "--help"});
  EXPECT_TRUE(Contains(top.out, "nodes")) << top.out;
  CommandResult none = Dljob({"queue"});
  EXPECT_EQ(none.exit_code, 2);
}

}  // namespace
}  // namespace dljob::testing
