// Stock kubectl against dljob-test-apiserver: the test API server must be faithful enough for
// apply, get (server-side printing of the DLJob CRD's columns), -o json, watch and delete, all
// with kubectl's default validation (OpenAPI v3 + fieldValidation=Strict, no --validate=false),
// `kubectl create namespace` (a protobuf body), the real server's refusals of unknown fields,
// schema violations and invalid names, server-side apply (managedFields, conflicts between field
// managers, --force-conflicts, the move from client-side apply), and /openapi/v2 as kubectl's
// protobuf reader reads it (what kubectl 1.27's default validation downloads), and a validating
// admission webhook (a TLS server in the test, reached as its Service through /_test/services)
// whose refusal and warnings kubectl prints as it prints a real server's.
// Each test starts the server as a child process on port 0 and kills it by PID at the end;
// kubectl gets a private HOME and cache dir under the test's temporary directory.
// Fails when kubectl is not installed.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "http/testing/loopback_http_server.h"
#include "http/testing/test_pki.h"
#include "testing/command.h"

namespace dljob::testing {
namespace {

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

class KubectlE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kubectl_ = FindOnPath("kubectl");
    if (kubectl_.empty())
      GTEST_FAIL() << "kubectl is not installed: run scripts/dev/setup.sh (Debian package "
                      "kubernetes-client)";
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

