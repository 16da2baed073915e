#include "scheduler/queue/job_queue.h"

#include <algorithm>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "scheduler/queue/queue_test_util.h"

namespace dljob::scheduler {
namespace {

using queue_testing::GpuNode;
using queue_testing::J;
using queue_testing::MakeQueue;
using queue_testing::Names;
using queue_testing::Policy;
using Strings = std::vector<std::string>;

QueueOptions Options(Backfill backfill, bool preemption = false) {
  QueueOptions o;
  o.backfill = backfill;
  o.preemption = preemption;
  return o;
}

auto NoCheck = [](const JobQueue&, const Decision&, int64_t, const std::set<std::string>&) {};

TEST(JobQueue, StartsByPriorityThenSubmitTimeThenName) {
  auto policy = Policy();
  // Every order of adding the jobs gives the same order of starts.
  std::vector<JobRequest> jobs = {J("c", 8).At(5), J("a", 8).At(5),
                                  J("late-high", 8).Priority(3).At(9), J("first", 8).At(1),
                                  J("low", 8).Priority(-1).At(0)};
  std::vector<size_t> perm = {0, 1, 2, 3, 4};
  do {
    JobQueue q({UnlimitedQueue()}, *policy, Options(Backfill::kNone));
    q.SetNodes({GpuNode("n1", 8)});
    for (size_t i : perm) ASSERT_TRUE(q.AddPending(jobs[i]).ok());
    Strings order;
    for (int64_t t = 10; q.pending_count() > 0; t += 10) {
      Decision d = q.Schedule(t);
      ASSERT_EQ(d.start.size(), 1u);
      order.push_back(d.start[0].job);
      ASSERT_TRUE(q.Finish(d.start[0].job, t + 1).ok());
    }
    EXPECT_EQ(order, (Strings{"late-high", "first", "a", "c", "low"}));
  } while (std::next_permutation(perm.begin(), perm.end()));
}

// A policy that counts the placements it is asked to try without a reason (TryPlace).
class CountingPolicy : public PlacementPolicy {
 public:
  explicit CountingPolicy(const PlacementPolicy& inner) : inner_(inner) {}
  std::string_view Name() const override { return inner_.Name(); }
  int tries() const { return tries_; }

 protected:
  Result<Placement> PlaceGang(const Gang& gang, const std::vector<Node>& nodes,
                              bool explain) const override {
    if (explain) return inner_.Place(gang, nodes);
    ++tries_;
    std::optional<Placement> p = inner_.TryPlace(gang, nodes);
    if (!p) return Status::FailedPrecondition("does not fit");
    return *p;
  }

