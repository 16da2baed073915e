#include "kube/log_timestamp.h"

#include <gtest/gtest.h>

namespace dljob::kube {
namespace {

TEST(LogTimestamp, AStampedLineSplitsBackIntoItsTimeAndText) {
  const WallTime t =
      std::chrono::system_clock::from_time_t(1795323787) + std::chrono::nanoseconds(123456789);
  const std::string line = StampLogLine(t, "epoch 1 starting");
  EXPECT_EQ(line, "2026-11-22T05:03:07.123456789Z epoch 1 starting");
  std::optional<StampedLogLine> split = SplitLogTimestamp(line);
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->time, t);
  EXPECT_EQ(split->text, "epoch 1 starting");
  EXPECT_EQ(SplitLogTimestamp(StampLogLine(t, ""))->text, "");
}

TEST(LogTimestamp, ALineWithoutATimeIsNotSplit) {
  for (const char* line : {"", "epoch 1 starting", "2026-11-22T05:03:07Z", "[1,0]<stdout>: x",
                           "2026-11-22 05:03:07Z text"}) {
    EXPECT_FALSE(SplitLogTimestamp(line).has_value()) << line;
  }
}

}  // namespace
}  // namespace dljob::kube
