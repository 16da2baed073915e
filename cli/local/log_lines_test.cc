#include "cli/local/log_lines.h"

#include <gtest/gtest.h>

namespace dljob {
namespace {

TEST(ParseMpirunLine, SplitsTagAndText) {
  TaggedLine l = ParseMpirunLine("[1,3]<stdout>:Step 10 loss 0.5");
  EXPECT_EQ(l.rank, 3);
  EXPECT_FALSE(l.is_stderr);
  EXPECT_EQ(l.text, "Step 10 loss 0.5");
  l = ParseMpirunLine("[12,0]<stderr>:");
  EXPECT_EQ(l.rank, 0);
  EXPECT_TRUE(l.is_stderr);
  EXPECT_EQ(l.text, "");
}

TEST(ParseMpirunLine, UntaggedLinesBelongToTheLauncher) {
  for (const char* raw : {"Primary job  terminated normally", "[1,x]<stdout>:a", "[1,2]<other>:a",
                          "[", "", "[a]", "[1,2"}) {
    TaggedLine l = ParseMpirunLine(raw);
    EXPECT_EQ(l.rank, -1) << raw;
    EXPECT_EQ(l.text, raw);
  }
}

TEST(LogLine, RoundTrips) {
  EXPECT_EQ(FormatLogLine(2, "hello"), "[rank 2] hello");
  EXPECT_EQ(FormatLogLine(-1, "bye"), "[mpirun] bye");
  auto l = ParseLogLine("[rank 12] x y");
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->rank, 12);
  EXPECT_EQ(l->text, "x y");
  l = ParseLogLine("[mpirun] m");
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->rank, -1);
  EXPECT_FALSE(ParseLogLine("no tag").has_value());
  EXPECT_FALSE(ParseLogLine("[rank x] y").has_value());
}

}  // namespace
}  // namespace dljob