 private:
  const PlacementPolicy& inner_;
  mutable int tries_ = 0;
};

TEST(JobQueue, AWaitingGangOfAShapeAlreadyRefusedOnTheSameNodesIsNotTriedAgain) {
  auto inner = Policy();
  CountingPolicy policy(*inner);
  JobRequest r = J("r", 8);
  r.gang.per_worker.cpu_milli = 95500;  // n1's GPUs are half free, its CPU nearly all used
  auto q = MakeQueue({UnlimitedQueue()}, policy, Options(Backfill::kGreedy), {GpuNode("n1", 16)},
                     {{r, {"n1"}}});
  for (const char* name : {"w1", "w2", "w3", "w4"}) {
    ASSERT_TRUE(q->AddPending(J(name, 8).At(1)).ok());  // 1 CPU a worker: 0.5 is free
  }
  ASSERT_TRUE(q->AddPending(J("two", 16).At(2)).ok());  // another shape: 2 workers
  Decision d = q->Schedule(10);
  EXPECT_TRUE(d.start.empty());
  EXPECT_EQ(d.waiting.size(), 5u);
  EXPECT_EQ(policy.tries(), 1) << "the 16-GPU gang is over the GPU bound: never tried";

  // The nodes change: nothing refused before is taken as refused now.
  ASSERT_TRUE(q->Finish("r", 11).ok());
  d = q->Schedule(12);
  EXPECT_EQ(Names(d.start), (Strings{"w1", "w2"}));
}

TEST(JobQueue, StrictOrderStartsNothingBehindAHeadThatDoesNotFit) {
  auto policy = Policy();
  auto q = MakeQueue({UnlimitedQueue()}, *policy, Options(Backfill::kNone),
                     {GpuNode("n1", 8), GpuNode("n2", 8)}, {{J("r", 4), {"n1"}}});
  ASSERT_TRUE(q->AddPending(J("big", 16).At(1)).ok());
  ASSERT_TRUE(q->AddPending(J("small", 2).At(2)).ok());
  Decision d = q->Schedule(10);
  EXPECT_TRUE(d.start.empty());
  EXPECT_EQ(d.blocked_head, "big");
  ASSERT_EQ(d.waiting.size(), 2u);
  EXPECT_EQ(d.waiting[0].reason,
            "needs 16 GPUs (any model, 2 workers × 8) in queue default; 12 free, largest node 8; "
            "first in line, waits for room");
  EXPECT_EQ(d.waiting[1].reason,
            "needs 2 GPUs (any model) in queue default; 12 free, largest node 8; behind big "
            "(strict order)");
  EXPECT_EQ(d.waiting[0].cause, WaitCause::kRoom);
  EXPECT_EQ(d.waiting[1].cause, WaitCause::kBehind);
}

// EASY backfill, as a table: one 8-GPU node, a running job holding 6 GPUs until t=100 by its
// time limit, a head that needs the whole node, and one candidate behind it.
TEST(JobQueue, BackfillOnlyWhatLeavesTheReservationIntact) {
  struct Case {
    std::string name;
    int64_t gpus;
    std::optional<int64_t> limit;
    bool starts;
  };
  const Case cases[] = {
      {"ends before the reservation", 2, 90, true},
      {"ends exactly at the reservation", 2, 100, true},
      {"ends after the reservation", 2, 101, false},
      {"no time limit", 2, std::nullopt, false},
      {"does not fit now", 4, 10, false},
  };
  auto policy = Policy();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto q = MakeQueue({UnlimitedQueue()}, *policy, Options(Backfill::kReservation),
                       {GpuNode("n1", 8)}, {{J("r", 6).Limit(100), {"n1"}}});
    ASSERT_TRUE(q->AddPending(J("head", 8).At(1)).ok());
    J cand("cand", c.gpus);
    cand.At(2);
    if (c.limit) cand.Limit(*c.limit);
    ASSERT_TRUE(q->AddPending(cand).ok());
    Decision d = q->Schedule(0);
    ASSERT_TRUE(d.reservation);
    EXPECT_EQ(d.reservation->job, "head");
    EXPECT_EQ(d.reservation->time, 100);
    EXPECT_EQ(Names(d.start), c.starts ? Strings{"cand"} : Strings{});
    if (c.starts) {
      EXPECT_TRUE(d.start[0].backfilled);
    }
  }
}

TEST(JobQueue, BackfillMayUseWhatTheReservedPlacementDoesNotNeed) {
  // On a 12-GPU node the head (8) leaves 4 at its reservation: a 4-GPU job with no time limit
  // may take them, a 5-GPU one may not.
  auto policy = Policy();
  auto q = MakeQueue({UnlimitedQueue()}, *policy, Options(Backfill::kReservation),
                     {GpuNode("n1", 12)}, {{J("r", 6).Limit(100), {"n1"}}});
  ASSERT_TRUE(q->AddPending(J("head", 8).At(1)).ok());
  ASSERT_TRUE(q->AddPending(J("five", 5).At(2)).ok());
  ASSERT_TRUE(q->AddPending(J("four", 4).At(3)).ok());
  Decision d = q->Schedule(0);
  EXPECT_EQ(Names(d.start), Strings{"four"});
  ASSERT_EQ(d.waiting.size(), 2u);
  EXPECT_EQ(d.waiting[0].reason,
            "needs 8 GPUs (any model) in queue default; 2 free, largest node 2; first in line, "
            "reserved to start in 1:40 (by the running jobs' time limits)");
  EXPECT_EQ(d.waiting[1].reason,
            "needs 5 GPUs (any model) in queue default; 2 free, largest node 2; would delay head's "
            "reservation");
  EXPECT_EQ(d.waiting[0].cause, WaitCause::kRoom);
  EXPECT_EQ(d.waiting[1].cause, WaitCause::kBehind);
}

TEST(JobQueue, WithoutTimeLimitsTheHeadReservesItsPlacementOnTheIdleCluster) {
  auto policy = Policy();
  auto q =
      MakeQueue({UnlimitedQueue()}, *policy, Options(Backfill::kReservation),
                {GpuNode("n1", 8), GpuNode("n2", 8)}, {{J("r1", 4), {"n1"}}, {J("r2", 4), {"n2"}}});
  ASSERT_TRUE(q->AddPending(J("head", 16).At(1)).ok());
  ASSERT_TRUE(q->AddPending(J("unbounded", 2).At(2)).ok());
  ASSERT_TRUE(q->AddPending(J("bounded", 2).At(3).Limit(50)).ok());
  Decision d = q->Schedule(0);
  ASSERT_TRUE(d.reservation);
  EXPECT_FALSE(d.reservation->time);
  // The bounded job ends before "never"; the unbounded one would sit on the head's nodes.
  EXPECT_EQ(Names(d.start), Strings{"bounded"});
  EXPECT_EQ(d.waiting[0].reason,
            "needs 16 GPUs (any model, 2 workers × 8) in queue default; 6 free, largest node 4; "
            "first in line, waits for jobs without a time limit to end");
  EXPECT_EQ(d.waiting[1].reason,
            "needs 2 GPUs (any model) in queue default; 6 free, largest node 4; would delay "
            "head's reservation");
}

TEST(JobQueue, AJobThatNeverFitsDoesNotHoldUpTheQueue) {
  auto policy = Policy();
  for (Backfill b : {Backfill::kNone, Backfill::kReservation, Backfill::kGreedy}) {
    JobQueue q({UnlimitedQueue()}, *policy, Options(b));
    q.SetNodes({GpuNode("n1", 8)});
    ASSERT_TRUE(q.AddPending(J("huge", 64).At(1)).ok());
    ASSERT_TRUE(q.AddPending(J("v100", 1).Model("V100").At(2)).ok());
    ASSERT_TRUE(q.AddPending(J("ok", 8).At(3)).ok());
    Decision d = q.Schedule(0);
    EXPECT_EQ(Names(d.start), Strings{"ok"});
    ASSERT_EQ(d.waiting.size(), 2u);
    for (const WaitingJob& w : d.waiting) {
      EXPECT_NE(w.reason.find("; can never fit these nodes: "), std::string::npos) << w.reason;
    }
  }
}

TEST(JobQueue, UnknownQueueWaitsWithThatReason) {
  auto policy = Policy();
  JobQueue q({UnlimitedQueue("team-a")}, *policy, Options(Backfill::kReservation));
  q.SetNodes({GpuNode("n1", 8)});
  ASSERT_TRUE(q.AddPending(J("lost", 1).Queue("team-z")).ok());
  ASSERT_TRUE(q.AddPending(J("ok", 1).Queue("team-a").At(1)).ok());
  Decision d = q.Schedule(0);
  EXPECT_EQ(Names(d.start), Strings{"ok"});
  ASSERT_EQ(d.waiting.size(), 1u);
  EXPECT_EQ(d.waiting[0].reason,
            "needs 1 GPUs (any model) in queue team-z; 7 free, largest node 7; queue \"team-z\" "
            "does not exist (queues: team-a)");
  EXPECT_EQ(d.waiting[0].cause, WaitCause::kNoQueue);
}

TEST(JobQueue, QuotaReasonNamesQuotaUseAndFreeGpus) {
  auto policy = Policy();
  std::vector<Node> nodes;
  for (int i = 0; i < 5; ++i) nodes.push_back(GpuNode("n" + std::to_string(i), 8));
  nodes[3].used.gpus = 4;  // some other pod
  std::vector<queue_testing::Running> running;
  for (int i = 0; i < 3; ++i) {
    running.push_back(
        {J("r" + std::to_string(i), 8).Model("A100").Queue("team-a"), {"n" + std::to_string(i)}});
  }
  auto q = MakeQueue({{"team-a", {{"A100", {32, 0}}}}}, *policy, Options(Backfill::kReservation),
                     nodes, running);
  ASSERT_TRUE(q->AddPending(J("big", 16).Model("A100").Queue("team-a")).ok());
  Decision d = q->Schedule(0);
  ASSERT_EQ(d.waiting.size(), 1u);
  EXPECT_EQ(d.waiting[0].reason,
            "needs 16 GPUs (A100, 2 workers × 8) in queue team-a; quota 32, used 24; 12 free, "
            "largest node 8; waits for quota");
  EXPECT_EQ(d.waiting[0].cause, WaitCause::kQuota);
}

TEST(JobQueue, BorrowsOnlyIdleQuotaWithinTheBorrowingLimit) {
  auto policy = Policy();
  const std::vector<QueueSpec> queues = {{"a", {{"", {8, 8}}}}, {"b", {{"", {8, 0}}}}};
  const std::vector<Node> nodes = {GpuNode("n1", 8), GpuNode("n2", 8), GpuNode("n3", 8)};
  {
    // b idle: a borrows b's 8, but no more than its limit of 8.
    JobQueue q(queues, *policy, Options(Backfill::kGreedy));
    q.SetNodes(nodes);
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(q.AddPending(J("a" + std::to_string(i), 8).Queue("a").At(i)).ok());
    }
    EXPECT_EQ(Names(q.Schedule(0).start), (Strings{"a0", "a1"}));
  }
  {
    // b uses its 8: nothing idle to borrow, though a's limit would allow it and a node is free.
    JobQueue q(queues, *policy, Options(Backfill::kGreedy));
    q.SetNodes(nodes);
    ASSERT_TRUE(q.AddPending(J("b0", 8).Queue("b")).ok());
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(q.AddPending(J("a" + std::to_string(i), 8).Queue("a").At(1 + i)).ok());
    }
    Decision d = q.Schedule(0);
    EXPECT_EQ(Names(d.start), (Strings{"b0", "a0"}));
    ASSERT_EQ(d.waiting.size(), 1u);
    EXPECT_EQ(d.waiting[0].reason,
              "needs 8 GPUs (any model) in queue a; quota 8 + borrowing 8, used 8; 8 free, "
              "largest node 8; waits for quota: borrowing 8 needs idle quota of other queues, "
              "which have 0");
  }
}

