// The Kueue-shaped plan (queue_shape.h): Kueue's baseline generator in DLJobs and DLQueues.
#include "bench/queue_shape.h"

#include <map>
#include <set>

#include <gtest/gtest.h>

namespace dljob::bench {
namespace {

TEST(QueueShapeTest, PlansKueuesFifteenThousandJobsOverSixtySeconds) {
  const QueueShape shape;
  const std::vector<PlannedJob> jobs = Plan(shape);
  ASSERT_EQ(jobs.size(), 15'000u);
  std::set<std::string> names;
  std::map<std::string, int> per_queue;
  std::map<int, int> per_size;
  for (size_t i = 0; i < jobs.size(); ++i) {
    names.insert(jobs[i].name);
    ++per_queue[jobs[i].queue];
    ++per_size[jobs[i].size];
    if (i > 0) {
      EXPECT_LE(jobs[i - 1].submit_ms, jobs[i].submit_ms) << i;
    }
  }
  EXPECT_EQ(names.size(), jobs.size());
  ASSERT_EQ(per_queue.size(), 30u);
  for (const auto& [queue, count] : per_queue) {
    EXPECT_EQ(count, 500) << queue;
  }
  EXPECT_EQ(per_size, (std::map<int, int>{{0, 10'500}, {1, 3'000}, {2, 1'500}}));
  EXPECT_EQ(jobs.front().submit_ms, 0);
  EXPECT_EQ(jobs.back().submit_ms, 49 * 1200);  // the 50th large job of each queue
  for (const PlannedJob& job : jobs) {
    EXPECT_LE(job.name.size(), 63u) << job.name;
  }
}

TEST(QueueShapeTest, ScalingKeepsAtLeastOneJobPerClass) {
  const QueueShape shape = Scaled(QueueShape{}, 0.01);
  EXPECT_EQ(shape.classes[0].count, 4);  // 3.5 rounds away from zero
  EXPECT_EQ(shape.classes[1].count, 1);
  EXPECT_EQ(shape.classes[2].count, 1);  // 0.5 → 1
  EXPECT_EQ(Plan(Scaled(QueueShape{}, 0.001)).size(), 30u * 3);
  EXPECT_EQ(shape.classes[2].interval_ms, 1200);
}

TEST(QueueShapeTest, ObjectsNameTheirQueueCohortSizeAndPriority) {
  const QueueShape shape;
  const nlohmann::json queue = QueueObject(shape, 4, 5);
  EXPECT_EQ(queue["metadata"]["name"], "cohort-4-queue-5");
  EXPECT_EQ(queue["spec"]["cohort"], "cohort-4");
  EXPECT_EQ(queue["spec"]["quotas"][0]["nominal"], 20);
  EXPECT_EQ(queue["spec"]["quotas"][0]["borrowingLimit"], 100);

  const PlannedJob large{"cohort-0-queue-1-large-7", "cohort-0-queue-1", 2, 8400};
  const nlohmann::json job = JobObject(shape, large, "kueue");
  EXPECT_EQ(job["metadata"]["namespace"], "kueue");
  EXPECT_EQ(job["metadata"]["labels"]["bench.dljob.io/size"], "large");
  EXPECT_EQ(job["spec"]["gpus"], 20);
  EXPECT_EQ(job["spec"]["gpusPerWorker"], 20);  // one worker
  EXPECT_EQ(job["spec"]["scheduling"]["queue"], "cohort-0-queue-1");
  EXPECT_EQ(job["spec"]["scheduling"]["priority"], 200);
}

TEST(QueueShapeTest, SummarizesEachClassApart) {
  const QueueShape shape;
  const std::vector<int> sizes = {0, 0, 0, 0, 2};
  const std::vector<double> seconds = {4, 1, 3, 2, 10};
  const std::vector<ClassSummary> s = SummarizeByClass(shape, sizes, seconds);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].name, "small");
  EXPECT_EQ(s[0].jobs, 4);
  EXPECT_DOUBLE_EQ(s[0].mean, 2.5);
  EXPECT_DOUBLE_EQ(s[0].p50, 3);  // Quantile: element floor(q·n) of the sorted times
  EXPECT_DOUBLE_EQ(s[0].max, 4);
  EXPECT_EQ(s[1].jobs, 0);
  EXPECT_EQ(s[2].jobs, 1);
  EXPECT_DOUBLE_EQ(s[2].p99, 10);
}

}  // namespace
}  // namespace dljob::bench
