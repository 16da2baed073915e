#include "jobs/defaults.h"

#include <gtest/gtest.h>

#include "jobs/codec.h"

namespace dljob {
namespace {

TEST(Defaults, FillsEveryUnsetField) {
  DLJob j;
  j.spec.gpus = 16;
  j.spec.data.push_back(DataVolume{"d", "pvc:c", "/d", std::nullopt, std::nullopt, std::nullopt});
  ApplyDefaults(j);
  EXPECT_EQ(j.metadata.namespace_, "default");
  EXPECT_EQ(j.spec.gpus_per_worker, 8);
  EXPECT_EQ(j.spec.mpi.implementation, "OpenMPI");
  EXPECT_EQ(j.spec.mpi.slots_per_worker, 8);
  EXPECT_EQ(j.spec.mpi.ssh_port, 2222);
  EXPECT_EQ(j.spec.data[0].read_only, true);
  EXPECT_EQ(j.spec.run_policy.backoff_limit, 3);
  EXPECT_EQ(j.spec.run_policy.clean_pod_policy, "Running");
  EXPECT_EQ(j.spec.run_policy.suspend, false);
  EXPECT_EQ(j.spec.scheduling.queue, "default");
  EXPECT_EQ(j.spec.scheduling.priority, 0);
  EXPECT_EQ(j.spec.scheduling.topology, "Pack");
  EXPECT_FALSE(j.spec.run_policy.active_deadline_seconds.has_value());
}

TEST(Defaults, SmallJobGetsOneWorker) {
  DLJob j;
  j.spec.gpus = 2;
  ApplyDefaults(j);
  EXPECT_EQ(j.spec.gpus_per_worker, 2);
  EXPECT_EQ(j.spec.mpi.slots_per_worker, 2);
}

TEST(Defaults, KeepsWhatTheUserWrote) {
  DLJob j;
  j.metadata.namespace_ = "team-a";
  j.spec.gpus = 16;
  j.spec.gpus_per_worker = 4;
  j.spec.mpi.slots_per_worker = 2;
  j.spec.run_policy.backoff_limit = 0;
  j.spec.data.push_back(DataVolume{"d", "pvc:c", "/d", false, std::nullopt, std::nullopt});
  ApplyDefaults(j);
  EXPECT_EQ(j.metadata.namespace_, "team-a");
  EXPECT_EQ(j.spec.gpus_per_worker, 4);
  EXPECT_EQ(j.spec.mpi.slots_per_worker, 2);
  EXPECT_EQ(j.spec.run_policy.backoff_limit, 0);
  EXPECT_EQ(j.spec.data[0].read_only, false);
}

TEST(Defaults, CheckpointGetsItsMountPathIntervalAndKeep) {
  DLJob j;
  j.spec.checkpoint =
      CheckpointSpec{"pvc:ckpt", std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  ApplyDefaults(j);
  EXPECT_EQ(j.spec.checkpoint,
            (CheckpointSpec{"pvc:ckpt", "/dljob/checkpoint", 500, std::nullopt, 3}));
  // A time interval alone is not joined by the default step interval.
  DLJob timed;
  timed.spec.checkpoint = CheckpointSpec{"pvc:ckpt", std::nullopt, std::nullopt, 600, 1};
  ApplyDefaults(timed);
  EXPECT_EQ(timed.spec.checkpoint,
            (CheckpointSpec{"pvc:ckpt", "/dljob/checkpoint", std::nullopt, 600, 1}));
  DLJob none;
  ApplyDefaults(none);
  EXPECT_FALSE(none.spec.checkpoint.has_value()) << "no checkpoint unless asked for";
}

TEST(Defaults, NothingDerivedFromInvalidGpus) {
  for (std::optional<int64_t> gpus :
       {std::optional<int64_t>(), std::optional<int64_t>(0), std::optional<int64_t>(-4)}) {
    DLJob j;
    j.spec.gpus = gpus;
    ApplyDefaults(j);
    EXPECT_FALSE(j.spec.gpus_per_worker.has_value());
    EXPECT_FALSE(j.spec.mpi.slots_per_worker.has_value());
  }
}

TEST(Defaults, Idempotent) {
  DecodeResult r = ReadJobFile("examples/mnist-job.yaml");
  ASSERT_TRUE(r.ok()) << JoinFieldErrors(r.errors);
  DLJob once = r.job;
  ApplyDefaults(once);
  DLJob twice = once;
  ApplyDefaults(twice);
  EXPECT_EQ(once, twice);
  EXPECT_NE(once, r.job);
  EXPECT_EQ(once.spec.run_policy.backoff_limit, 0);  // the example's own value
}

}  // namespace
}  // namespace dljob

namespace dljob {
namespace {

TEST(DefaultGpusPerWorker, SplitsIntoEqualWorkersThatFitANode) {
  EXPECT_EQ(DefaultGpusPerWorker(1), 1);
  EXPECT_EQ(DefaultGpusPerWorker(4), 4);
  EXPECT_EQ(DefaultGpusPerWorker(8), 8);
  EXPECT_EQ(DefaultGpusPerWorker(16), 8);
  EXPECT_EQ(DefaultGpusPerWorker(12), 6);
  EXPECT_EQ(DefaultGpusPerWorker(7), 7);
  EXPECT_EQ(DefaultGpusPerWorker(11), 1);
  EXPECT_EQ(DefaultGpusPerWorker(1024), 8);
}

TEST(ApplyDefaults, ElasticSetsGpusToMaxAndWorkersThatDivideTheRange) {
  struct Case {
    int64_t min, max, gpus, per_worker;
  };
  for (const Case& c : {Case{8, 32, 32, 8}, Case{4, 32, 32, 4}, Case{6, 12, 12, 6},
                        Case{2, 16, 16, 2}, Case{3, 9, 9, 3}, Case{16, 16, 16, 8}}) {
    DLJob j;
    j.spec.elastic = ElasticSpec{c.min, c.max};
    ApplyDefaults(j);
    EXPECT_EQ(j.spec.gpus, c.gpus) << c.min << ".." << c.max;
    EXPECT_EQ(j.spec.gpus_per_worker, c.per_worker) << c.min << ".." << c.max;
    EXPECT_EQ(j.spec.elastic, (ElasticSpec{c.min, c.max}));  // the range itself is the user's
  }
}

TEST(ApplyDefaults, ElasticKeepsWrittenGpusAndNothingFromAnIncompleteRange) {
  DLJob j;
  j.spec.gpus = 16;
  j.spec.elastic = ElasticSpec{8, 32};
  ApplyDefaults(j);
  EXPECT_EQ(j.spec.gpus, 16);  // validation reports it; defaulting never overwrites
  DLJob k;
  k.spec.elastic = ElasticSpec{std::nullopt, std::nullopt};
  ApplyDefaults(k);
  EXPECT_FALSE(k.spec.gpus);
  EXPECT_FALSE(k.spec.gpus_per_worker);
}

TEST(ApplyDefaults, AnOddGpuCountStillValidates) {
  DLJob j;
  j.spec.gpus = 12;
  ApplyDefaults(j);
  EXPECT_EQ(j.spec.gpus_per_worker, 6);
  EXPECT_EQ(j.spec.mpi.slots_per_worker, 6);
}

}  // namespace
}  // namespace dljob
