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

TEST(OtherRanksPieces, FindsAnotherRanksLineInsideARankWrittenInPieces) {
  // Rank 0 wrote "400\timages/sec ..." in two pieces; rank 1's metric line landed between them.
  const std::string line = "[1,0]<stdout>:400\t[1,1]<stdout>:DLJOB_METRIC {\"step\":3}";
  const std::vector<MpirunLine> pieces = OtherRanksPieces(line);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0].rank, 1);
  EXPECT_FALSE(pieces[0].is_stderr);
  EXPECT_EQ(pieces[0].text, "DLJOB_METRIC {\"step\":3}");
  EXPECT_EQ(ParseMpirunLine(line).text, "400\t[1,1]<stdout>:DLJOB_METRIC {\"step\":3}");

  // Adjacent pieces of one rank are joined; the line's own rank and stream are not pieces.
  const std::vector<MpirunLine> more = OtherRanksPieces(
      "[1,0]<stdout>:a [1,2]<stderr>:b [1,2]<stderr>:c [1,0]<stdout>:d [1,3]<stdout>:e");
  ASSERT_EQ(more.size(), 2u);
  EXPECT_EQ(more[0].rank, 2);
  EXPECT_TRUE(more[0].is_stderr);
  EXPECT_EQ(more[0].text, "b c ");
  EXPECT_EQ(more[1].rank, 3);
  EXPECT_EQ(more[1].text, "e");
}

TEST(OtherRanksPieces, NoneInPlainUntaggedOrLookalikeLines) {
  for (const char* raw :
       {"[1,0]<stdout>:[0] 400\timages/sec: 12 [a,b] [1,x]<stdout>:y", "[1,0]<stdout>:plain",
        "[1,0]<stdout>:a [1,0]<stdout>:b", "Primary job terminated [1,1]<stdout>:x", "", "[1,2"}) {
    EXPECT_TRUE(OtherRanksPieces(raw).empty()) << raw;
  }
}

TEST(OtherRanksPieces, ALongLineOfTagLikeTextIsReadThrough) {
  // Every '[' starts a look for a tag; each look reads only as far as a tag could go.
  std::string line = "[1,0]<stdout>:";
  for (int i = 0; i < 100000; ++i) line += "[1,[1,0]<stdout>:";
  line += "[1,2]<stdout>:x" + std::string(100000, '[');
  const std::vector<MpirunLine> pieces = OtherRanksPieces(line);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0].rank, 2);
  EXPECT_EQ(pieces[0].text, "x" + std::string(100000, '['));
  std::string text;  // the rank's own tags left out
  for (int i = 0; i < 100000; ++i) text += "[1,";
  EXPECT_EQ(ParseMpirunLine(line).text, text + "[1,2]<stdout>:x" + std::string(100000, '['));
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
TEST(LogLinesTest, MetricOfTakesTheTagsRankWhenTheSampleNamesNone) {
  std::optional<MetricSample> tagged =
      MetricOf(ParseMpirunLine("[1,3]<stdout>:DLJOB_METRIC {\"step\":7}"));
  ASSERT_TRUE(tagged);
  EXPECT_EQ(tagged->step, 7);
  EXPECT_EQ(tagged->rank, 3);
  std::optional<MetricSample> own =
      MetricOf(ParseMpirunLine("[1,3]<stdout>:DLJOB_METRIC {\"step\":7,\"rank\":0}"));
  ASSERT_TRUE(own);
  EXPECT_EQ(own->rank, 0);
  std::optional<MetricSample> untagged = MetricOf(ParseMpirunLine("DLJOB_METRIC {\"step\":1}"));
  ASSERT_TRUE(untagged);
  EXPECT_FALSE(untagged->rank);
  EXPECT_FALSE(MetricOf(ParseMpirunLine("[1,3]<stdout>:images/sec 400")));
}

}  // namespace dljob