  // An object's metadata.managedFields, as `kubectl get -o json --show-managed-fields` prints them.
  nlohmann::json ManagedFieldsOf(const std::string& kind, const std::string& name) {
    CommandResult got = Kubectl({"get", kind, name, "-o", "json", "--show-managed-fields"});
    EXPECT_EQ(got.exit_code, 0) << got.err;
    nlohmann::json object = nlohmann::json::parse(got.out, nullptr, false);
    if (!object.is_object() || !object["metadata"].contains("managedFields")) return {};
    return object["metadata"]["managedFields"];
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
  // kubectl 1.32 sends this create as protobuf.
  CommandResult ns = Kubectl({"create", "namespace", "team-a"});
  ASSERT_EQ(ns.exit_code, 0) << ns.err;
  EXPECT_EQ(ns.out, "namespace/team-a created\n");
  std::string job = SourceDir() + "/examples/resnet-job.yaml";
  CommandResult applied = Kubectl({"apply", "-f", job});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  EXPECT_EQ(applied.out, "dljob.dljob.io/resnet50 created\n");
  CommandResult again = Kubectl({"apply", "-f", job});
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
  // Images/sec is a whole number in the table (an integer column), as the status has it to the
  // last digit for -o json.
  CommandResult patched =
      Kubectl({"patch", "dljob", "resnet50", "-n", "team-a", "--subresource=status", "--type=merge",
               "-p", R"({"status":{"throughput":{"imagesPerSec":2950.731}}})"});
  ASSERT_EQ(patched.exit_code, 0) << patched.err;
  CommandResult rate = Kubectl({"get", "dljobs", "-n", "team-a"});
  ASSERT_EQ(rate.exit_code, 0) << rate.err;
  EXPECT_TRUE(Contains(rate.out, " 2950 ")) << rate.out;
  EXPECT_FALSE(Contains(rate.out, "2950.7")) << rate.out;
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

// A DLJob with generateName and no name: `kubectl create` takes it (apply needs a name), the
// server names it, and the CRD holds the prefix to its pattern.
TEST_F(KubectlE2eTest, CreateADLJobFromAGenerateName) {
  const std::string job =
      "apiVersion: dljob.io/v1alpha1\nkind: DLJob\nmetadata:\n  generateName: nightly-\n"
      "spec:\n  image: i\n  gpus: 8\n  command: [dljob-train, --model=resnet50]\n";
  CommandResult created = Kubectl({"create", "-f", WriteManifest("gen.yaml", job)});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string prefix = "dljob.dljob.io/nightly-";
  EXPECT_EQ(created.out.rfind(prefix, 0), 0u) << created.out;
  EXPECT_EQ(created.out.size(), prefix.size() + 5 + std::string(" created\n").size())
      << created.out;
  CommandResult listed = Kubectl({"get", "dljobs", "-o", "name"});
  EXPECT_EQ(listed.out, created.out.substr(0, created.out.find(' ')) + "\n") << listed.out;

  std::string bad = job;
  bad.replace(bad.find("nightly-"), 8, "Nightly-");
  CommandResult refused = Kubectl({"create", "-f", WriteManifest("bad.yaml", bad)});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_TRUE(Contains(refused.err, "metadata.generateName")) << refused.err;
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
  ASSERT_EQ(Kubectl({
                        "apply",
                        "-f",
                        pod("first"),
                    })
                .exit_code,
            0);
  std::string out = dir_->path() + "/watch.out", err = dir_->path() + "/watch.err";
  Background watch(KubectlArgv({"get", "pods", "-w"}), Env(), out, err);
  // The watch lists first; once it printed "first", "second" can only reach it as an event.
  ASSERT_TRUE(WaitFor([&] { return Contains(ReadFile(out), "first"); }, 30000))
      << ReadFile(out) << ReadFile(err);
  CommandResult created = Kubectl({"apply", "-f", pod("second")});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  ASSERT_TRUE(WaitFor([&] { return Contains(ReadFile(out), "second"); }, 30000))
      << ReadFile(out) << ReadFile(err);
  EXPECT_TRUE(Contains(ReadFile(out), "Pending")) << ReadFile(out);
  StopServer();  // with the watch still open: it must still stop cleanly
  watch.Signal(SIGKILL);
  watch.Wait(30000);
}

// kubectl's default validation (no --validate=false) applies the real objects users write: the
// Fashion-MNIST example, a Namespace from a manifest, a Pod and a headless Service.
TEST_F(KubectlE2eTest, DefaultValidationAppliesExamplesAndBuiltinKinds) {
  CommandResult ns = Kubectl({"apply", "-f",
                              WriteManifest("ns.yaml",
                                            "apiVersion: v1\nkind: Namespace\n"
                                            "metadata:\n  name: team-b\n")});
  ASSERT_EQ(ns.exit_code, 0) << ns.err;
  EXPECT_EQ(ns.out, "namespace/team-b created\n");
  CommandResult job =
      Kubectl({"apply", "-n", "team-b", "-f", SourceDir() + "/examples/mnist-job.yaml"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(job.out, "dljob.dljob.io/mnist created\n");
  EXPECT_EQ(job.err, "");  // no warnings: every field of the example is in the CRD's schema
  CommandResult objects =
      Kubectl({"apply", "-n", "team-b", "-f",
               WriteManifest("objects.yaml",
                             "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-0\n"
                             "  labels:\n    app: web\nspec:\n  hostname: web-0\n  subdomain: web\n"
                             "  containers:\n    - name: main\n      image: busybox\n"
                             "      ports:\n        - containerPort: 8080\n"
                             "---\n"
                             "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n"
                             "  clusterIP: None\n  selector:\n    app: web\n"
                             "  ports:\n    - name: http\n      port: 8080\n")});
  ASSERT_EQ(objects.exit_code, 0) << objects.err;
  EXPECT_EQ(objects.out, "pod/web-0 created\nservice/web created\n");
  // A second apply patches (strategic merge for built-ins, merge patch for the DLJob).
  CommandResult again =
      Kubectl({"apply", "-n", "team-b", "-f", SourceDir() + "/examples/mnist-job.yaml"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "dljob.dljob.io/mnist unchanged\n");
}

// What a real server's CRD schema refuses, kubectl reports with the field's path.
TEST_F(KubectlE2eTest, DefaultValidationRefusesAnUnknownDLJobFieldWithItsPath) {
  const std::string job =
      "apiVersion: dljob.io/v1alpha1\nkind: DLJob\nmetadata:\n  name: typo\nspec:\n"
      "  image: dljob/trainer:cpu\n  command: [dljob-train]\n  gpus: 2\n";
  CommandResult unknown =
      Kubectl({"apply", "-f", WriteManifest("unknown.yaml", job + "  gpusPerWorkr: 1\n")});
  EXPECT_NE(unknown.exit_code, 0) << unknown.out;
  EXPECT_TRUE(Contains(unknown.err, "strict decoding error: unknown field \"spec.gpusPerWorkr\""))
      << unknown.err;
  CommandResult wrong_type =
      Kubectl({"apply", "-f",
               WriteManifest("type.yaml", job.substr(0, job.find("  gpus:")) + "  gpus: two\n")});
  EXPECT_NE(wrong_type.exit_code, 0) << wrong_type.out;
  EXPECT_TRUE(Contains(wrong_type.err,
                       "spec.gpus: Invalid value: \"string\": spec.gpus in body must be of type "
                       "integer: \"string\""))
      << wrong_type.err;
  CommandResult negative =
      Kubectl({"apply", "-f",
               WriteManifest("neg.yaml", job.substr(0, job.find("  gpus:")) + "  gpus: -3\n")});
  EXPECT_NE(negative.exit_code, 0);
  EXPECT_TRUE(Contains(negative.err, "spec.gpus in body should be greater than or equal to 1"))
      << negative.err;
  CommandResult nothing = Kubectl({"get", "dljobs", "-o", "name"});
  EXPECT_EQ(nothing.out, "");
  // Skipping validation (as --validate=false did) only warns, and the field is dropped.
  CommandResult lenient = Kubectl({"apply", "--validate=warn", "-f",
                                   WriteManifest("unknown.yaml", job + "  gpusPerWorkr: 1\n")});
  ASSERT_EQ(lenient.exit_code, 0) << lenient.err;
  EXPECT_TRUE(Contains(lenient.err, "unknown field \"spec.gpusPerWorkr\"")) << lenient.err;
}

TEST_F(KubectlE2eTest, InvalidNamesAreRefusedAsTheRealServerRefusesThem) {
  CommandResult service =
      Kubectl({"create", "service", "clusterip", "1abc-worker", "--clusterip=None"});
  EXPECT_NE(service.exit_code, 0);
  EXPECT_TRUE(Contains(service.err,
                       "metadata.name: Invalid value: \"1abc-worker\": a DNS-1035 label must "
                       "consist of lower case alphanumeric characters"))
      << service.err;
  CommandResult ns = Kubectl({"create", "namespace", "Team_A"});
  EXPECT_NE(ns.exit_code, 0);
  EXPECT_TRUE(Contains(ns.err, "a lowercase RFC 1123 label must consist of")) << ns.err;
}

const char kSettings[] = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  a: "1"
  b: "2"
)";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST_F(KubectlE2eTest, ServerSideApplyCreatesAndUpdatesADLJobAndAConfigMap) {
  std::string job = SourceDir() + "/examples/mnist-job.yaml";
  CommandResult created = Kubectl({"apply", "--server-side", "-f", job});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_EQ(created.out, "dljob.dljob.io/mnist serverside-applied\n");
  EXPECT_EQ(created.err, "");
  std::string four = WriteManifest("mnist4.yaml", Replace(ReadFile(job), "gpus: 2", "gpus: 4"));
  CommandResult changed = Kubectl({"apply", "--server-side", "-f", four});
  ASSERT_EQ(changed.exit_code, 0) << changed.err;
  EXPECT_EQ(changed.out, "dljob.dljob.io/mnist serverside-applied\n");
  EXPECT_EQ(Kubectl({"get", "dljob", "mnist", "-o", "jsonpath={.spec.gpus}"}).out, "4");

  std::string cm = WriteManifest("settings.yaml", kSettings);
  CommandResult cm_created = Kubectl({"apply", "--server-side", "-f", cm});
  ASSERT_EQ(cm_created.exit_code, 0) << cm_created.err;
  EXPECT_EQ(cm_created.out, "configmap/settings serverside-applied\n");
  // b left out: it was kubectl's alone, so it goes.
  CommandResult cm_changed =
      Kubectl({"apply", "--server-side", "-f",
               WriteManifest("settings2.yaml",
                             Replace(Replace(kSettings, "\"1\"", "\"3\""), "  b: \"2\"\n", ""))});
  ASSERT_EQ(cm_changed.exit_code, 0) << cm_changed.err;
  nlohmann::json data =
      nlohmann::json::parse(Kubectl({"get", "cm", "settings", "-o", "jsonpath={.data}"}).out);
  EXPECT_EQ(data, nlohmann::json({{"a", "3"}}));

  // kubectl strips managedFields from what it prints unless asked for them.
  CommandResult plain = Kubectl({"get", "dljob", "mnist", "-o", "yaml"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_FALSE(Contains(plain.out, "managedFields")) << plain.out;
  CommandResult shown = Kubectl({"get", "dljob", "mnist", "-o", "yaml", "--show-managed-fields"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  for (const char* text : {"managedFields:", "manager: kubectl", "operation: Apply",
                           "fieldsType: FieldsV1", "f:gpus: {}", "f:command: {}"}) {
    EXPECT_TRUE(Contains(shown.out, text)) << text << " missing from:\n" << shown.out;
  }
}

TEST_F(KubectlE2eTest, ServerSideApplyConflictsBetweenManagersUntilForced) {
  std::string cm = WriteManifest("settings.yaml", kSettings);
  ASSERT_EQ(Kubectl({"apply", "--server-side", "--field-manager=alice", "-f", cm}).exit_code, 0);
  std::string theirs = WriteManifest("bob.yaml", Replace(kSettings, "\"1\"", "\"9\""));
  CommandResult conflict = Kubectl({"apply", "--server-side", "--field-manager=bob", "-f", theirs});
  EXPECT_NE(conflict.exit_code, 0) << conflict.out;
  EXPECT_TRUE(Contains(conflict.err,
                       "error: Apply failed with 1 conflict: conflict with \"alice\": .data.a"))
      << conflict.err;
  EXPECT_TRUE(Contains(conflict.err, "--force-conflicts")) << conflict.err;
  EXPECT_EQ(Kubectl({"get", "cm", "settings", "-o", "jsonpath={.data.a}"}).out, "1");

  CommandResult forced =
      Kubectl({"apply", "--server-side", "--field-manager=bob", "--force-conflicts", "-f", theirs});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(forced.out, "configmap/settings serverside-applied\n");
  EXPECT_EQ(Kubectl({"get", "cm", "settings", "-o", "jsonpath={.data.a}"}).out, "9");
  nlohmann::json managed = ManagedFieldsOf("cm", "settings");
  std::map<std::string, nlohmann::json> owners;
  for (const nlohmann::json& e : managed) owners[e["manager"]] = e["fieldsV1"]["f:data"];
  EXPECT_EQ(owners["alice"], nlohmann::json::parse(R"({"f:b":{}})")) << managed;
  EXPECT_EQ(owners["bob"], nlohmann::json::parse(R"({"f:a":{},"f:b":{}})")) << managed;

  // A field another client changed with a merge patch is that manager's (operation Update).
  ASSERT_EQ(
      Kubectl({"apply", "--server-side", "-f", SourceDir() + "/examples/mnist-job.yaml"}).exit_code,
      0);
  ASSERT_EQ(Kubectl({"patch", "dljob", "mnist", "--type=merge", "-p", R"({"spec":{"gpus":8}})"})
                .exit_code,
            0);
  CommandResult patched_conflict =
      Kubectl({"apply", "--server-side", "-f", SourceDir() + "/examples/mnist-job.yaml"});
  EXPECT_NE(patched_conflict.exit_code, 0);
  EXPECT_TRUE(Contains(patched_conflict.err,
                       "Apply failed with 1 conflict: conflict with \"kubectl-patch\" using "
                       "dljob.io/v1alpha1: .spec.gpus"))
      << patched_conflict.err;
}

// The first server-side apply of what kubectl applied client-side: the server lets kubectl take
// the fields whose values the last-applied annotation records (no conflict, though the value
// changes), and kubectl then moves client-side apply's fields to its server-side manager (a JSON
// patch of managedFields).
TEST_F(KubectlE2eTest, ServerSideApplyTakesOverFromClientSideApply) {
  std::string cm = WriteManifest("settings.yaml", kSettings);
  CommandResult client_side = Kubectl({"apply", "-f", cm});
  ASSERT_EQ(client_side.exit_code, 0) << client_side.err;
  EXPECT_EQ(client_side.out, "configmap/settings created\n");
  CommandResult server_side =
      Kubectl({"apply", "--server-side", "-f",
               WriteManifest("changed.yaml", Replace(kSettings, "\"1\"", "\"3\""))});
  ASSERT_EQ(server_side.exit_code, 0) << server_side.err;
  EXPECT_EQ(server_side.out, "configmap/settings serverside-applied\n");
  EXPECT_EQ(Kubectl({"get", "cm", "settings", "-o", "jsonpath={.data.a}"}).out, "3");
  nlohmann::json managed = ManagedFieldsOf("cm", "settings");
  std::set<std::string> managers;
  for (const nlohmann::json& e : managed) {
    managers.insert(e["manager"].get<std::string>() + "/" + e["operation"].get<std::string>());
  }
  EXPECT_EQ(managers.count("kubectl-client-side-apply/Update"), 0u) << managed;
  EXPECT_EQ(managers.count("kubectl/Apply"), 1u) << managed;
  // Left out now, and owned by no one else: pruned.
  CommandResult dropped =
      Kubectl({"apply", "--server-side", "-f",
               WriteManifest("less.yaml", Replace(kSettings, "  b: \"2\"\n", ""))});
  ASSERT_EQ(dropped.exit_code, 0) << dropped.err;
  EXPECT_EQ(Kubectl({"get", "cm", "settings", "-o", "jsonpath={.data.b}"}).out, "");
}

// /openapi/v2 in protobuf, through kubectl's own reader (what kubectl 1.27's default validation
// downloads before every apply; `kubectl explain` reads it when asked for v2 output).
TEST_F(KubectlE2eTest, KubectlReadsOpenApiV2) {
  CommandResult explain =
      Kubectl({"explain", "dljobs.spec.gpus", "--output", "plaintext-openapiv2"});
  ASSERT_EQ(explain.exit_code, 0) << explain.err;
  EXPECT_TRUE(Contains(explain.out, "KIND:     DLJob")) << explain.out;
  EXPECT_TRUE(Contains(explain.out, "FIELD:    gpus <integer>")) << explain.out;
  CommandResult raw = Kubectl({"get", "--raw", "/openapi/v2"});
  ASSERT_EQ(raw.exit_code, 0) << raw.err;
  nlohmann::json doc = nlohmann::json::parse(raw.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << raw.out.substr(0, 200);
  EXPECT_EQ(doc["swagger"], "2.0");
}

TEST_F(KubectlE2eTest, AValidatingWebhookRefusesAnApplyWithTheRealMessage) {
  using http::testing::LoopbackHttpServer;
  http::testing::TestCa ca;
  // Refuses jobs that ask for more than 8 GPUs, allows the rest with a warning.
  LoopbackHttpServer webhook(
      [](const http::testing::ReceivedRequest& request, LoopbackHttpServer::Connection& c) {
        nlohmann::json review = nlohmann::json::parse(request.body, nullptr, false);
        const nlohmann::json& object = review["request"]["object"];
        bool greedy = object["spec"].value("gpus", 0) > 8;
        nlohmann::json response = {{"uid", review["request"]["uid"]}, {"allowed", !greedy}};
        if (greedy) {
          response["status"] = {{"code", 403},
                                {"reason", "Forbidden"},
                                {"message", "spec.gpus: 64 is more than a node has"}};
        } else {
          response["warnings"] = {"spec.gpus: jobs are checked by dljob"};
        }
        c.Write(LoopbackHttpServer::Answer(200,
                                           nlohmann::json{{"apiVersion", "admission.k8s.io/v1"},
                                                          {"kind", "AdmissionReview"},
                                                          {"response", response}}
                                               .dump(),
                                           "Content-Type: application/json\r\n"));
      },
      ca.Issue({"dljob-webhook.dljob-system.svc"}));
  std::string route = WriteManifest(
      "route.json", nlohmann::json{{"namespace", "dljob-system"},
                                   {"name", "dljob-webhook"},
                                   {"address", "127.0.0.1:" + std::to_string(webhook.port())}}
                        .dump());
  CommandResult routed = Kubectl({"create", "--raw", "/_test/services", "-f", route});
  ASSERT_EQ(routed.exit_code, 0) << routed.err;
  std::string config = WriteManifest("webhook.yaml", R"(apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: dljob
webhooks:
- name: validate.dljob.io
  admissionReviewVersions: ["v1"]
  sideEffects: None
  clientConfig:
    service: {namespace: dljob-system, name: dljob-webhook, path: /validate}
    caBundle: )" + Base64Encode(ca.cert_pem()) + R"(
  rules:
  - operations: ["CREATE", "UPDATE"]
    apiGroups: ["dljob.io"]
    apiVersions: ["v1alpha1"]
    resources: ["dljobs"]
)");
  CommandResult configured = Kubectl({"apply", "-f", config});
  ASSERT_EQ(configured.exit_code, 0) << configured.err;
  EXPECT_EQ(configured.out,
            "validatingwebhookconfiguration.admissionregistration.k8s.io/dljob created\n");

  auto job = [&](const std::string& name, int gpus) {
    return WriteManifest(name + ".yaml",
                         "apiVersion: dljob.io/v1alpha1\nkind: DLJob\nmetadata:\n"
                         "  name: " +
                             name +
                             "\nspec:\n  image: trainer:1\n"
                             "  command: [python, train.py]\n  gpus: " +
                             std::to_string(gpus) + "\n");
  };
  std::string greedy = job("greedy", 64);
  CommandResult refused = Kubectl({"apply", "-f", greedy});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_EQ(refused.err, "Error from server (Forbidden): error when creating \"" + greedy +
                             "\": admission webhook \"validate.dljob.io\" denied the request: "
                             "spec.gpus: 64 is more than a node has\n");
  CommandResult absent = Kubectl({"get", "dljob", "greedy"});
  EXPECT_NE(absent.exit_code, 0);

  CommandResult allowed = Kubectl({"apply", "-f", job("small", 8)});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_EQ(allowed.out, "dljob.dljob.io/small created\n");
  EXPECT_EQ(allowed.err, "Warning: spec.gpus: jobs are checked by dljob\n");
  EXPECT_EQ(webhook.handshakes(2)[0].server_name, "dljob-webhook.dljob-system.svc");
}

}  // namespace
}  // namespace dljob::testing
