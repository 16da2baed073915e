#include "base/human_format.h"

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace dljob {
namespace {

using std::chrono::seconds;

// Bytes per unit of " B", " KiB", " MiB", " GiB"; 0 for anything else.
double UnitScale(const std::string& unit) {
  if (unit == " B") return 1;
  if (unit == " KiB") return 1024.0;
  if (unit == " MiB") return 1024.0 * 1024;
  if (unit == " GiB") return 1024.0 * 1024 * 1024;
  return 0;
}

TEST(HumanBytes, PicksTheUnitAtEachBoundary) {
  struct Case {
    uint64_t bytes;
    const char* want;
  };
  for (const Case& c : std::initializer_list<Case>{{0, "0 B"},
                                                   {1, "1 B"},
                                                   {1023, "1023 B"},
                                                   {1024, "1.0 KiB"},
                                                   {1536, "1.5 KiB"},
                                                   {(1 << 20) - 1024, "1023.0 KiB"},
                                                   {(1 << 20) - 1, "1.0 MiB"},
                                                   {1 << 20, "1.0 MiB"},
                                                   {20 << 20, "20.0 MiB"},
                                                   {(1 << 30) - (1 << 20), "1023.0 MiB"},
                                                   {1ull << 30, "1.0 GiB"},
                                                   {3435973837ull, "3.2 GiB"},
                                                   {1ull << 40, "1024.0 GiB"}}) {
    EXPECT_EQ(HumanBytes(c.bytes), c.want) << c.bytes;
  }
}

// Every power of two and its neighbours: the number printed, times its unit, is the byte count
// to within the one decimal shown, and the number is at least 1 and (below GiB) under 1024.
TEST(HumanBytes, ReadsBackWithinRoundingAcrossTheWholeRange) {
  for (int shift = 0; shift < 64; ++shift) {
    for (int64_t delta : {-1, 0, 1}) {
      const uint64_t n = (uint64_t{1} << shift) + static_cast<uint64_t>(delta);
      const std::string s = HumanBytes(n);
      char* end = nullptr;
      const double number = std::strtod(s.c_str(), &end);
      const std::string unit = end;
      const double scale = UnitScale(unit);
      ASSERT_GT(scale, 0) << s;
      EXPECT_NEAR(number * scale, static_cast<double>(n), 0.05 * scale + 1e-9 * n) << s;
      if (scale > 1) {
        EXPECT_GE(number, 1.0) << s;
      }
      if (scale < 1024.0 * 1024 * 1024) {
        EXPECT_LT(number, 1024.0) << s;
      }
    }
  }
}

TEST(ClockDuration, PrintsMinutesAndHours) {
  EXPECT_EQ(ClockDuration(seconds(0)), "0:00");
  EXPECT_EQ(ClockDuration(seconds(59)), "0:59");
  EXPECT_EQ(ClockDuration(seconds(75)), "1:15");
  EXPECT_EQ(ClockDuration(seconds(3599)), "59:59");
  EXPECT_EQ(ClockDuration(seconds(3600)), "1:00:00");
  EXPECT_EQ(ClockDuration(seconds(3723)), "1:02:03");
  EXPECT_EQ(ClockDuration(seconds(100 * 3600)), "100:00:00");
  EXPECT_EQ(ClockDuration(seconds(-5)), "0:00");
}

}  // namespace
}  // namespace dljob

namespace dljob {
namespace {

TEST(RenderTable, ColumnsAreLeftAlignedThreeSpacesApart) {
  EXPECT_EQ(RenderTable({{"NAME", "GPUS"}, {"a-long-name", "8"}, {"b", "16", "extra"}}),
            "NAME          GPUS\n"
            "a-long-name   8\n"
            "b             16     extra\n");
  EXPECT_EQ(RenderTable({}), "");
}

}  // namespace
}  // namespace dljob
