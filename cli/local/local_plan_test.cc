#include "cli/local/local_plan.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "jobs/defaults.h"

namespace dljob {
namespace {

LocalMachine Machine(int gpus = 0, int cpus = 2) {
  LocalMachine m;
  m.gpus = gpus;
  m.cpus = cpus;
  m.is_root = true;
  m.self_dir = "/opt/dljob/bin";
  m.path_dirs = {"/usr/local/bin", "/usr/bin"};
  m.pvc_root = "/var/dljob/pvc";
  m.inherited_env = {{"PATH", "/usr/bin"}, {"HOME", "/root"}};
  std::set<std::string> programs = {"/opt/dljob/bin/dljob-train", "/usr/bin/python3"};
  m.is_executable = [programs](const std::string& p) { return programs.count(p) > 0; };
  return m;
}

DLJob Job() {
  DLJob job;
  job.metadata.name = "mnist";
  job.spec.image = "img";
  job.spec.gpus = 2;
  job.spec.command = {"dljob-train", "--data_dir=/data/fmnist", "/data/fmnist/x", "/data/fmnistx"};
  job.spec.data = {{"fashion-mnist", "hostPath:/usr/share/datasets/fashion-mnist", "/data/fmnist",
                    std::nullopt, std::nullopt, std::nullopt}};
  job.spec.env = {{"TRAIN_DIR", "/data/fmnist/train"}};
  ApplyDefaults(job);
  return job;
}

TEST(PlanLocalRun, RunsOneRankPerGpuOnCpuWhenThereIsNoGpu) {
  Result<LocalPlan> plan = PlanLocalRun(Job(), Machine());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->ranks, 2);
  EXPECT_EQ(plan->device, "cpu");
  ASSERT_EQ(plan->notices.size(), 1u);
  EXPECT_EQ(plan->notices[0], "no GPU on this machine: the 2 ranks run on CPU");
  EXPECT_EQ(plan->env.at("DLJOB_DEVICE"), "cpu");
  EXPECT_EQ(plan->env.at("OMP_NUM_THREADS"), "1");  // 2 cores / 2 ranks
}

TEST(PlanLocalRun, BuildsTheMpirunCommandAndRewritesMountPaths) {
  Result<LocalPlan> plan = PlanLocalRun(Job(), Machine());
  ASSERT_TRUE(plan.ok());
  const std::vector<std::string> want = {
      "mpirun",
      "--allow-run-as-root",
      "--tag-output",
      "--bind-to",
      "none",
      "--mca",
      "btl",
      "self,vader",
      "--mca",
      "oob_tcp_if_include",
      "lo",
      "-np",
      "2",
      "/opt/dljob/bin/dljob-train",  // found next to dljob first
      "--data_dir=/usr/share/datasets/fashion-mnist",
      "/usr/share/datasets/fashion-mnist/x",
      "/data/fmnistx"};  // a sibling path that only shares the prefix is left alone
  EXPECT_EQ(plan->argv, want);
  EXPECT_EQ(plan->env.at("TRAIN_DIR"), "/usr/share/datasets/fashion-mnist/train");
  EXPECT_EQ(plan->env.at("DLJOB_DATA_FASHION_MNIST"), "/usr/share/datasets/fashion-mnist");
  EXPECT_EQ(plan->env.at("HOME"), "/root");  // the caller's environment is inherited
}

TEST(PlanLocalRun, OversubscribesOnlyWhenRanksExceedCores) {
  DLJob job = Job();
  job.spec.gpus = 4;
  Result<LocalPlan> plan = PlanLocalRun(job, Machine(0, 2));
  ASSERT_TRUE(plan.ok());
  EXPECT_NE(std::find(plan->argv.begin(), plan->argv.end(), "--oversubscribe"), plan->argv.end());
  plan = PlanLocalRun(Job(), Machine(0, 8));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(std::find(plan->argv.begin(), plan->argv.end(), "--oversubscribe"), plan->argv.end());
  EXPECT_EQ(plan->env.at("OMP_NUM_THREADS"), "4");
}

TEST(PlanLocalRun, JobEnvOverridesTheThreadDefault) {
  DLJob job = Job();
  job.spec.env.push_back({"OMP_NUM_THREADS", "3"});
  EXPECT_EQ(PlanLocalRun(job, Machine())->env.at("OMP_NUM_THREADS"), "3");
}

TEST(PlanLocalRun, UsesGpusWhenThereAreEnoughAndRefusesWhenTooFew) {
  Result<LocalPlan> plan = PlanLocalRun(Job(), Machine(4));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->device, "cuda");
  EXPECT_TRUE(plan->notices.empty());
  plan = PlanLocalRun(Job(), Machine(1));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().message(),
            "spec.gpus: 2 GPUs requested but this machine has 1; lower spec.gpus or use a cluster");
}

