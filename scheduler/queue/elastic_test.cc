// Elastic jobs in the queue core (job_queue.h, "Elastic jobs"): one readable case per rule —
// the size a job starts at, when it grows, and shrinking before suspending.
#include <gtest/gtest.h>

#include "scheduler/queue/job_queue.h"
#include "scheduler/queue/queue_test_util.h"

namespace dljob::scheduler {
namespace {

using queue_testing::GpuNode;
using queue_testing::J;
using queue_testing::MakeQueue;
using queue_testing::Names;
using queue_testing::Policy;
using Strings = std::vector<std::string>;

QueueOptions Options() {
  QueueOptions o;  // dljob: priorities, reservation backfill, preemption
  o.grow_after = 300;
  return o;
}

TEST(Elastic, StartsOnTheLargestSizeThatFitsNow) {
  auto policy = Policy();
  // 16 GPUs, 8 of them taken: an elastic 4..16-GPU job (workers of 4) starts on 2 workers.
  auto q = MakeQueue({UnlimitedQueue()}, *policy, Options(), {GpuNode("n1", 8), GpuNode("n2", 8)},
                     {{J("rigid", 8), {"n1"}}});
  ASSERT_TRUE(q->AddPending(J("el", 16, 4).Elastic(1)).ok());
  Decision d = q->Schedule(0);
  ASSERT_EQ(Names(d.start), Strings{"el"});
  EXPECT_EQ(d.start[0].placement.worker_nodes, (Strings{"n2", "n2"}));
  EXPECT_TRUE(d.resize.empty());
}

TEST(Elastic, StartsWithinItsQuota) {
  auto policy = Policy();
  QueueSpec team{"team", {{"", {8, 0}}}};
  auto q = MakeQueue({team}, *policy, Options(), {GpuNode("n1", 8), GpuNode("n2", 8)});
  ASSERT_TRUE(q->AddPending(J("el", 16, 4).Elastic(1).Queue("team")).ok());
  Decision d = q->Schedule(0);
  ASSERT_EQ(Names(d.start), Strings{"el"});
  EXPECT_EQ(d.start[0].placement.worker_nodes.size(), 2u);  // 8 GPUs: the quota, not the room
}

TEST(Elastic, WaitsOnlyUntilItsMinFits) {
  auto policy = Policy();
  auto q = MakeQueue({UnlimitedQueue()}, *policy, Options(), {GpuNode("n1", 8)},
                     {{J("rigid", 8).Limit(100), {"n1"}}});
  ASSERT_TRUE(q->AddPending(J("el", 16, 4).Elastic(2).At(1)).ok());
  Decision d = q->Schedule(0);
  EXPECT_TRUE(d.start.empty());
  ASSERT_EQ(d.waiting.size(), 1u);
  EXPECT_EQ(d.waiting[0].cause, WaitCause::kRoom);
  EXPECT_NE(d.waiting[0].reason.find("needs 8 to 16 GPUs (any model, 2 to 4 workers × 4)"),
            std::string::npos)
      << d.waiting[0].reason;
  ASSERT_TRUE(d.reservation);  // reserved at its min: 8 GPUs, when rigid ends
  EXPECT_EQ(d.reservation->time, 100);
  EXPECT_EQ(d.reservation->placement.worker_nodes.size(), 2u);
}

TEST(Elastic, GrowsOntoGpusIdleForGrowAfter) {
  auto policy = Policy();
  auto q = MakeQueue({UnlimitedQueue()}, *policy, Options(), {GpuNode("n1", 8), GpuNode("n2", 8)},
                     {{J("rigid", 8), {"n2"}}});
  ASSERT_TRUE(q->AddPending(J("el", 16, 4).Elastic(1)).ok());
  Decision d = q->Schedule(0);
  ASSERT_EQ(d.start.size(), 1u);  // 2 workers on n1
  ASSERT_TRUE(q->Finish("rigid", 50).ok());
  d = q->Schedule(50);  // n2 is idle from now
  EXPECT_TRUE(d.resize.empty());
  EXPECT_EQ(d.next_change, 350);
  d = q->Schedule(349);
  EXPECT_TRUE(d.resize.empty());
  d = q->Schedule(350);
  ASSERT_EQ(d.resize.size(), 1u);
  const ResizeAction& r = d.resize[0];
  EXPECT_EQ(r.job, "el");
  EXPECT_EQ(r.from_workers, 2);
  EXPECT_EQ(r.to_workers, 4);
  EXPECT_EQ(r.placement.worker_nodes, (Strings{"n1", "n1", "n2", "n2"}));  // the old ones kept
  EXPECT_EQ(r.reason, "grew 2 → 4 workers onto GPUs idle for 300 s");
  EXPECT_EQ(r.for_job, "");
  d = q->Schedule(1000);  // at max: nothing more
  EXPECT_TRUE(d.resize.empty());
  EXPECT_FALSE(d.next_change);
}

// grow_after counts for the GPUs a job grows onto, not for its GPU model: one GPU left free for
// hours on n1 does not make n2, freed a moment ago, idle. (Counting by model, on a big cluster
// some GPU is always free, so every GPU freed when nothing waited was grown onto at once, and
// the next arrival shrank the job again: on the 20,000-job trace single jobs were resized 93 and
// 262 times.)
TEST(Elastic, GrowsOnlyOntoTheGpusThatWereIdleForGrowAfter) {
  auto policy = Policy();
  auto q = MakeQueue(
      {UnlimitedQueue()}, *policy, Options(),
      {GpuNode("n1", 8), GpuNode("n2", 8), GpuNode("n3", 8)},
      {{J("frag", 7), {"n1"}}, {J("rigid", 8), {"n2"}}, {J("el", 16).Elastic(1), {"n3"}}});
  EXPECT_TRUE(q->Schedule(0).resize.empty());  // one GPU of n1 free from here on
  ASSERT_TRUE(q->Finish("rigid", 1000).ok());
  Decision d = q->Schedule(1000);
  EXPECT_TRUE(d.resize.empty());  // n2 has been free for 0 s
  EXPECT_EQ(d.next_change, 1300);
  EXPECT_TRUE(q->Schedule(1299).resize.empty());
  d = q->Schedule(1300);
  ASSERT_EQ(d.resize.size(), 1u);
  EXPECT_EQ(d.resize[0].placement.worker_nodes, (Strings{"n3", "n2"}));
  EXPECT_EQ(d.resize[0].reason, "grew 1 → 2 workers onto GPUs idle for 300 s");
}

// A shrink frees GPUs as an end does: they are not grown back onto before grow_after.
TEST(Elastic, ShrunkGpusLeftFreeAreIdleOnlyFromTheShrink) {
  auto policy = Policy();
  auto q = MakeQueue({UnlimitedQueue()}, *policy, Options(), {GpuNode("n1", 8), GpuNode("n2", 8)},
                     {{J("el", 16, 4).Elastic(1), {"n1", "n1", "n2", "n2"}}});
  ASSERT_TRUE(q->AddPending(J("hi", 4).Priority(10).Limit(50).At(5)).ok());
  Decision d = q->Schedule(700);
  ASSERT_EQ(d.resize.size(), 1u);
  EXPECT_EQ(d.resize[0].to_workers, 3);
  ASSERT_TRUE(q->Finish("hi", 750).ok());
  EXPECT_TRUE(q->Schedule(750).resize.empty());
  EXPECT_TRUE(q->Schedule(1049).resize.empty());
  d = q->Schedule(1050);
  ASSERT_EQ(d.resize.size(), 1u);
  EXPECT_EQ(d.resize[0].to_workers, 4);
}

// The operator rebuilds the queue for every pass: the idle time growing waits for adds up
// across passes only through ScheduleSnapshot's idle_since.
TEST(Elastic, ASnapshotPassGrowsOnceTheIdleTimeAddsUpAcrossPasses) {
  auto policy = Policy();
  Node n1 = GpuNode("n1", 8);
  n1.used.gpus = 8;
  std::vector<Node> nodes = {n1, GpuNode("n2", 8)};
  JobRequest el = J("el", 16, 4).Elastic(1);
  std::vector<JobSnapshot> jobs = {{el, {}, Placement{{"n1", "n1"}}, 0}};
  const std::vector<QueueSpec> queues = {UnlimitedQueue()};
  std::map<std::string, int64_t> idle;
  Result<Decision> d = ScheduleSnapshot(queues, jobs, nodes, 50, *policy, Options(), &idle);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->resize.empty());
  EXPECT_EQ(idle, (std::map<std::string, int64_t>{{"n2", 50}}));
  d = ScheduleSnapshot(queues, jobs, nodes, 349, *policy, Options(), &idle);
  EXPECT_TRUE(d->resize.empty());
  d = ScheduleSnapshot(queues, jobs, nodes, 350, *policy, Options(), &idle);
  ASSERT_EQ(d->resize.size(), 1u);
  EXPECT_EQ(d->resize[0].to_workers, 4);
  EXPECT_TRUE(idle.empty());  // n2 is taken now
  // Without the carried map every pass starts counting afresh.
  d = ScheduleSnapshot(queues, jobs, nodes, 350, *policy, Options());
  EXPECT_TRUE(d->resize.empty());
}

TEST(Elastic, DoesNotGrowWhileAJobWaitsForThoseGpus) {
  auto policy = Policy();
  QueueSpec a{"a", {{"", {8, 0}}}}, b{"b", {{"", {kUnlimited, 0}}}};
  auto q = MakeQueue({a, b}, *policy, Options(), {GpuNode("n1", 8), GpuNode("n2", 8)},
                     {{J("a-run", 8).Queue("a"), {"n2"}}});
  ASSERT_TRUE(q->AddPending(J("el", 8, 4).Elastic(1).Queue("b")).ok());
  ASSERT_TRUE(q->Schedule(0).start.size() == 1);  // 2 workers on n1
  ASSERT_TRUE(q->Finish("el", 1).ok());
  ASSERT_TRUE(q->AddPending(J("el2", 16, 4).Elastic(1).Queue("b")).ok());
  ASSERT_TRUE(q->AddPending(J("a-wait", 8).Queue("a")).ok());  // waits for a's quota
  Decision d = q->Schedule(2);
  ASSERT_EQ(Names(d.start), Strings{"el2"});
  EXPECT_EQ(d.start[0].placement.worker_nodes.size(), 2u);
  for (int64_t t : {400, 1000}) EXPECT_TRUE(q->Schedule(t).resize.empty()) << t;
  ASSERT_TRUE(q->Remove("a-wait").ok());
  EXPECT_TRUE(q->Schedule(1001).resize.empty());  // idle is counted again from here
  d = q->Schedule(1301);
  ASSERT_EQ(d.resize.size(), 0u);  // n2 is a-run's: no room to grow onto
  ASSERT_TRUE(q->Finish("a-run", 1302).ok());
  q->Schedule(1302);
  d = q->Schedule(1602);
  ASSERT_EQ(d.resize.size(), 1u);
  EXPECT_EQ(d.resize[0].to_workers, 4);
}

TEST(Elastic, GrowsWithinItsQuota) {
  auto policy = Policy();
  QueueSpec team{"team", {{"", {12, 0}}}};
  auto q = MakeQueue({team}, *policy, Options(), {GpuNode("n1", 8), GpuNode("n2", 8)},
                     {{J("other", 8), {"n2"}}});
  ASSERT_TRUE(q->AddPending(J("el", 16, 4).Elastic(1).Queue("team")).ok());
  ASSERT_EQ(q->Schedule(0).start[0].placement.worker_nodes.size(), 2u);
  ASSERT_TRUE(q->Finish("other", 10).ok());
  q->Schedule(10);
  Decision d = q->Schedule(310);
  ASSERT_EQ(d.resize.size(), 1u);
  EXPECT_EQ(d.resize[0].to_workers, 3);  // 12 GPUs: the quota
}

TEST(Elastic, ShrinksInsteadOfSuspending) {
  auto policy = Policy();
  auto q = MakeQueue({UnlimitedQueue()}, *policy, Options(), {GpuNode("n1", 8), GpuNode("n2", 8)},
                     {{J("el", 16, 4).Elastic(2), {"n1", "n1", "n2", "n2"}}});
  ASSERT_TRUE(q->AddPending(J("big", 8).Priority(10).At(5)).ok());
  Decision d = q->Schedule(100);
  EXPECT_TRUE(d.preempt.empty());
  ASSERT_EQ(d.resize.size(), 1u);
  const ResizeAction& r = d.resize[0];
  EXPECT_EQ(r.job, "el");
  EXPECT_EQ(r.from_workers, 4);
  EXPECT_EQ(r.to_workers, 2);
  EXPECT_EQ(r.for_job, "big");
  EXPECT_EQ(r.reason, "shrunk 4 → 2 workers for big (priority 10 > 0)");
  ASSERT_EQ(Names(d.start), Strings{"big"});
  // The kept workers stay on one node, and big takes the other whole.
  ASSERT_EQ(r.placement.worker_nodes.size(), 2u);
  EXPECT_EQ(r.placement.worker_nodes[0], r.placement.worker_nodes[1]);
  EXPECT_NE(d.start[0].placement.worker_nodes[0], r.placement.worker_nodes[0]);
}

TEST(Elastic, ShrinksOnlyAsFarAsNeeded) {
  auto policy = Policy();
  auto q = MakeQueue({UnlimitedQueue()}, *policy, Options(), {GpuNode("n1", 8), GpuNode("n2", 8)},
                     {{J("el", 16, 4).Elastic(1), {"n1", "n1", "n2", "n2"}}});
  ASSERT_TRUE(q->AddPending(J("small", 4).Priority(10).At(5)).ok());
  Decision d = q->Schedule(100);
  EXPECT_TRUE(d.preempt.empty());
  ASSERT_EQ(d.resize.size(), 1u);
  EXPECT_EQ(d.resize[0].to_workers, 3);
}

TEST(Elastic, SuspendedWhenShrinkingToItsMinIsNotEnough) {
  auto policy = Policy();
  auto q = MakeQueue({UnlimitedQueue()}, *policy, Options(), {GpuNode("n1", 8), GpuNode("n2", 8)},
                     {{J("el", 16, 4).Elastic(2), {"n1", "n1", "n2", "n2"}}});
  ASSERT_TRUE(q->AddPending(J("big", 16).Priority(10).At(5)).ok());
  Decision d = q->Schedule(100);
  EXPECT_TRUE(d.resize.empty());
  ASSERT_EQ(Names(d.preempt), Strings{"el"});
  EXPECT_EQ(Names(d.start), Strings{"big"});
  // Waiting again, it asks for its min.
  ASSERT_EQ(d.waiting.size(), 1u);
  EXPECT_EQ(d.waiting[0].cause, WaitCause::kPreempted);
}

TEST(Elastic, ShrinksABorrowerToReturnQuota) {
  auto policy = Policy();
  QueueSpec a{"a", {{"", {8, 0}}}}, b{"b", {{"", {8, 8}}}};
  auto q = MakeQueue({a, b}, *policy, Options(), {GpuNode("n1", 8), GpuNode("n2", 8)},
                     {{J("el", 16, 4).Elastic(1).Queue("b"), {"n1", "n1", "n2", "n2"}}});
  ASSERT_TRUE(q->AddPending(J("owed", 8).Queue("a").At(5)).ok());
  Decision d = q->Schedule(100);
  EXPECT_TRUE(d.preempt.empty());
  ASSERT_EQ(d.resize.size(), 1u);
  EXPECT_EQ(d.resize[0].to_workers, 2);
  EXPECT_NE(d.resize[0].reason.find("queue b borrows quota that queue a is owed"),
            std::string::npos);
  EXPECT_EQ(Names(d.start), Strings{"owed"});
}

TEST(Elastic, RunningJobsAreAddedAtTheirPlacementsSize) {
  auto policy = Policy();
  JobQueue q({UnlimitedQueue()}, *policy, Options());
  q.SetNodes({GpuNode("n1", 8)});
  EXPECT_TRUE(q.AddRunning(J("ok", 16, 4).Elastic(1), Placement{{"n1"}}, 0).ok());
  Status s = q.AddRunning(J("below", 16, 4).Elastic(2), Placement{{"n1"}}, 0);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  JobRequest bad = J("range", 16, 4);
  bad.elastic = ElasticRange{1, 2};  // max must be the gang's workers
  s = q.AddPending(bad);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("an elastic range needs"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace dljob::scheduler