TEST(JobQueue, PreemptsWholeGangsOfLowerPriorityOnlyWhenThatMakesRoom) {
  auto policy = Policy();
  // A 2-worker gang across both nodes, and two 4-GPU jobs of different priority.
  auto q = MakeQueue({UnlimitedQueue()}, *policy, Options(Backfill::kReservation, true),
                     {GpuNode("n1", 8), GpuNode("n2", 8)},
                     {{J("gang", 8, 4).Priority(1), {"n1", "n2"}},
                      {J("low", 4).Priority(0), {"n1"}, 5},
                      {J("mid", 4).Priority(2), {"n2"}, 5}});
  // 8 GPUs on one node: n1 once low and the whole gang go.
  ASSERT_TRUE(q->AddPending(J("urgent", 8).Priority(5)).ok());
  Decision d = q->Schedule(10);
  EXPECT_EQ(Names(d.preempt), (Strings{"low", "gang"}));
  ASSERT_EQ(Names(d.start), Strings{"urgent"});
  EXPECT_EQ(d.start[0].placement.worker_nodes, Strings{"n1"});
  EXPECT_EQ(d.preempt[0].reason, "suspended for urgent (priority 5 > 0)");
  EXPECT_EQ(q->nodes()[1].used.gpus, 4);  // both of the gang's workers went; mid stays

  // An equal-priority job never preempts, and a job that would not fit even then preempts
  // nothing.
  auto q2 = MakeQueue({UnlimitedQueue()}, *policy, Options(Backfill::kReservation, true),
                      {GpuNode("n1", 8)}, {{J("r", 8), {"n1"}}});
  ASSERT_TRUE(q2->AddPending(J("same", 8)).ok());
  ASSERT_TRUE(q2->AddPending(J("too-big", 16).Priority(9)).ok());
  Decision d2 = q2->Schedule(100);
  EXPECT_TRUE(d2.preempt.empty());
  EXPECT_TRUE(d2.start.empty());
}

