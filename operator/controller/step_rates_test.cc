// StepRates: a run's steps per second from the progress reports seen pass after pass.
#include "operator/controller/step_rates.h"

#include <gtest/gtest.h>

namespace dljob::controller {
namespace {

TEST(StepRatesTest, ARunHasARateOnceTwoDistinctReportsAreSeen) {
  StepRates rates;
  EXPECT_FALSE(rates.Rate("ns/a"));
  rates.Observe("ns/a", 100, 1000);
  EXPECT_FALSE(rates.Rate("ns/a"));
  rates.Observe("ns/a", 100, 1000);  // the same report, seen by the next pass
  EXPECT_FALSE(rates.Rate("ns/a"));
  rates.Observe("ns/a", 160, 1030);
  ASSERT_TRUE(rates.Rate("ns/a"));
  EXPECT_DOUBLE_EQ(*rates.Rate("ns/a"), 2.0);
  rates.Observe("ns/a", 400, 1150);  // from the first report of the run, not the last two
  EXPECT_DOUBLE_EQ(*rates.Rate("ns/a"), 2.0);
}

TEST(StepRatesTest, ARestartStartsTheReckoningAfresh) {
  StepRates rates;
  rates.Observe("ns/a", 0, 0);
  rates.Observe("ns/a", 1000, 100);  // 10 steps/s
  rates.Observe("ns/a", 800, 400);   // resumed from the checkpoint at step 800, much later
  EXPECT_FALSE(rates.Rate("ns/a"));  // the wait for the restart is not counted as training
  rates.Observe("ns/a", 850, 410);
  EXPECT_DOUBLE_EQ(*rates.Rate("ns/a"), 5.0);
}

TEST(StepRatesTest, SweepForgetsJobsNotObservedSinceTheLastSweep) {
  StepRates rates;
  rates.Observe("ns/a", 0, 0);
  rates.Observe("ns/b", 0, 0);
  rates.Sweep();
  rates.Observe("ns/a", 10, 10);
  rates.Sweep();
  EXPECT_EQ(rates.size(), 1u);
  EXPECT_DOUBLE_EQ(*rates.Rate("ns/a"), 1.0);
  EXPECT_FALSE(rates.Rate("ns/b"));
}

}  // namespace
}  // namespace dljob::controller
