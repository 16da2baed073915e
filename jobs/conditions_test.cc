#include "jobs/conditions.h"

#include <gtest/gtest.h>

namespace dljob {
namespace {

TEST(TransitionTo, KeepsOneTruePhaseConditionAndStampsTimes) {
  DLJobStatus st;
  TransitionTo(st, JobPhase::kQueued, "Submitted", "accepted", "t0");
  TransitionTo(st, JobPhase::kRunning, "MpirunStarted", "2 ranks", "t1");
  EXPECT_EQ(st.phase, JobPhase::kRunning);
  EXPECT_EQ(st.start_time, "t1");
  EXPECT_EQ(FindCondition(st, "Queued")->status, "False");
  EXPECT_EQ(FindCondition(st, "Queued")->last_transition_time, "t1");
  EXPECT_EQ(FindCondition(st, "Running")->status, "True");
  TransitionTo(st, JobPhase::kRestarting, "ProcessFailed", "rank 1 died", "t2");
  TransitionTo(st, JobPhase::kRunning, "MpirunStarted", "again", "t3");
  EXPECT_EQ(st.start_time, "t1");  // the first start counts
  EXPECT_EQ(FindCondition(st, "Running")->last_transition_time, "t3");
  EXPECT_EQ(FindCondition(st, "Running")->message, "again");
  TransitionTo(st, JobPhase::kSucceeded, "Completed", "done", "t4");
  EXPECT_EQ(st.completion_time, "t4");
  int true_count = 0;
  for (const Condition& c : st.conditions) true_count += c.status == "True";
  EXPECT_EQ(true_count, 1);
  EXPECT_EQ(st.conditions.size(), 4u);
}

TEST(SetCondition, TransitionTimeMovesOnlyWithTheStatus) {
  DLJobStatus st;
  SetCondition(st, "Ready", "True", "A", "a", "t0");
  SetCondition(st, "Ready", "True", "B", "b", "t1");
  EXPECT_EQ(FindCondition(st, "Ready")->last_transition_time, "t0");
  EXPECT_EQ(FindCondition(st, "Ready")->reason, "B");
  EXPECT_EQ(FindCondition(st, "Missing"), nullptr);
}

}  // namespace
}  // namespace dljob