TEST(JobQueue, PreemptionChoosesTheCheapestSet) {
  auto policy = Policy();
  // Same priority: the later-started job goes.
  auto q = MakeQueue({UnlimitedQueue()}, *policy, Options(Backfill::kReservation, true),
                     {GpuNode("n1", 8), GpuNode("n2", 8)},
                     {{J("old", 8), {"n1"}, 0}, {J("new", 8), {"n2"}, 50}});
  ASSERT_TRUE(q->AddPending(J("urgent", 8).Priority(1)).ok());
  EXPECT_EQ(Names(q->Schedule(100).preempt), Strings{"new"});

  // The lowest priority goes first, even when it started earlier.
  auto q2 = MakeQueue({UnlimitedQueue()}, *policy, Options(Backfill::kReservation, true),
                      {GpuNode("n1", 8), GpuNode("n2", 8)},
                      {{J("lowest", 8).Priority(-5), {"n1"}, 0}, {J("low", 8), {"n2"}, 50}});
  ASSERT_TRUE(q2->AddPending(J("urgent", 8).Priority(1)).ok());
  EXPECT_EQ(Names(q2->Schedule(100).preempt), Strings{"lowest"});

  // Of 1-GPU jobs on two nodes, the four on one node go (the most recently started), not more.
  std::vector<queue_testing::Running> running;
  for (int i = 0; i < 4; ++i) {
    running.push_back({J("a" + std::to_string(i), 1), {"n1"}, i});
    running.push_back({J("b" + std::to_string(i), 1), {"n2"}, 10 + i});
  }
  auto q3 = MakeQueue({UnlimitedQueue()}, *policy, Options(Backfill::kReservation, true),
                      {GpuNode("n1", 4), GpuNode("n2", 4)}, running);
  ASSERT_TRUE(q3->AddPending(J("urgent", 4).Priority(1)).ok());
  Decision d3 = q3->Schedule(100);
  EXPECT_EQ(Names(d3.preempt), (Strings{"b3", "b2", "b1", "b0"}));
  EXPECT_EQ(Names(d3.start), Strings{"urgent"});
}