TEST(PlanLocalRun, ResolvesPvcUnderThePvcRoot) {
  DLJob job = Job();
  job.spec.data[0].source = "pvc:datasets/fashion";
  Result<LocalPlan> plan = PlanLocalRun(job, Machine());
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->volumes[0].local_path, "/var/dljob/pvc/datasets/fashion");
}

TEST(PlanLocalRun, FetchesAnOssSourceIntoTheCacheAndRewritesToIt) {
  DLJob job = Job();
  job.spec.data[0].source = "oss://bucket/fmnist";
  LocalMachine m = Machine();
  m.cache_root = "/state/dljob/cache";
  Result<LocalPlan> plan = PlanLocalRun(job, m);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->fetches.size(), 1u);
  const DataFetch& f = plan->fetches[0];
  EXPECT_EQ(f.field, "spec.data[0]");
  EXPECT_EQ(f.from, "oss://bucket/fmnist");
  EXPECT_EQ(f.to.rfind("/state/dljob/cache/bucket/fmnist-", 0), 0u) << f.to;
  EXPECT_EQ(plan->volumes[0].local_path, f.to);
  EXPECT_EQ(plan->argv[plan->argv.size() - 3], "--data_dir=" + f.to);
  EXPECT_EQ(plan->env["DLJOB_DATA_FASHION_MNIST"], f.to);
}

TEST(PlanLocalRun, HostPathWithoutCacheNeedsNoFetch) {
  Result<LocalPlan> plan = PlanLocalRun(Job(), Machine());
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->fetches.empty());
}

TEST(PlanLocalRun, NamesAMissingProgram) {
  DLJob job = Job();
  job.spec.command = {"no-such-trainer"};
  Result<LocalPlan> plan = PlanLocalRun(job, Machine());
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().message(),
            "spec.command[0]: program \"no-such-trainer\" not found next to dljob "
            "(/opt/dljob/bin) or on PATH");
  job.spec.command = {"python3", "train.py"};
  EXPECT_EQ(PlanLocalRun(job, Machine())->argv[13], "/usr/bin/python3");  // then PATH
}

// spec.checkpoint, one row per kind of source: the directory here, the environment every rank
// gets, dljob-train's flags, and the job's own mentions of the mountPath rewritten to it.
struct CheckpointCase {
  const char* name;
  CheckpointSpec checkpoint;
  std::string local_path;  // "" when the plan is refused
  std::string error;       // the refusal
};

class PlanCheckpoint : public ::testing::TestWithParam<CheckpointCase> {};

