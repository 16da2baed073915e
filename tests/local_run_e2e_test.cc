// Local jobs end to end: real `dljob submit --local` runs under real mpirun, then list, get,
// logs and delete read the record. Workloads are small shell scripts (and a short dljob-train
// run), so each test takes seconds.
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "jobs/codec.h"
#include "jobs/generated_name.h"
#include "testing/command.h"

namespace dljob::testing {
namespace {

class LocalRunTest : public ::testing::Test {
 protected:
  std::map<std::string, std::string> Env() { return {{"XDG_STATE_HOME", state_.path()}}; }
  CommandResult Dljob(std::vector<std::string> args) {
    args.insert(args.begin(), BinDir() + "/dljob");
    return RunCommand(args, Env());
  }
  // Submits `script` (run by sh in every rank) as a job of `ranks` ranks.
  CommandResult SubmitScript(const std::string& name, int ranks, const std::string& script,
                             std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "submit", "--local", "--name", name, "--gpus", std::to_string(ranks), "--image", "none"};
    args.insert(args.end(), extra.begin(), extra.end());
    for (const char* a : {"--", "/bin/sh", "-c"}) args.push_back(a);
    args.push_back(script);
    return Dljob(args);
  }
  DLJob Get(const std::string& name) {
    CommandResult r = Dljob({"get", name, "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    DecodeResult d = DecodeJson(r.out);
    EXPECT_TRUE(d.ok()) << JoinFieldErrors(d.errors) << r.out;
    return d.job;
  }
  std::vector<std::string> Background(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {BinDir() + "/dljob"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  TempDir state_, work_;
};

constexpr char kMetricScript[] =
    "echo hello from $OMPI_COMM_WORLD_RANK; "
    "for s in 1 2 3; do echo \"DLJOB_METRIC {\\\"step\\\":$s,\\\"images_per_sec\\\":100,"
    "\\\"loss\\\":0.5,\\\"rank\\\":$OMPI_COMM_WORLD_RANK,\\\"world_size\\\":2,"
    "\\\"total_steps\\\":3}\"; done; echo 'DLJOB_METRIC {broken'; echo oops >&2";

TEST_F(LocalRunTest, ASucceededJobKeepsStatusThroughputAndTaggedLogs) {
  CommandResult r = SubmitScript("ok", 2, kMetricScript);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("[0] hello from 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[1] hello from 1"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("DLJOB_METRIC {\""), std::string::npos) << "metric lines are not echoed";
  EXPECT_NE(r.err.find("no GPU on this machine: the 2 ranks run on CPU"), std::string::npos);

  DLJob job = Get("ok");
  EXPECT_EQ(job.status.phase, JobPhase::kSucceeded);
  ASSERT_TRUE(job.status.throughput.has_value());
  EXPECT_EQ(job.status.throughput->step, 3);
  EXPECT_DOUBLE_EQ(*job.status.throughput->images_per_sec, 200.0);  // both ranks summed
  EXPECT_FALSE(job.status.start_time.empty());
  EXPECT_FALSE(job.status.completion_time.empty());
  EXPECT_EQ(job.status.restarts, 0);

  CommandResult logs = Dljob({"logs", "ok"});
  EXPECT_NE(logs.out.find("[rank 1] hello from 1"), std::string::npos) << logs.out;
  EXPECT_NE(logs.out.find("[rank 0] DLJOB_METRIC {broken"), std::string::npos);  // kept, ignored
  CommandResult rank1 = Dljob({"logs", "ok", "--rank", "1"});
  EXPECT_NE(rank1.out.find("hello from 1\n"), std::string::npos) << rank1.out;
  EXPECT_EQ(rank1.out.find("hello from 0"), std::string::npos);
  EXPECT_EQ(rank1.out.find("[rank"), std::string::npos);

  std::string metrics = ReadFile(state_.path() + "/dljob/jobs/ok/metrics.jsonl");
  EXPECT_EQ(std::count(metrics.begin(), metrics.end(), '\n'), 6) << metrics;

  CommandResult list = Dljob({"list"});
  EXPECT_NE(list.out.find("NAME"), std::string::npos);
  EXPECT_NE(list.out.find("Succeeded"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("200.0"), std::string::npos) << list.out;
}

TEST_F(LocalRunTest, AFailingJobRestartsUpToTheBackoffLimitThenFails) {
  std::string counter = work_.path() + "/attempts";
  CommandResult r =
      SubmitScript("bad", 2, "echo x >> " + counter + "; echo 'dataset is missing' >&2; exit 3",
                   {"--backoff-limit", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  DLJob job = Get("bad");
  EXPECT_EQ(job.status.phase, JobPhase::kFailed);
  EXPECT_EQ(job.status.restarts, 2);
  std::string attempts = ReadFile(counter);
  EXPECT_EQ(std::count(attempts.begin(), attempts.end(), '\n'), 6) << "3 attempts x 2 ranks";
  bool found = false;
  for (const Condition& c : job.status.conditions) {
    if (c.type == "Failed" && c.status == "True") {
      found = true;
      EXPECT_EQ(c.reason, "BackoffLimitExceeded");
      EXPECT_NE(c.message.find("dataset is missing"), std::string::npos) << c.message;
      EXPECT_NE(c.message.find("no restarts left (spec.runPolicy.backoffLimit is 2)"),
                std::string::npos)
          << c.message;
    }
  }
  EXPECT_TRUE(found);
  EXPECT_NE(r.err.find("reason: BackoffLimitExceeded: mpirun exited with code 3"),
            std::string::npos)
      << r.err;
}

TEST_F(LocalRunTest, ANameIsTakenOnceAndDeleteFreesIt) {
  ASSERT_EQ(SubmitScript("dup", 1, "true").exit_code, 0);
  CommandResult again = SubmitScript("dup", 1, "true");
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("job \"dup\" already exists"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("hint: delete it first (dljob delete dup)"), std::string::npos);
  EXPECT_EQ(Dljob({"delete", "dup"}).exit_code, 0);
  EXPECT_EQ(SubmitScript("dup", 1, "true").exit_code, 0);
}

// The name in "note: the job is named NAME   …" on stderr; "" when there is none.
std::string AnnouncedName(const std::string& err) {
  const std::string note = "note: the job is named ";
  size_t at = err.find(note);
  if (at == std::string::npos) return "";
  at += note.size();
  return err.substr(at, err.find_first_of(" \n", at) - at);
}

bool IsGeneratedFrom(const std::string& name, const std::string& prefix) {
  return name.size() == prefix.size() + kGeneratedSuffixLength && name.rfind(prefix, 0) == 0 &&
         name.find_first_not_of(kGeneratedNameAlphabet, prefix.size()) == std::string::npos;
}

TEST_F(LocalRunTest, AJobWithoutANameIsNamedAfterItsImageAndSaysSo) {
  std::vector<std::string> args = {
      "submit", "--local", "--gpus",
      "1",      "--image", "registry.example.com:5000/team/My_Trainer:v1@sha256:0a1b",
      "--",     "/bin/sh", "-c",
      "echo hi"};
  CommandResult first = Dljob(args);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  const std::string name = AnnouncedName(first.err);
  EXPECT_TRUE(IsGeneratedFrom(name, "my-trainer-")) << first.err;
  EXPECT_NE(first.err.find("status: dljob get " + name + "   logs: dljob logs -f " + name),
            std::string::npos)
      << first.err;
  EXPECT_NE(first.out.find("job " + name + " Succeeded after"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("logs: dljob logs " + name), std::string::npos) << first.out;
  DLJob job = Get(name);
  EXPECT_EQ(job.status.phase, JobPhase::kSucceeded);
  EXPECT_EQ(job.metadata.generate_name, "my-trainer-");

  // A second run draws another name: the first one is taken.
  CommandResult second = Dljob(args);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const std::string other = AnnouncedName(second.err);
  EXPECT_TRUE(IsGeneratedFrom(other, "my-trainer-")) << second.err;
  EXPECT_NE(other, name);

  // -o json: stdout is the finished job's record, with its name; the job's output is on stderr.
  CommandResult as_json = Dljob({"submit", "--local", "-o", "json", "--gpus", "1", "--image", "i",
                                 "--", "/bin/sh", "-c", "echo from the job"});
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  DecodeResult decoded = DecodeJson(as_json.out);
  ASSERT_TRUE(decoded.ok()) << JoinFieldErrors(decoded.errors) << as_json.out;
  EXPECT_TRUE(IsGeneratedFrom(decoded.job.metadata.name, "i-")) << as_json.out;
  EXPECT_EQ(decoded.job.status.phase, JobPhase::kSucceeded);
  EXPECT_EQ(AnnouncedName(as_json.err), decoded.job.metadata.name);
  EXPECT_NE(as_json.err.find("\nfrom the job\n"), std::string::npos) << as_json.err;
  EXPECT_EQ(as_json.out.rfind("{\n", 0), 0u) << "stdout is the document alone: " << as_json.out;

  // A file's generateName is honoured here too.
  std::string file = work_.path() + "/gen.yaml";
  std::ofstream(file) << "apiVersion: dljob.io/v1alpha1\nkind: DLJob\nmetadata:\n"
                         "  generateName: nightly-\nspec:\n  image: i\n  gpus: 1\n"
                         "  command: [/bin/sh, -c, \"true\"]\n";
  CommandResult from_file = Dljob({"submit", "--local", "-f", file});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_TRUE(IsGeneratedFrom(AnnouncedName(from_file.err), "nightly-")) << from_file.err;

  CommandResult list = Dljob({"list", "-o", "json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(nlohmann::json::parse(list.out)["items"].size(), 4u) << list.out;
}

TEST_F(LocalRunTest, AMissingDataDirectoryIsRefusedBeforeAnythingRuns) {
  CommandResult r = SubmitScript("nodata", 1, "true", {"--data", "hostPath:/no/such/dir:/data"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/no/such/dir does not exist"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint: "), std::string::npos);
  EXPECT_EQ(Dljob({"get", "nodata"}).exit_code, 1) << "a refused job leaves no record";
}

TEST_F(LocalRunTest, CtrlCInterruptsTheJobAndKeepsItsLogs) {
  std::string pids = work_.path() + "/pids";
  ::dljob::testing::Background submit(
      Background({"submit", "--local", "--name", "long", "--gpus", "2", "--image", "none", "--",
                  "/bin/sh", "-c", "echo $$ >> " + pids + "; echo started; exec sleep 600"}),
      Env(), work_.path() + "/out", work_.path() + "/err");
  ASSERT_TRUE(WaitFor(
      [&] {
        std::string p = ReadFile(pids);
        return std::count(p.begin(), p.end(), '\n') == 2;
      },
      30000))
      << ReadFile(work_.path() + "/err");
  // A rank writes its pid before it says "started", and the line reaches the job's log later
  // still: interrupt only once both are in the log (what the test then expects kept).
  ASSERT_TRUE(WaitFor(
      [&] {
        std::string log = Dljob({"logs", "long"}).out;
        return log.find("[rank 0] started") != std::string::npos &&
               log.find("[rank 1] started") != std::string::npos;
      },
      30000))
      << Dljob({"logs", "long"}).out;
  EXPECT_EQ(Get("long").status.phase, JobPhase::kRunning);

  submit.Signal(SIGINT);
  EXPECT_EQ(submit.Wait(30000), 130) << ReadFile(work_.path() + "/err");
  DLJob job = Get("long");
  EXPECT_EQ(job.status.phase, JobPhase::kInterrupted);
  EXPECT_NE(Dljob({"logs", "long"}).out.find("[rank 1] started"), std::string::npos);
  std::istringstream in(ReadFile(pids));
  for (pid_t pid; in >> pid;) {
    EXPECT_TRUE(WaitFor([&] { return kill(pid, 0) != 0; }, 10000)) << "rank " << pid << " lives";
  }
}

TEST_F(LocalRunTest, AKilledSupervisorIsReportedAndTakesItsRanksWithIt) {
  std::string pids = work_.path() + "/pids";
  ::dljob::testing::Background submit(
      Background({"submit", "--local", "--name", "orphan", "--gpus", "1", "--image", "none", "--",
                  "/bin/sh", "-c", "echo $$ >> " + pids + "; exec sleep 600"}),
      Env(), work_.path() + "/out", work_.path() + "/err");
  ASSERT_TRUE(WaitFor([&] { return !ReadFile(pids).empty(); }, 30000));
  submit.Signal(SIGKILL);
  submit.Wait(10000);
  DLJob job = Get("orphan");
  EXPECT_EQ(job.status.phase, JobPhase::kFailed);
  bool lost = false;
  for (const Condition& c : job.status.conditions) lost |= c.reason == "SupervisorLost";
  EXPECT_TRUE(lost);
  pid_t rank = std::stoi(ReadFile(pids));
  EXPECT_TRUE(WaitFor([&] { return kill(rank, 0) != 0; }, 15000)) << "rank outlived dljob";
}

TEST_F(LocalRunTest, DeleteStopsARunningJob) {
  ::dljob::testing::Background submit(
      Background({"submit", "--local", "--name", "victim", "--gpus", "1", "--image", "none", "--",
                  "/bin/sh", "-c", "echo up; exec sleep 600"}),
      Env(), work_.path() + "/out", work_.path() + "/err");
  ASSERT_TRUE(WaitFor(
      [&] {
        return Dljob({"logs", "victim"}).out.find("up") != std::string::npos;
      },
      30000));
  CommandResult del = Dljob({"delete", "victim"});
  EXPECT_EQ(del.exit_code, 0) << del.err;
  EXPECT_EQ(submit.Wait(30000), 130);
  EXPECT_EQ(Dljob({"get", "victim"}).exit_code, 1);
}

TEST_F(LocalRunTest, ActiveDeadlineStopsAJob) {
  CommandResult r = SubmitScript("slow", 1, "exec sleep 600", {"--active-deadline", "2"});
  EXPECT_EQ(r.exit_code, 1);
  DLJob job = Get("slow");
  EXPECT_EQ(job.status.phase, JobPhase::kFailed);
  EXPECT_NE(r.err.find("DeadlineExceeded"), std::string::npos) << r.err;
}

TEST_F(LocalRunTest, FollowingLogsEndsWithTheJob) {
  ::dljob::testing::Background submit(
      Background({"submit", "--local", "--name", "follow", "--gpus", "1", "--image", "none", "--",
                  "/bin/sh", "-c", "for i in 1 2 3; do echo line $i; sleep 0.5; done"}),
      Env(), work_.path() + "/out", work_.path() + "/err");
  ASSERT_TRUE(WaitFor([&] { return Dljob({"get", "follow"}).exit_code == 0; }, 30000));
  CommandResult logs = Dljob({"logs", "follow", "-f", "--rank", "0"});
  EXPECT_EQ(logs.exit_code, 0);
  EXPECT_EQ(logs.out, "line 1\nline 2\nline 3\n");
  EXPECT_EQ(submit.Wait(30000), 0);
}

TEST_F(LocalRunTest, TrainsFashionMnistOnTwoRanks) {
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist") ||
      !std::filesystem::exists(BinDir() + "/dljob-train")) {
    GTEST_FAIL() << "needs dataset-fashion-mnist (scripts/dev/setup.sh) and dljob-train "
                    "(scripts/dev/build.sh)";
  }
  CommandResult r =
      Dljob({"submit", "--local", "--name", "fmnist", "--gpus", "2", "--image", "dljob/trainer:cpu",
             "--data", "hostPath:/usr/share/datasets/fashion-mnist:/data/fmnist", "--",
             "dljob-train", "--model=mnist_mlp", "--data_dir=/data/fmnist", "--num_batches=40",
             "--batch_size=32", "--display_every=10"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("total images/sec:"), std::string::npos) << r.out;
  DLJob job = Get("fmnist");
  EXPECT_EQ(job.status.phase, JobPhase::kSucceeded);
  ASSERT_TRUE(job.status.throughput.has_value());
  EXPECT_EQ(job.status.throughput->step, 40);
  EXPECT_GT(job.status.throughput->images_per_sec.value_or(0), 0);
  EXPECT_TRUE(job.status.throughput->loss.has_value());
}

TEST_F(LocalRunTest, AnEmptyDatasetDirectoryFailsWithTheTrainersOwnCause) {
  if (!std::filesystem::exists(BinDir() + "/dljob-train"))
    GTEST_FAIL() << "needs dljob-train: build it with scripts/dev/build.sh";
  CommandResult r = Dljob({"submit", "--local", "--name", "nodata", "--gpus", "2", "--image", "x",
                           "--backoff-limit", "0", "--data", "hostPath:" + work_.path() + ":/data",
                           "--", "dljob-train", "--data_dir=/data"});
  EXPECT_EQ(r.exit_code, 1);
  // The message names the cause first (not the hint printed after it), with the local path.
  EXPECT_NE(
      r.err.find("reason: BackoffLimitExceeded: mpirun exited with code 2; last error: [rank 0] "
                 "dljob-train: error: cannot read Fashion-MNIST from \"" +
                 work_.path()),
      std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("<stderr>:"), std::string::npos) << "mpirun tags leaked: " << r.err;
}

}  // namespace
}  // namespace dljob::testing

namespace dljob::testing {
namespace {

TEST_F(LocalRunTest, BenchPrintsTheScalingTableAsJsonAndAPlot) {
  if (!std::filesystem::exists(BinDir() + "/dljob-train"))
    GTEST_FAIL() << "needs dljob-train: build it with scripts/dev/build.sh";
  const std::string plot = work_.path() + "/scaling.svg";
  CommandResult r =
      Dljob({"bench", "--local", "--model", "mnist_mlp", "--gpus", "2,1", "--batch-size", "16",
             "--num-batches", "10", "--num-warmup-batches", "2", "-o", "json", "--plot", plot});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["runs"].size(), 2u) << r.out;
  EXPECT_EQ(j["model"], "mnist_mlp");
  EXPECT_EQ(j["runs"][0]["ranks"], 1);
  EXPECT_EQ(j["runs"][0]["scalingEfficiency"], 1.0);
  for (const nlohmann::json& run : j["runs"])
    EXPECT_GT(run["imagesPerSec"].get<double>(), 0) << run;
  EXPECT_NE(r.err.find("bench: mnist_mlp synthetic fused on 2 ranks ... "), std::string::npos)
      << r.err;
  EXPECT_NE(ReadFile(plot).find("<polyline"), std::string::npos);
  // The runs' records are removed afterwards.
  EXPECT_NE(Dljob({"list"}).err.find("No jobs found"), std::string::npos);
}

TEST_F(LocalRunTest, BenchFailureIsReportedPerRunAndExitsNonZero) {
  if (!std::filesystem::exists(BinDir() + "/dljob-train"))
    GTEST_FAIL() << "needs dljob-train: build it with scripts/dev/build.sh";
  CommandResult r = Dljob({"bench", "--local", "--model", "no_such_model", "--gpus", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("failed: "), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("no_such_model"), std::string::npos) << r.out;
}

// spec.checkpoint locally: the ranks see the resolved directory, Ctrl-C stops them with a
// checkpoint of the step they reached (dljob-train on SIGTERM), and the same job submitted again
// resumes there.
std::string CheckpointJob(const std::string& ckpt, int64_t num_batches) {
  return R"(apiVersion: dljob.io/v1alpha1
kind: DLJob
metadata: {name: ckpt}
spec:
  image: dljob/trainer:cpu
  command: [dljob-train, --model=mnist_cnn, --data_dir=/data/fmnist, --batch_size=16,
            --display_every=1, --eval=false, --num_warmup_batches=0, --num_batches=)" +
         std::to_string(num_batches) + R"(]
  gpus: 2
  data: [{name: fmnist, source: "hostPath:/usr/share/datasets/fashion-mnist", mountPath: /data/fmnist}]
  checkpoint: {source: "hostPath:)" +
         ckpt + R"(", everySteps: 1000000}
  runPolicy: {backoffLimit: 0}
)";
}

TEST_F(LocalRunTest, ACheckpointedJobStoppedAndSubmittedAgainResumes) {
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist") ||
      !std::filesystem::exists(BinDir() + "/dljob-train")) {
    GTEST_FAIL() << "needs dataset-fashion-mnist (scripts/dev/setup.sh) and dljob-train "
                    "(scripts/dev/build.sh)";
  }
  const std::string ckpt = work_.path() + "/ckpt";  // made by dljob
  const std::string first = work_.path() + "/first.yaml";
  std::ofstream(first) << CheckpointJob(ckpt, 1000000);
  ::dljob::testing::Background submit(Background({"submit", "--local", "-f", first}), Env(),
                                      work_.path() + "/out", work_.path() + "/err");
  ASSERT_TRUE(WaitFor(
      [&] {
        CommandResult r = Dljob({"get", "ckpt", "-o", "json"});
        DecodeResult d = DecodeJson(r.out);
        return r.exit_code == 0 && d.ok() && d.job.status.throughput &&
               d.job.status.throughput->step.value_or(0) >= 3;
      },
      120000))
      << ReadFile(work_.path() + "/err") << Dljob({"logs", "ckpt"}).out;
  submit.Signal(SIGINT);
  EXPECT_EQ(submit.Wait(60000), 130) << ReadFile(work_.path() + "/err");
  EXPECT_EQ(Get("ckpt").status.phase, JobPhase::kInterrupted);
  std::string log = Dljob({"logs", "ckpt"}).out;
  size_t at = log.find("[rank 0] Stopping at step ");
  ASSERT_NE(at, std::string::npos) << log;
  const int64_t k = std::stoll(log.substr(at + std::string("[rank 0] Stopping at step ").size()));
  EXPECT_NE(log.find("checkpoint of step " + std::to_string(k) + " saved in \"" + ckpt + "\""),
            std::string::npos)
      << log;
  char manifest[64];
  std::snprintf(manifest, sizeof manifest, "/ckpt-%09lld.manifest", static_cast<long long>(k));
  EXPECT_TRUE(std::filesystem::exists(ckpt + manifest)) << ckpt + manifest;

  ASSERT_EQ(Dljob({"delete", "ckpt"}).exit_code, 0);
  const std::string again = work_.path() + "/again.yaml";
  std::ofstream(again) << CheckpointJob(ckpt, k + 2);
  CommandResult r = Dljob({"submit", "--local", "-f", again});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Resuming from the checkpoint of step " + std::to_string(k) + " "),
            std::string::npos)
      << r.out;
  DLJob job = Get("ckpt");
  EXPECT_EQ(job.status.phase, JobPhase::kSucceeded);
  ASSERT_TRUE(job.status.throughput.has_value());
  EXPECT_EQ(job.status.throughput->step, k + 2);
}

}  // namespace
}  // namespace dljob::testing
