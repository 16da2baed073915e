// The plan (plan.h): which axes run for which job, and what a trial's job looks like.
#include "cli/advise/plan.h"

#include <gtest/gtest.h>

#include "jobs/codec.h"
#include "jobs/defaults.h"

namespace dljob::advise {
namespace {

DLJob Job(const std::string& data_source = "hostPath:/usr/share/datasets/fashion-mnist",
          std::vector<std::string> extra = {}) {
  DLJob j;
  j.metadata.name = "mnist";
  j.spec.image = "dljob/trainer:cpu";
  j.spec.command = {"dljob-train", "--model=mnist_cnn", "--data_name=fashion-mnist",
                    "--data_dir=/data/fashion-mnist", "--num_epochs=1"};
  j.spec.command.insert(j.spec.command.end(), extra.begin(), extra.end());
  j.spec.gpus = 2;
  j.spec.data.push_back({"fashion-mnist", data_source, "/data/fashion-mnist", {}, {}, {}});
  ApplyDefaults(j);
  return j;
}

TEST(PlanAdvice, ThreadsGridPerMachine) {
  struct Case {
    int cpus, ranks;
    std::vector<int> threads;
  };
  for (const Case& c : std::vector<Case>{{2, 2, {1, 2}},
                                         {2, 1, {1, 2}},
                                         {1, 2, {1}},
                                         {16, 2, {1, 2, 4, 8, 16}},
                                         {96, 8, {1, 2, 4, 8, 16, 24}},
                                         {12, 1, {1, 2, 4, 8, 12}}}) {
    AdviseOptions o;
    o.ranks = c.ranks;
    Result<AdvisePlan> p = PlanAdvice(Job(), o, c.cpus, true, "");
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->threads, c.threads) << c.cpus << " cpus, " << c.ranks << " ranks";
  }
}

TEST(PlanAdvice, AxesFollowTheJob) {
  AdviseOptions o;
  Result<AdvisePlan> local = PlanAdvice(Job(), o, 2, true, "");
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->ranks, 2);
  EXPECT_TRUE(local->loader_threads.empty());  // fashion-mnist has no loader threads
  EXPECT_NE(local->loader_note.find("fashion-mnist"), std::string::npos);
  EXPECT_EQ(local->data_paths, std::vector<std::string>{kDataLocal});
  EXPECT_EQ(local->memory_fractions, (std::vector<double>{0.9, 0.75, 0.6, 0.45, 0.3}));

  Result<AdvisePlan> oss = PlanAdvice(Job("oss://bucket/fmnist/shards"), o, 2, false, "no cgroup");
  ASSERT_TRUE(oss.ok());
  EXPECT_EQ(oss->data_paths, (std::vector<std::string>{kDataCache, kDataStore}));
  EXPECT_TRUE(oss->memory_fractions.empty());
  EXPECT_EQ(oss->memory_note, "not measured: no cgroup");

