// jobs/spec_revision.h: which fields the pods' revision covers, and that it follows them alone.
#include "jobs/spec_revision.h"

#include <gtest/gtest.h>

#include "jobs/codec.h"
#include "jobs/defaults.h"

namespace dljob {
namespace {

DLJob Example() {
  DecodeResult d = ReadJobFile("examples/resnet-job.yaml");
  EXPECT_TRUE(d.ok()) << JoinFieldErrors(d.errors);
  ApplyDefaults(d.job);
  return d.job;
}

TEST(SpecRevision, ShapesPodsLeavesOutWhatIsReadEveryPass) {
  for (const char* path :
       {"spec.runPolicy", "spec.runPolicy.backoffLimit", "spec.runPolicy.suspend",
        "spec.scheduling.queue", "spec.scheduling.priority"}) {
    EXPECT_FALSE(ShapesPods(path)) << path;
  }
  for (const char* path : {"spec.image", "spec.env", "spec.gpus", "spec.scheduling",
                           "spec.scheduling.nodeSelector", "spec.runPolicyX", "spec.checkpoint"}) {
    EXPECT_TRUE(ShapesPods(path)) << path;
  }
}

TEST(SpecRevision, FollowsWhatShapesThePodsAndNothingElse) {
  const DLJob job = Example();
  const std::string revision = PodSpecRevision(job);
  EXPECT_EQ(revision.size(), 16u);
  EXPECT_EQ(PodSpecRevision(job), revision);  // stable

  DLJob same = job;
  same.spec.run_policy.backoff_limit = 9;
  same.spec.run_policy.suspend = true;
  same.spec.scheduling.queue = "team-b";
  same.spec.scheduling.priority = 5;
  EXPECT_EQ(PodSpecRevision(same), revision);

  DLJob image = job;
  image.spec.image += "-v2";
  EXPECT_NE(PodSpecRevision(image), revision);
  DLJob env = job;
  env.spec.env.push_back({"LR", "0.1"});
  EXPECT_NE(PodSpecRevision(env), revision);
  DLJob placed = job;
  placed.spec.scheduling.node_selector["pool"] = "a100";
  EXPECT_NE(PodSpecRevision(placed), revision);
}

TEST(SpecRevision, AnElasticJobsSizeIsTheQueuesNotARevision) {
  DLJob job = Example();
  job.spec.elastic = ElasticSpec{*job.spec.gpus_per_worker, *job.spec.gpus};
  const std::string revision = PodSpecRevision(job);
  DLJob smaller = job;
  smaller.spec.gpus = *job.spec.gpus_per_worker;  // a run the queue gave one worker
  EXPECT_EQ(PodSpecRevision(smaller), revision);
  DLJob range = job;
  range.spec.elastic->min_gpus = *job.spec.gpus;
  EXPECT_NE(PodSpecRevision(range), revision);
  DLJob rigid = job;
  rigid.spec.elastic.reset();
  rigid.spec.gpus = *job.spec.gpus_per_worker;
  EXPECT_NE(PodSpecRevision(rigid), PodSpecRevision(Example()));
}

}  // namespace
}  // namespace dljob
