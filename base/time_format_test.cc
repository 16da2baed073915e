#include "base/time_format.h"

#include <gtest/gtest.h>

namespace dljob {
namespace {

using std::chrono::seconds;

TEST(TimeFormat, FormatsUtcSeconds) {
  WallTime t = std::chrono::system_clock::from_time_t(1795323787);  // 2026-11-22T05:03:07Z
  EXPECT_EQ(FormatRfc3339(t), "2026-11-22T05:03:07Z");
  EXPECT_EQ(FormatRfc3339(std::chrono::system_clock::from_time_t(0)), "1970-01-01T00:00:00Z");
}

TEST(TimeFormat, FormatsUtcMicroseconds) {
  WallTime t = std::chrono::system_clock::from_time_t(1795323787);  // 2026-11-22T05:03:07Z
  EXPECT_EQ(FormatRfc3339Micros(t), "2026-11-22T05:03:07.000000Z");
  EXPECT_EQ(FormatRfc3339Micros(t + std::chrono::microseconds(123456)),
            "2026-11-22T05:03:07.123456Z");
  EXPECT_EQ(FormatRfc3339Micros(t + std::chrono::nanoseconds(999'999'999)),
            "2026-11-22T05:03:07.999999Z");
}

TEST(TimeFormat, NanosHaveNineDigitsAndParseBack) {
  WallTime t = std::chrono::system_clock::from_time_t(1795323787) + std::chrono::nanoseconds(5);
  EXPECT_EQ(FormatRfc3339Nanos(t), "2026-11-22T05:03:07.000000005Z");
  EXPECT_EQ(ParseRfc3339(FormatRfc3339Nanos(t)), t);
}

TEST(TimeFormat, ParsesZoneAndFraction) {
  WallTime want = std::chrono::system_clock::from_time_t(1795323787);
  EXPECT_EQ(ParseRfc3339("2026-11-22T05:03:07Z"), want);
  EXPECT_EQ(ParseRfc3339("2026-11-22T05:03:07.123456Z"), want + std::chrono::microseconds(123456));
  EXPECT_EQ(ParseRfc3339("2026-11-22T05:03:07.5Z"), want + std::chrono::milliseconds(500));
  EXPECT_EQ(ParseRfc3339("2026-11-22T05:03:07.1234567891Z"),
            want + std::chrono::nanoseconds(123456789));
  EXPECT_EQ(ParseRfc3339("2026-11-22T07:03:07+02:00"), want);
  EXPECT_EQ(ParseRfc3339("2026-11-22T00:03:07-05:00"), want);
}

TEST(TimeFormat, RejectsMalformed) {
  for (const char* bad :
       {"", "2026-11-22", "2026-11-22T05:03:07", "2026-13-01T00:00:00Z", "2026-11-22T25:00:00Z",
        "2026-11-22T05:03:07.Z", "2026-11-22T05:03:07Zjunk", "2026-11-22 05:03:07Z",
        "2026-11-22T05:03:07+0200"}) {
    EXPECT_FALSE(ParseRfc3339(bad).has_value()) << bad;
  }
}

TEST(TimeFormat, HumanDurationLikeKubectl) {
  EXPECT_EQ(HumanDuration(seconds(-3)), "0s");
  EXPECT_EQ(HumanDuration(seconds(42)), "42s");
  EXPECT_EQ(HumanDuration(seconds(5 * 60 + 12)), "5m12s");
  EXPECT_EQ(HumanDuration(seconds(5 * 60)), "5m");
  EXPECT_EQ(HumanDuration(seconds(12 * 60 + 30)), "12m");
  EXPECT_EQ(HumanDuration(seconds(3 * 3600 + 4 * 60)), "3h4m");
  EXPECT_EQ(HumanDuration(seconds(9 * 3600 + 4 * 60)), "9h");
  EXPECT_EQ(HumanDuration(seconds(2 * 86400 + 3 * 3600)), "2d3h");
  EXPECT_EQ(HumanDuration(seconds(400LL * 86400)), "400d");
}

}  // namespace
}  // namespace dljob
