#include "images/trainer/comm/stall_detector.h"

#include <gtest/gtest.h>

#include "images/trainer/comm/loopback_collective.h"
#include "images/trainer/comm/watched_collective.h"

namespace dljob::trainer {
namespace {

ProgressRecord Waiting(int rank, int64_t collectives, int64_t step, std::string what) {
  return {rank, collectives, true, step, std::move(what)};
}

PeerStatus Heard(ProgressRecord last, double silent) { return {true, std::move(last), silent}; }

std::vector<int> Ranks(const std::vector<MissingRank>& missing) {
  std::vector<int> ranks;
  for (const MissingRank& m : missing) ranks.push_back(m.rank);
  return ranks;
}

TEST(StallDetectorTest, RanksBehindHaveNotJoined) {
  const ProgressRecord self = Waiting(0, 245, 120, "allreduce of gradient bucket 3 of 7");
  std::vector<PeerStatus> peers = {
      {},                                                                       // self, ignored
      Heard({1, 244, false, 119, "allreduce of loss"}, 0.4),                    // behind
      Heard(Waiting(2, 245, 120, "allreduce of gradient bucket 3 of 7"), 0.2),  // joined
      Heard(Waiting(3, 246, 120, "broadcast of x"), 0.1),  // ahead (a root): not missing
  };
  const std::vector<MissingRank> missing = FindMissingRanks(self, peers, 3.0);
  ASSERT_EQ(Ranks(missing), (std::vector<int>{1}));
  EXPECT_EQ(missing[0].reason, MissingReason::kNotJoined);
  EXPECT_EQ(FormatStallMessage(self, 30.2, missing),
            "dljob-train: rank 0 waited 30 s in allreduce of gradient bucket 3 of 7 (step 120): "
            "rank 1 has not joined (last heard 0.4 s ago, at step 119 after allreduce of loss); "
            "exiting");
}

TEST(StallDetectorTest, SilentRanksAreMissingEvenInsideTheSameCollective) {
  const ProgressRecord self = Waiting(1, 10, 4, "allreduce of loss");
  std::vector<PeerStatus> peers = {Heard(Waiting(0, 10, 4, "allreduce of loss"), 12.0), {}};
  const std::vector<MissingRank> missing = FindMissingRanks(self, peers, 3.0);
  ASSERT_EQ(Ranks(missing), (std::vector<int>{0}));
  EXPECT_EQ(missing[0].reason, MissingReason::kSilent);
  EXPECT_EQ(FormatStallMessage(self, 5, missing),
            "dljob-train: rank 1 waited 5.0 s in allreduce of loss (step 4): rank 0 has sent no "
            "heartbeat for 12 s (stopped, killed or unreachable; last heard at step 4 in "
            "allreduce of loss); exiting");
}

TEST(StallDetectorTest, NeverHeardAndEveryoneAlive) {
  const ProgressRecord self = Waiting(0, 1, 0, "broadcast of initial parameters");
  std::vector<PeerStatus> peers = {{}, {false, {}, 7.0}};
  const std::vector<MissingRank> missing = FindMissingRanks(self, peers, 3.0);
  ASSERT_EQ(Ranks(missing), (std::vector<int>{1}));
  EXPECT_EQ(missing[0].reason, MissingReason::kNeverHeard);
  EXPECT_NE(FormatStallMessage(self, 7, missing)
                .find("rank 1 has not joined and has sent no "
                      "heartbeat in 7.0 s"),
            std::string::npos);
  EXPECT_EQ(FormatStallMessage(self, 7, missing).find("(step"), std::string::npos);

  peers[1] = Heard(Waiting(1, 1, 0, "broadcast of initial parameters"), 0.5);
  EXPECT_TRUE(FindMissingRanks(self, peers, 3.0).empty());
  EXPECT_NE(FormatStallMessage(self, 7, {}).find("every rank has joined and is alive"),
            std::string::npos);
}

TEST(StallDetectorTest, GivesUpAfterTheTimeoutOrOneSilenceLimitLaterWhenNobodyIsNamed) {
  EXPECT_EQ(DecideStall(29, 30, 3, true), StallDecision::kKeepWaiting);
  EXPECT_EQ(DecideStall(30, 30, 3, true), StallDecision::kGiveUp);
  EXPECT_EQ(DecideStall(31, 30, 3, false), StallDecision::kKeepWaiting);
  EXPECT_EQ(DecideStall(33, 30, 3, false), StallDecision::kGiveUp);
}

TEST(StallDetectorTest, HeartbeatPeriodFollowsTheTimeout) {
  EXPECT_DOUBLE_EQ(HeartbeatSeconds(60), 1.0);
  EXPECT_DOUBLE_EQ(HeartbeatSeconds(2), 0.4);
  EXPECT_DOUBLE_EQ(HeartbeatSeconds(0.01), 0.05);
  EXPECT_DOUBLE_EQ(SilenceLimitSeconds(60), 3.0);
}

TEST(WatchedCollectiveTest, RecordsOperationsStepAndPurpose) {
  LoopbackCollective inner;
  WatchedCollective watched(inner);
  EXPECT_EQ(watched.Snapshot().record.collectives, 0);
  EXPECT_EQ(watched.Snapshot().record.what, "");
  watched.SetStep(12);
  watched.Annotate("loss");
  float x = 1;
  ASSERT_TRUE(watched.AllreduceSum(&x, 1).ok());
  watched.Annotate(std::string(200, 'b'));  // truncated, not overflowing
  ASSERT_TRUE(watched.Broadcast(&x, 1, 0).ok());
  const WatchedCollective::Progress p = watched.Snapshot();
  EXPECT_EQ(p.record.collectives, 2);
  EXPECT_FALSE(p.record.waiting);
  EXPECT_EQ(p.record.step, 12);
  EXPECT_EQ(p.record.what, "broadcast of " + std::string(63, 'b'));
  EXPECT_EQ(inner.allreduce_calls(), 1);
  EXPECT_EQ(inner.broadcast_calls(), 1);
}

}  // namespace
}  // namespace dljob::trainer
