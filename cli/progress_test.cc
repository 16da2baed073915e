#include "cli/progress.h"

#include <gtest/gtest.h>

namespace dljob {
namespace {

using std::chrono::seconds;

TEST(EtaEstimator, ExtrapolatesTheStepRate) {
  EtaEstimator eta;
  auto t0 = std::chrono::steady_clock::time_point{};
  EXPECT_FALSE(eta.Remaining(100).has_value());
  eta.Observe(10, t0);
  EXPECT_FALSE(eta.Remaining(100).has_value());  // one point gives no rate
  eta.Observe(30, t0 + seconds(10));             // 2 steps/s
  ASSERT_TRUE(eta.Remaining(100).has_value());
  EXPECT_EQ(eta.Remaining(100)->count(), 35);
  EXPECT_FALSE(eta.Remaining(30).has_value());  // done
}

TEST(EtaEstimator, ResetsWhenTheJobRestarts) {
  EtaEstimator eta;
  auto t0 = std::chrono::steady_clock::time_point{};
  eta.Observe(0, t0);
  eta.Observe(50, t0 + seconds(5));
  eta.Observe(0, t0 + seconds(100));  // restarted from step 0
  EXPECT_FALSE(eta.Remaining(100).has_value());
  eta.Observe(10, t0 + seconds(110));
  EXPECT_EQ(eta.Remaining(100)->count(), 90);
}

TEST(FormatProgress, ShowsEverythingKnown) {
  DLJob job;
  job.metadata.name = "mnist";
  job.status.phase = JobPhase::kRunning;
  Throughput t;
  t.step = 300;
  t.total_steps = 937;
  t.epoch = 1;
  t.images_per_sec = 1520.44;
  t.loss = 0.41234;
  t.accuracy = 0.861;
  job.status.throughput = t;
  EXPECT_EQ(FormatProgress(job, seconds(21), seconds(38)),
            "mnist  Running  step 300/937 32%  epoch 1  1520.4 img/s  loss 0.4123  acc 86.1%  "
            "0:21 ETA 0:38");
  EXPECT_EQ(FormatProgress(job, seconds(21), std::nullopt, 20), "mnist  Running  step");
}

TEST(FormatProgress, BeforeAnyMetric) {
  DLJob job;
  job.metadata.name = "x";
  job.status.phase = JobPhase::kQueued;
  EXPECT_EQ(FormatProgress(job, seconds(3), std::nullopt), "x  Queued  0:03");
}

}  // namespace
}  // namespace dljob
