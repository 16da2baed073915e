// The dljob CLI as a user meets it: validation, errors and hints, dry runs. No job runs here.
#include <algorithm>
#include <fstream>

#include <gtest/gtest.h>

#include "jobs/codec.h"
#include "testing/command.h"

namespace dljob::testing {
namespace {

class CliTest : public ::testing::Test {
 protected:
  CommandResult Dljob(std::vector<std::string> args) {
    args.insert(args.begin(), BinDir() + "/dljob");
    return RunCommand(args, {{"XDG_STATE_HOME", state_.path()}});
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = files_.path() + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  // A user never sees a C++ exception or a stack trace.
  static void ExpectNoTrace(const CommandResult& r) {
    for (const char* bad : {"terminate called", "what():", "Aborted", "core dumped", "#0 "}) {
      EXPECT_EQ(r.err.find(bad), std::string::npos) << r.err;
      EXPECT_EQ(r.out.find(bad), std::string::npos) << r.out;
    }
  }
  TempDir state_, files_;
};

TEST_F(CliTest, ValidatesTheExamples) {
  for (const char* example :
       {"examples/mnist-job.yaml", "examples/resnet-job.yaml", "examples/lstm-job.yaml"}) {
    CommandResult r = Dljob({"validate", "-f", SourceDir() + "/" + example});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("OK: "), std::string::npos) << r.out;
  }
  std::string queue = SourceDir() + "/examples/queue-default.yaml";
  CommandResult r = Dljob({"validate", "-f", queue});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "OK: " + queue + " is a valid DLQueue (default, 16 nominal GPUs)\n");
}

// The document's kind decides what it is checked as; a queue's problems name their paths and
// where they are in the file.
TEST_F(CliTest, ValidateChecksADLQueueByItsKind) {
  std::string bad = Write("queue.yaml", R"(apiVersion: dljob.io/v1alpha1
kind: DLQueue
metadata: {name: team-a, namespace: ml}
spec:
  quotas:
    - {gpuProduct: NVIDIA-A100-SXM4-80GB, nominal: -1}
    - {gpuProduct: NVIDIA-A100-SXM4-80GB, nominal: 8, borrowLimit: 4}
)");
  CommandResult r = Dljob({"validate", "-f", bad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is not a valid DLQueue (4 problems)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("metadata.namespace: must be empty: a DLQueue is cluster-scoped, got "
                       "\"ml\" (line 3"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("spec.quotas[0].nominal: must be zero or more GPUs, got -1 (line 6"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("spec.quotas[1].gpuProduct: duplicate quota for gpuProduct "
                       "\"NVIDIA-A100-SXM4-80GB\" (also spec.quotas[0])"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("spec.quotas[1].borrowLimit: unknown field"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint: "), std::string::npos);
  ExpectNoTrace(r);

  std::string good = Write("queue.json",
                           R"({"apiVersion": "dljob.io/v1alpha1", "kind": "DLQueue",
                               "metadata": {"name": "team-a"},
                               "spec": {"quotas": [{"gpuProduct": "A100", "nominal": 32},
                                                   {"nominal": 0, "borrowingLimit": 8}]}})");
  r = Dljob({"validate", "-f", good});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "OK: " + good + " is a valid DLQueue (team-a, 32 nominal GPUs in 2 quotas)\n");
}

TEST_F(CliTest, ValidateReportsEveryProblemWithItsPath) {
  std::string bad = Write("bad.yaml", R"(apiVersion: dljob.io/v1alpha1
kind: DLJob
metadata: {name: Bad_Name}
spec:
  image: img
  command: [train]
  gpus: -2
  gpu: 3
  data:
    - name: a
      source: s4://x/y
      mountPath: /data
)");
  CommandResult r = Dljob({"validate", "-f", bad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("metadata.name:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("spec.gpus: must be a positive integer, got -2"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("spec.gpu: unknown field"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("spec.data[0].source: unknown scheme \"s4\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint: "), std::string::npos);
  ExpectNoTrace(r);
}

TEST_F(CliTest, MalformedYamlGivesLineAndColumn) {
  std::string bad = Write("broken.yaml", "apiVersion: dljob.io/v1alpha1\nspec:\n  gpus: [1, 2\n");
  CommandResult r = Dljob({"validate", "-f", bad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("line "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("column "), std::string::npos) << r.err;
  ExpectNoTrace(r);
}

TEST_F(CliTest, MissingFileIsOneLineWithAHint) {
  CommandResult r = Dljob({"validate", "-f", "/nonexistent/job.yaml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/job.yaml"), std::string::npos);
  EXPECT_NE(r.err.find("\nhint: "), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;
  ExpectNoTrace(r);
}

TEST_F(CliTest, GarbageFilesNeverCrash) {
  for (const std::string& text :
       {std::string("\x00\xff\xfe garbage", 11), std::string("{{{{"), std::string("- a\n- b\n"),
        std::string("---\n---\n"), std::string("spec: !!binary aGVsbG8=\n"), std::string("")}) {
    CommandResult r = Dljob({"validate", "-f", Write("g.yaml", text)});
    EXPECT_EQ(r.exit_code, 1) << text;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    ExpectNoTrace(r);
  }
}

TEST_F(CliTest, BadFlagsSayWhatToDo) {
  CommandResult r = Dljob({"submit", "--local", "--gpus", "two", "--", "true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("hint: see: dljob submit --help"), std::string::npos) << r.err;
  r = Dljob({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("hint: "), std::string::npos) << r.err;
  r = Dljob({"get", "mnist", "-o", "xml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown output format \"xml\""), std::string::npos) << r.err;
  ExpectNoTrace(r);
}

TEST_F(CliTest, EveryCommandHasHelp) {
  for (const char* cmd : {"validate", "submit", "list", "get", "logs", "delete"}) {
    CommandResult r = Dljob({cmd, "--help"});
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << cmd << ": " << r.out;
  }
}

TEST_F(CliTest, DryRunPrintsTheDefaultedJobTheFlagsDescribe) {
  CommandResult r =
      Dljob({"submit", "--local", "--dry-run", "-o", "yaml", "--name", "demo", "--gpus", "2",
             "--image", "dljob/trainer:cpu", "--env", "A=1", "--data",
             "hostPath:/srv/fmnist:/data/fmnist", "--", "dljob-train", "--model=mnist_cnn"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  DecodeResult job = DecodeYaml(r.out);
  ASSERT_TRUE(job.ok()) << JoinFieldErrors(job.errors) << "\n" << r.out;
  EXPECT_EQ(job.job.metadata.name, "demo");
  EXPECT_EQ(job.job.spec.gpus, 2);
  EXPECT_EQ(job.job.spec.gpus_per_worker, 2);  // defaulted
  EXPECT_EQ(job.job.spec.mpi.ssh_port, 2222);
  EXPECT_EQ(job.job.spec.command, (std::vector<std::string>{"dljob-train", "--model=mnist_cnn"}));
  ASSERT_EQ(job.job.spec.data.size(), 1u);
  EXPECT_EQ(job.job.spec.data[0].source, "hostPath:/srv/fmnist");
}

TEST_F(CliTest, FlagsOverrideTheFile) {
  CommandResult r =
      Dljob({"submit", "--local", "--dry-run", "-o", "json", "-f",
             SourceDir() + "/examples/mnist-job.yaml", "--name", "other", "--gpus", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto tree = nlohmann::json::parse(r.out);
  EXPECT_EQ(tree["metadata"]["name"], "other");
  EXPECT_EQ(tree["spec"]["gpus"], 4);
  EXPECT_EQ(tree["spec"]["command"][0], "dljob-train");
}

TEST_F(CliTest, AJobWithoutANameGetsAGenerateNameFromItsModelOrImage) {
  CommandResult r = Dljob({"submit", "--local", "--dry-run", "--gpus", "2", "--image", "i", "--",
                           "dljob-train", "--model=mnist_cnn"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  DecodeResult job = DecodeYaml(r.out);
  ASSERT_TRUE(job.ok()) << JoinFieldErrors(job.errors) << "\n" << r.out;
  EXPECT_EQ(job.job.metadata.name, "") << "drawn when it runs, not by a dry run";
  EXPECT_EQ(job.job.metadata.generate_name, "mnist-cnn-");

  r = Dljob({"submit", "--local", "--dry-run", "-o", "json", "--gpus", "1", "--image",
             "registry.example.com:5000/Team/Trainer_X:cpu@sha256:0123", "--", "true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto tree = nlohmann::json::parse(r.out);
  EXPECT_EQ(tree["metadata"]["generateName"], "trainer-x-");
  EXPECT_FALSE(tree["metadata"].contains("name")) << r.out;

  // A file's name, or --name, wins; a file's generateName is kept.
  std::string file = Write("gen.yaml",
                           "apiVersion: dljob.io/v1alpha1\nkind: DLJob\nmetadata:\n"
                           "  generateName: nightly-\nspec:\n  image: i\n  gpus: 1\n"
                           "  command: [dljob-train, --model=vgg16]\n");
  r = Dljob({"submit", "--local", "--dry-run", "-o", "json", "-f", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  tree = nlohmann::json::parse(r.out);
  EXPECT_EQ(tree["metadata"]["generateName"], "nightly-");
  r = Dljob({"submit", "--local", "--dry-run", "-o", "json", "-f", file, "--name", "given"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["metadata"]["name"], "given");
  r = Dljob({"validate", "-f", file});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(generateName nightly-, 1 GPU)"), std::string::npos) << r.out;

  // A file's generateName is held to the job-name rule.
  std::string bad = Write("bad.yaml",
                          "apiVersion: dljob.io/v1alpha1\nkind: DLJob\nmetadata:\n"
                          "  generateName: Nightly_\nspec:\n  image: i\n  gpus: 1\n"
                          "  command: [\"true\"]\n");
  r = Dljob({"submit", "--local", "--dry-run", "-f", bad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("metadata.generateName: must be the start of a DNS-1035 label"),
            std::string::npos)
      << r.err;
  // validate (not submit) still wants a file to name its job somehow.
  std::string unnamed = Write("unnamed.yaml",
                              "apiVersion: dljob.io/v1alpha1\nkind: DLJob\nspec:\n  image: i\n"
                              "  gpus: 1\n  command: [\"true\"]\n");
  r = Dljob({"validate", "-f", unnamed});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("metadata.name: required, or metadata.generateName"), std::string::npos)
      << r.err;
  r = Dljob({"submit", "--local", "--dry-run", "-f", unnamed});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("generateName: i-"), std::string::npos) << r.out;
}

TEST_F(CliTest, SubmitPrintsOnlyYamlOrJson) {
  CommandResult r =
      Dljob({"submit", "--local", "-o", "wide", "--gpus", "1", "--image", "i", "--", "true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("submit prints the job as yaml or json, not \"wide\""), std::string::npos)
      << r.err;
}

TEST_F(CliTest, FlagFormNeedsACommand) {
  CommandResult r = Dljob({"submit", "--local", "--name", "x", "--gpus", "2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nothing to run"), std::string::npos) << r.err;
}

TEST_F(CliTest, UnknownJobsSayHowToListJobs) {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"get", "nope"}, {"logs", "nope"}, {"delete", "nope"}}) {
    CommandResult r = Dljob(args);
    EXPECT_EQ(r.exit_code, 1) << args[0];
    EXPECT_EQ(r.err, "error: job \"nope\" not found\nhint: list jobs with: dljob list\n");
  }
  EXPECT_EQ(Dljob({"delete", "nope", "--ignore-not-found"}).exit_code, 0);
  CommandResult r = Dljob({"list"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("No jobs found"), std::string::npos);
}

}  // namespace
}  // namespace dljob::testing
