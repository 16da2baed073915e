#include "jobs/log_lines.h"

#include <gtest/gtest.h>

namespace dljob {
namespace {

TEST(ParseMpirunLine, SplitsTagAndText) {
  MpirunLine l = ParseMpirunLine("[1,3]<stdout>:Step 10 loss 0.5");
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
    MpirunLine l = ParseMpirunLine(raw);
    EXPECT_EQ(l.rank, -1) << raw;
    EXPECT_EQ(l.text, raw);
  }
}

TEST(ParseMpirunLine, JoinsALineTheRankWroteInPieces) {
  MpirunLine l = ParseMpirunLine("[1,1]<stderr>:error: [1,1]<stderr>:cannot read \"x\"");
  EXPECT_EQ(l.rank, 1);
  EXPECT_TRUE(l.is_stderr);
  EXPECT_EQ(l.text, "error: cannot read \"x\"");
  // Another rank's tag inside the text is that rank's business: left alone.
  EXPECT_EQ(ParseMpirunLine("[1,1]<stdout>:a [1,2]<stdout>:b").text, "a [1,2]<stdout>:b");
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