  DLJob imagenet_job = Job("nas://nfs/imagenet");
  imagenet_job.spec.command[2] = "--data_name=imagenet";
  Result<AdvisePlan> imagenet = PlanAdvice(imagenet_job, o, 4, true, "");
  ASSERT_TRUE(imagenet.ok());
  EXPECT_EQ(imagenet->loader_threads, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(imagenet->data_paths, (std::vector<std::string>{kDataCache, kDataStore}));
}

TEST(PlanAdvice, BadOptionsNameTheFlag) {
  auto error = [](AdviseOptions o) {
    Result<AdvisePlan> p = PlanAdvice(Job(), o, 2, true, "");
    return p.ok() ? std::string("ok") : p.status().message();
  };
  AdviseOptions o;
  o.threads = {0, 2};
  EXPECT_NE(error(o).find("--threads"), std::string::npos);
  o = {};
  o.memory_fractions = {1.5};
  EXPECT_NE(error(o).find("--memory-fractions"), std::string::npos);
  o = {};
  o.data_paths = {"store"};
  EXPECT_NE(error(o).find("--data: \"store\" does not apply"), std::string::npos);
  o = {};
  o.tolerance = 2;
  EXPECT_NE(error(o).find("--tolerance"), std::string::npos);
}

TEST(TrialJob, ShortSafeAndSet) {
  DLJob job = Job("hostPath:/usr/share/datasets/fashion-mnist", {"--checkpoint_dir=/ckpt"});
  job.spec.checkpoint = CheckpointSpec{"hostPath:/tmp/ckpt", {}, {}, {}, {}};
  job.spec.env.push_back({"OMP_NUM_THREADS", "8"});
  AdviseOptions o;
  o.num_batches = 40;
  Result<AdvisePlan> p = PlanAdvice(job, o, 2, true, "");
  ASSERT_TRUE(p.ok());
  TrialSetting s{2, 3, kDataLocal, std::nullopt};
  DLJob t = TrialJob(job, *p, o, s, 7);
  EXPECT_EQ(t.metadata.name, "advise-trial-7");
  EXPECT_FALSE(t.spec.checkpoint.has_value());
  EXPECT_EQ(t.spec.run_policy.backoff_limit, 0);
  EXPECT_EQ(t.spec.command, (std::vector<std::string>{
                                "dljob-train", "--model=mnist_cnn", "--data_name=fashion-mnist",
                                "--data_dir=/data/fashion-mnist", "--num_batches=40",
                                "--display_every=4", "--eval=false", "--loader_threads=3"}));
  ASSERT_EQ(t.spec.env.size(), 1u);
  EXPECT_EQ(t.spec.env[0].value, "2");
  EXPECT_EQ(t.spec.data, job.spec.data);
}

TEST(TrialJob, DataPaths) {
  DLJob job = Job("oss://bucket/fmnist/shards");
  AdviseOptions o;
  o.cache_path = "/var/cache/dljob";
  Result<AdvisePlan> p = PlanAdvice(job, o, 2, true, "");
  ASSERT_TRUE(p.ok());
  DLJob store = TrialJob(job, *p, o, {1, std::nullopt, kDataStore, std::nullopt}, 1);
  EXPECT_TRUE(store.spec.data.empty());  // the workload reads the bucket itself
  EXPECT_EQ(store.spec.command[3], "--data_dir=oss://bucket/fmnist/shards");
  DLJob cache = TrialJob(job, *p, o, {1, std::nullopt, kDataCache, std::nullopt}, 2);
  ASSERT_EQ(cache.spec.data.size(), 1u);  // the local runner fetches oss:// volumes first
  EXPECT_EQ(cache.spec.command[3], "--data_dir=/data/fashion-mnist");

  DLJob nas = Job("nas://nfs.example/exports/fmnist");
  nas.spec.data[0].cache = CacheSpec{"LocalSSD", "/mnt/ssd"};
  DLJob nas_store = TrialJob(nas, *p, o, {1, std::nullopt, kDataStore, std::nullopt}, 3);
  EXPECT_FALSE(nas_store.spec.data[0].cache.has_value());
  nas.spec.data[0].cache.reset();
  DLJob nas_cache = TrialJob(nas, *p, o, {1, std::nullopt, kDataCache, std::nullopt}, 4);
  EXPECT_EQ(nas_cache.spec.data[0].cache, (CacheSpec{"LocalSSD", "/var/cache/dljob"}));
}

TEST(Flags, SetAndRemoveBothForms) {
  std::vector<std::string> c = {"prog", "--a=1", "--b", "2", "--eval", "--c=3"};
  EXPECT_EQ(FlagValue(c, "--a"), "1");
  EXPECT_EQ(FlagValue(c, "--b"), "2");
  EXPECT_EQ(FlagValue(c, "--d"), std::nullopt);
  EXPECT_EQ(WithFlag(c, "--b", "5")[3], "5");
  EXPECT_EQ(WithFlag(c, "--d", "4").back(), "--d=4");
  EXPECT_EQ(WithoutFlag(c, "--b"), (std::vector<std::string>{"prog", "--a=1", "--eval", "--c=3"}));
  EXPECT_EQ(WithoutFlag(c, "--eval"),
            (std::vector<std::string>{"prog", "--a=1", "--b", "2", "--c=3"}));
  EXPECT_EQ(WithoutFlag({"--a=1"}, "--a"), std::vector<std::string>{"--a=1"});  // argv[0] stays
}

}  // namespace
}  // namespace dljob::advise