TEST(JobQueue, ReclaimsQuotaOtherQueuesBorrowed) {
  auto policy = Policy();
  const std::vector<QueueSpec> queues = {{"a", {{"", {8, 8}}}}, {"b", {{"", {8, 0}}}}};
  auto q = MakeQueue(queues, *policy, Options(Backfill::kReservation, true),
                     {GpuNode("n1", 8), GpuNode("n2", 8)},
                     {{J("a0", 8).Queue("a").Priority(5), {"n1"}, 0},
                      {J("a1", 8).Queue("a").Priority(5), {"n2"}, 10}});
  ASSERT_TRUE(q->AddPending(J("b0", 8).Queue("b")).ok());
  Decision d = q->Schedule(20);
  // b is owed its 8: a's borrowed job goes whatever its priority (the later-started one).
  EXPECT_EQ(Names(d.preempt), Strings{"a1"});
  EXPECT_EQ(d.preempt[0].reason, "suspended for b0 (queue a borrows quota that queue b is owed)");
  EXPECT_EQ(Names(d.start), Strings{"b0"});
}

TEST(JobQueue, BorrowsOnlyWithinItsCohort) {
  auto policy = Policy();
  // a and b lend each other in cohort ml; c, of the default cohort, lends to neither.
  const std::vector<QueueSpec> queues = {
      {"a", {{"", {8, 16}}}, "ml"}, {"b", {{"", {8, 0}}}, "ml"}, {"c", {{"", {8, 0}}}}};
  JobQueue q(queues, *policy, Options(Backfill::kGreedy));
  q.SetNodes({GpuNode("n1", 8), GpuNode("n2", 8), GpuNode("n3", 8)});
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(q.AddPending(J("a" + std::to_string(i), 8).Queue("a").At(i)).ok());
  }
  Decision d = q.Schedule(0);
  // a's own 8 and b's idle 8; c's idle 8 and a free node are not a's to use.
  EXPECT_EQ(Names(d.start), (Strings{"a0", "a1"}));
  ASSERT_EQ(d.waiting.size(), 1u);
  EXPECT_EQ(d.waiting[0].reason,
            "needs 8 GPUs (any model) in queue a; quota 8 + borrowing 16, used 16; 8 free, "
            "largest node 8; waits for quota: borrowing 8 needs idle quota of other queues in "
            "cohort ml, which have 0");
}

// a (cohort ml) borrows b's quota. c, of the default cohort, is owed its nominal 8 but may not
// reclaim it from a: a borrows nothing of c's cohort. b may, though c's attempt failed before it
// in the same pass.
TEST(JobQueue, ReclaimStaysWithinTheCohort) {
  auto policy = Policy();
  const std::vector<QueueSpec> queues = {
      {"a", {{"", {8, 8}}}, "ml"}, {"b", {{"", {8, 0}}}, "ml"}, {"c", {{"", {8, 0}}}}};
  auto q = MakeQueue(queues, *policy, Options(Backfill::kGreedy, true),
                     {GpuNode("n1", 8), GpuNode("n2", 8)},
                     {{J("a0", 8).Queue("a"), {"n1"}, 0}, {J("a1", 8).Queue("a"), {"n2"}, 10}});
  ASSERT_TRUE(q->AddPending(J("c0", 8).Queue("c").At(0)).ok());
  ASSERT_TRUE(q->AddPending(J("b0", 8).Queue("b").At(1)).ok());
  Decision d = q->Schedule(20);
  EXPECT_EQ(Names(d.preempt), Strings{"a1"});
  ASSERT_EQ(d.preempt.size(), 1u);
  EXPECT_EQ(d.preempt[0].for_job, "b0");
  EXPECT_EQ(d.preempt[0].reason, "suspended for b0 (queue a borrows quota that queue b is owed)");
  EXPECT_EQ(Names(d.start), Strings{"b0"});
  // The preempted a1 waits too (kPreempted); c0 waits for room, as it did before the pass.
  auto c0 = std::find_if(d.waiting.begin(), d.waiting.end(),
                         [](const WaitingJob& w) { return w.job == "c0"; });
  ASSERT_NE(c0, d.waiting.end());
  EXPECT_EQ(c0->cause, WaitCause::kRoom);
}

