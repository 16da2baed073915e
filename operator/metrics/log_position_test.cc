#include "operator/metrics/log_position.h"

#include <vector>

#include <gtest/gtest.h>

namespace dljob::metrics {
namespace {

WallTime At(int ms) { return WallTime() + std::chrono::milliseconds(1'000'000 + ms); }

// Offers a whole read; returns the indices of the lines that were new.
std::vector<int> Read(LogPosition& p, const std::vector<std::optional<WallTime>>& lines) {
  p.StartRead();
  std::vector<int> fresh;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (p.Advance(lines[i])) fresh.push_back(static_cast<int>(i));
  }
  return fresh;
}

TEST(LogPosition, AReadAgainFromTheStartGoesOnAfterTheLastLineHandled) {
  LogPosition p;
  EXPECT_EQ(Read(p, {At(1), At(2)}), (std::vector<int>{0, 1}));
  EXPECT_EQ(Read(p, {At(1), At(2), At(3), At(4)}), (std::vector<int>{2, 3}));
  EXPECT_FALSE(p.TakeGap().has_value());
  EXPECT_EQ(p.handled(), 4);
}

TEST(LogPosition, LinesWrittenInTheSameInstantAreCountedNotSkippedTogether) {
  LogPosition p;
  EXPECT_EQ(Read(p, {At(1), At(2), At(2)}), (std::vector<int>{0, 1, 2}));
  // A third line of the same instant came after the stream broke.
  EXPECT_EQ(Read(p, {At(1), At(2), At(2), At(2), At(3)}), (std::vector<int>{3, 4}));
}

TEST(LogPosition, ARotatedLogIsPlacedByTimeAndItsGapReported) {
  LogPosition p;
  Read(p, {At(1), At(2), At(3)});
  // The file now starts later than the last line handled: lines 3..7 may be lost.
  EXPECT_EQ(Read(p, {At(8), At(9)}), (std::vector<int>{0, 1}));
  std::optional<LogGap> gap = p.TakeGap();
  ASSERT_TRUE(gap.has_value());
  EXPECT_EQ(gap->after, At(3));
  EXPECT_EQ(gap->before, At(8));
  EXPECT_FALSE(p.TakeGap().has_value());
  // A rotated file that still holds the last line is no gap.
  EXPECT_EQ(Read(p, {At(9), At(10)}), (std::vector<int>{1}));
  EXPECT_FALSE(p.TakeGap().has_value());
}

TEST(LogPosition, LinesAlreadyArchivedAreTheFirstReadsFirstLines) {
  LogPosition p(3);
  EXPECT_EQ(Read(p, {At(1), At(2), At(2), At(2), At(4)}), (std::vector<int>{3, 4}));
  EXPECT_FALSE(p.TakeGap().has_value());
  EXPECT_EQ(p.handled(), 5);
  EXPECT_EQ(Read(p, {At(1), At(2), At(2), At(2), At(4), At(5)}), (std::vector<int>{5}));
}

TEST(LogPosition, UnstampedLinesArePlacedByTheirIndex) {
  LogPosition p(1);
  EXPECT_EQ(Read(p, {std::nullopt, std::nullopt}), (std::vector<int>{1}));
  EXPECT_EQ(Read(p, {std::nullopt, std::nullopt, std::nullopt}), (std::vector<int>{2}));
  EXPECT_FALSE(p.TakeGap().has_value());
}

}  // namespace
}  // namespace dljob::metrics