TEST_P(PlanCheckpoint, ResolvesItLikeADataVolumeAndTellsTheWorkload) {
  const CheckpointCase& c = GetParam();
  DLJob job = Job();
  job.spec.checkpoint = c.checkpoint;
  job.spec.command.push_back("--note=/ckpt/run-1");
  ApplyDefaults(job);
  LocalMachine m = Machine();
  m.mounts = {{"nas.example.com:/export", "/mnt/nas", "nfs4"}};
  Result<LocalPlan> plan = PlanLocalRun(job, m);
  if (c.local_path.empty()) {
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().message().rfind(c.error, 0), 0u) << plan.status().message();
    return;
  }
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_TRUE(plan->checkpoint.has_value());
  EXPECT_EQ(plan->checkpoint->local_path, c.local_path);
  EXPECT_EQ(plan->checkpoint->mount_path, "/ckpt");
  EXPECT_EQ(plan->env.at("DLJOB_CHECKPOINT_DIR"), c.local_path);
  EXPECT_EQ(plan->env.at("DLJOB_CHECKPOINT_EVERY_STEPS"), "50");
  EXPECT_EQ(plan->env.at("DLJOB_CHECKPOINT_KEEP"), "3");
  EXPECT_EQ(plan->env.count("DLJOB_CHECKPOINT_EVERY_SECONDS"), 0u);
  const std::vector<std::string> tail(plan->argv.end() - 4, plan->argv.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"--note=" + c.local_path + "/run-1",
                                            "--checkpoint_dir=" + c.local_path,
                                            "--checkpoint_every=50", "--checkpoint_keep=3"}));
  EXPECT_TRUE(plan->fetches.empty()) << "a checkpoint directory is written, never fetched";
}

const CheckpointCase kCheckpointCases[] = {
    {"HostPath",
     {"hostPath:/scratch/ckpt", "/ckpt", 50, std::nullopt, std::nullopt},
     "/scratch/ckpt",
     ""},
    {"PvcUnderThePvcRoot",
     {"pvc:ckpt-claim/mnist", "/ckpt", 50, std::nullopt, std::nullopt},
     "/var/dljob/pvc/ckpt-claim/mnist",
     ""},
    {"NasWhereItIsMounted",
     {"nas://nas.example.com/export/ckpt", "/ckpt", 50, std::nullopt, std::nullopt},
     "/mnt/nas/ckpt",
     ""},
    {"NasNotMounted",
     {"nas://other.example.com/ckpt", "/ckpt", 50, std::nullopt, std::nullopt},
     "",
     "spec.checkpoint.source: nas://other.example.com/ckpt is not mounted on this machine"},
    {"OssIsRefused",
     {"oss://bucket/ckpt", "/ckpt", 50, std::nullopt, std::nullopt},
     "",
     "spec.checkpoint.source: oss:// cannot hold checkpoints"},
};

INSTANTIATE_TEST_SUITE_P(Sources, PlanCheckpoint, ::testing::ValuesIn(kCheckpointCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(PlanLocalRun, OtherProgramsGetTheCheckpointEnvironmentOnly) {
  DLJob job = Job();
  job.spec.command = {"python3", "train.py"};
  job.spec.checkpoint =
      CheckpointSpec{"hostPath:/scratch/ckpt", std::nullopt, std::nullopt, 60, std::nullopt};
  ApplyDefaults(job);
  Result<LocalPlan> plan = PlanLocalRun(job, Machine());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->argv.back(), "train.py");
  EXPECT_EQ(plan->env.at("DLJOB_CHECKPOINT_DIR"), "/scratch/ckpt");
  EXPECT_EQ(plan->env.at("DLJOB_CHECKPOINT_EVERY_SECONDS"), "60");
  EXPECT_EQ(plan->env.count("DLJOB_CHECKPOINT_EVERY_STEPS"), 0u);
  EXPECT_FALSE(PlanLocalRun(Job(), Machine())->checkpoint.has_value());
}

TEST(RewriteMountedPath, OnlyWholePathComponents) {
  EXPECT_EQ(RewriteMountedPath("/data", "/data", "/l"), "/l");
  EXPECT_EQ(RewriteMountedPath("/data/", "/data/", "/l"), "/l/");
  EXPECT_EQ(RewriteMountedPath("/data/a/b", "/data", "/l"), "/l/a/b");
  EXPECT_EQ(RewriteMountedPath("/database", "/data", "/l"), "/database");
  EXPECT_EQ(RewriteMountedPath("--dir=/data/a", "/data", "/l"), "--dir=/l/a");
  EXPECT_EQ(RewriteMountedPath("x/data/a", "/data", "/l"), "x/data/a");
}

TEST(DataEnvName, UpperCasesAndReplaces) {
  EXPECT_EQ(DataEnvName("fashion-mnist"), "DLJOB_DATA_FASHION_MNIST");
}

}  // namespace
}  // namespace dljob
