// The operator's admission webhook end to end on dljob-test-apiserver, which calls validating
// webhooks as kube-apiserver does: the chart's ValidatingWebhookConfiguration (from
// charts/manifests/dljob.yaml) gets its caBundle from the operator at start-up; stock kubectl's
// `apply` of every malformed example in examples/invalid/ is refused: where the object gets past
// the CRD's schema to the webhook, with exactly the problems `dljob validate` prints, else by the
// schema naming some of the same fields; and a
// running job's spec edits are taken (applied by a restart) or refused (naming the field) as
// jobs/spec_update.h says.
#include <algorithm>
#include <filesystem>

#include "jobs/codec.h"
#include "tests/operator/e2e_fixture.h"

namespace dljob::testing {
namespace {

using kube::resources::kDLJobs;
const kube::Resource kNamespaces{"", "v1", "namespaces", false, "Namespace"};
const kube::Resource kWebhookConfigs{"admissionregistration.k8s.io", "v1",
                                     "validatingwebhookconfigurations", false,
                                     "ValidatingWebhookConfiguration"};

// The document of `kind` in the chart's plain manifests.
Json FromManifests(const std::string& kind) {
  std::string text = ReadFile(SourceDir() + "/charts/manifests/dljob.yaml");
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find("\n---", start);
    if (end == std::string::npos) end = text.size();
    Result<Json> doc = YamlToJson(text.substr(start, end - start));
    if (doc.ok() && doc->is_object() && doc->value("kind", "") == kind) return *doc;
    start = end + 4;
  }
  ADD_FAILURE() << "no " << kind << " in charts/manifests/dljob.yaml";
  return Json::object();
}

class OperatorWebhookTest : public OperatorE2eTest {
 protected:
  void SetUp() override {
    kubectl_ = FindOnPath("kubectl");
    if (kubectl_.empty()) GTEST_FAIL() << "kubectl is not installed: run scripts/dev/setup.sh";
    StartCluster({.nodes = 1, .kubelet_delay_ms = 0});   // bound pods run by themselves
    for (const char* ns : {"dljob-system", "team-a"}) {  // team-a: an example's namespace
      ASSERT_TRUE(api().Create(kNamespaces, "", {{"metadata", {{"name", ns}}}}).ok());
    }
    Json config = FromManifests("ValidatingWebhookConfiguration");
    ASSERT_EQ(config["metadata"].value("name", ""), "dljob-validating-webhook");
    ASSERT_TRUE(api().Create(kWebhookConfigs, "", config).ok());
    port_file_ = dir_.path() + "/webhook-port";
    OperatorProcess& op = StartOperator(
        {"--webhook-port", "0", "--webhook-port-file", port_file_, "--webhook-namespace",
         "dljob-system", "--webhook-service", "dljob-webhook", "--webhook-cert-secret",
         "dljob-webhook-cert", "--webhook-configuration", "dljob-validating-webhook"});
    int port = -1;
    ASSERT_TRUE(WaitFor([&] { return (port = ReadPortFile(port_file_)) > 0; }, kWait)) << op.Log();
    ASSERT_TRUE(
        control()
            .RouteService("dljob-system", "dljob-webhook", "127.0.0.1:" + std::to_string(port))
            .ok());
    ASSERT_TRUE(WaitFor(
        [&] {
          kube::ApiResult<Json> c = api().Get(kWebhookConfigs, "", "dljob-validating-webhook");
          return c.ok() && !(*c)["webhooks"][0]["clientConfig"].value("caBundle", "").empty();
        },
        kWait))
        << "the operator did not write the caBundle\n"
        << op.Log();
  }

  CommandResult Run(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {kubectl_, "--kubeconfig", cluster_->kubeconfig(),
                                     "--cache-dir", dir_.path() + "/cache"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, {{"HOME", dir_.path()}});
  }

  TempDir dir_;
  std::string kubectl_;
  std::string port_file_;
};

TEST_F(OperatorWebhookTest, KubectlApplyOfEachMalformedExampleIsRefusedAsDljobValidateRefusesIt) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(SourceDir() + "/examples/invalid")) {
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 5u);
  int by_webhook = 0;
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    int exit_code = -1;
    std::vector<std::string> problems = ValidateProblems(file, &exit_code);
    EXPECT_EQ(exit_code, 1);
    ASSERT_FALSE(problems.empty());
    CommandResult applied = Run({"apply", "-f", file});
    EXPECT_NE(applied.exit_code, 0) << applied.out;
    if (applied.err.find("admission webhook \"") != std::string::npos) {
      ++by_webhook;  // past the CRD's schema: the webhook's answer is dljob validate's
      EXPECT_NE(applied.err.find("denied the request: "), std::string::npos) << applied.err;
      for (const std::string& p : problems) {
        EXPECT_NE(applied.err.find(p), std::string::npos) << p << "\n" << applied.err;
      }
    } else {
      // Refused by the CRD's schema, which ends the request before any webhook is called (as on
      // a real server): it names some of the fields dljob validate names (types, minimums,
      // enums), never one dljob validate accepts.
      int named = 0;
      for (const std::string& p : problems) {
        named += applied.err.find(p.substr(0, p.find(':'))) != std::string::npos;
      }
      EXPECT_GE(named, 1) << applied.err;
    }
  }
  // The examples whose problems no schema can express (gpus divisible by gpusPerWorker, volume
  // schemes, quantities) reach the webhook.
  EXPECT_GE(by_webhook, 2);
  EXPECT_TRUE(JobPods(api(), "missing-image").value_or(std::vector<Json>{}).empty());
}

TEST_F(OperatorWebhookTest, ARunningJobTakesAnImageChangeByRestartingAndRefusesAGpusChange) {
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("edited", 2, 1)).ok());
  ASSERT_TRUE(WaitForPhase(api(), "edited", "Running", kWait)) << Describe(api(), "edited");

  CommandResult gpus =
      Run({"patch", "dljob", "edited", "-n", Ns(), "--type=merge", "-p", R"({"spec":{"gpus":4}})"});
  EXPECT_NE(gpus.exit_code, 0);
  EXPECT_NE(gpus.err.find("spec.gpus: cannot change once the job has started (it is Running)"),
            std::string::npos)
      << gpus.err;
  EXPECT_EQ((*GetJob(api(), "edited"))["spec"].value("gpus", 0), 2);

  CommandResult image = Run({"patch", "dljob", "edited", "-n", Ns(), "--type=merge", "-p",
                             R"({"spec":{"image":"dljob/trainer:cpu-2"}})"});
  ASSERT_EQ(image.exit_code, 0) << image.err;
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<Json> job = GetJob(api(), "edited");
        return job && job->value("status", Json::object()).value("specRestarts", 0) == 1;
      },
      kWait))
      << Describe(api(), "edited");
  ASSERT_TRUE(WaitForPhase(api(), "edited", "Running", kWait)) << Describe(api(), "edited");
  for (const Json& w : Workers(api(), "edited")) {
    if (!IsDeleting(w)) {
      EXPECT_EQ(w["spec"]["containers"][0]["image"], "dljob/trainer:cpu-2");
    }
  }
}

}  // namespace
}  // namespace dljob::testing