TEST(JobQueue, NoPreemptionBeforeTheMinimumRunTime) {
  auto policy = Policy();
  QueueOptions o = Options(Backfill::kReservation, true);
  o.min_run_time = 60;
  auto q =
      MakeQueue({UnlimitedQueue()}, *policy, o, {GpuNode("n1", 8)}, {{J("r", 8), {"n1"}, 100}});
  ASSERT_TRUE(q->AddPending(J("urgent", 8).Priority(1)).ok());
  Decision d = q->Schedule(130);
  EXPECT_TRUE(d.preempt.empty());
  EXPECT_EQ(d.next_change, 160);
  EXPECT_EQ(Names(q->Schedule(160).preempt), Strings{"r"});
}

TEST(JobQueue, LasSuspendsAfterTheMinimumRunTimeAndTheJobResumes) {
  auto policy = Policy();
  QueueOptions o = Options(Backfill::kGreedy, true);
  o.ordering = JobOrdering::kLeastAttained;
  o.las_thresholds = {100};  // GPU-seconds
  o.min_run_time = 30;
  JobQueue q({UnlimitedQueue()}, *policy, o);
  q.SetNodes({GpuNode("n1", 1)});
  std::vector<JobRequest> jobs = {J("long", 1).At(0).Duration(1000),
                                  J("short", 1).At(10).Duration(20)};
  auto out = queue_testing::Replay(q, jobs, NoCheck);
  // At level 0 short cannot preempt long (same level) until long has attained 100 GPU-seconds
  // at t=100; then short runs its 20 s, and long resumes where it was.
  EXPECT_EQ(out["short"].first_start, 100);
  EXPECT_EQ(out["short"].end, 120);
  EXPECT_EQ(out["long"].suspensions, 1);
  EXPECT_EQ(out["long"].end, 1020);
}

TEST(JobQueue, SjfRunsTheShortestRemainingFirst) {
  auto policy = Policy();
  QueueOptions o = Options(Backfill::kGreedy, true);
  o.ordering = JobOrdering::kShortestRemaining;
  JobQueue q({UnlimitedQueue()}, *policy, o);
  q.SetNodes({GpuNode("n1", 1)});
  std::vector<JobRequest> jobs = {J("long", 1).At(0).Duration(1000),
                                  J("mid", 1).At(5).Duration(100),
                                  J("short", 1).At(6).Duration(10)};
  auto out = queue_testing::Replay(q, jobs, NoCheck);
  EXPECT_EQ(out["mid"].first_start, 5);
  EXPECT_EQ(out["short"].first_start, 6);
  EXPECT_EQ(out["short"].end, 16);
  EXPECT_EQ(out["mid"].end, 115);  // 1 s before short, 99 after
  EXPECT_EQ(out["long"].end, 1110);
}

TEST(JobQueue, ScheduleSnapshotIsOnePassOverAFreshQueue) {
  auto policy = Policy();
  Node n = GpuNode("n1", 8);
  n.used.gpus = 4;
  JobSnapshot running{J("r", 4).Limit(100), {}, Placement{{"n1"}}, 0};
  JobSnapshot head{J("head", 8).At(1), {}, std::nullopt, 0};
  JobSnapshot small{J("small", 2).At(2).Limit(50), {}, std::nullopt, 0};
  Result<Decision> d = ScheduleSnapshot({UnlimitedQueue()}, {running, head, small}, {n}, 10,
                                        *policy, QueueOptions{});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(Names(d->start), Strings{"small"});
  EXPECT_EQ(d->reservation->time, 100);
  JobSnapshot twice = small;
  EXPECT_EQ(
      ScheduleSnapshot({UnlimitedQueue()}, {small, twice}, {n}, 10, *policy, {}).status().code(),
      StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace dljob::scheduler
