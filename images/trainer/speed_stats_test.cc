#include "images/trainer/speed_stats.h"

#include <gtest/gtest.h>

namespace dljob::trainer {
namespace {

TEST(SpeedStatsTest, EmptyIsZero) {
  SpeedStats s = ComputeSpeedStats(64, {});
  EXPECT_EQ(s.mean, 0.0);
  EXPECT_EQ(s.uncertainty, 0.0);
  EXPECT_EQ(s.jitter, 0.0);
}

TEST(SpeedStatsTest, ConstantStepsHaveNoSpread) {
  SpeedStats s = ComputeSpeedStats(100, {0.5, 0.5, 0.5, 0.5});
  EXPECT_DOUBLE_EQ(s.mean, 200.0);
  EXPECT_DOUBLE_EQ(s.uncertainty, 0.0);
  EXPECT_DOUBLE_EQ(s.jitter, 0.0);
}

TEST(SpeedStatsTest, MatchesNumpyFormulas) {
  // speeds = 10/[1, 0.5, 0.25, 0.2] = [10, 20, 40, 50]; mean 30; np.std = sqrt(250) = 15.811;
  // uncertainty = 15.811 / 2; median 30; |dev| = [20, 10, 10, 20], median 15; jitter 1.4826*15.
  SpeedStats s = ComputeSpeedStats(10, {1.0, 0.5, 0.25, 0.2});
  EXPECT_DOUBLE_EQ(s.mean, 30.0);
  EXPECT_NEAR(s.uncertainty, 7.90569415, 1e-6);
  EXPECT_NEAR(s.jitter, 22.239, 1e-9);
}

TEST(SpeedStatsTest, JitterIgnoresOneOutlier) {
  SpeedStats s = ComputeSpeedStats(1, {1.0, 1.0, 1.0, 1.0, 100.0});
  EXPECT_DOUBLE_EQ(s.jitter, 0.0);
  EXPECT_GT(s.uncertainty, 0.0);
}

}  // namespace
}  // namespace dljob::trainer
