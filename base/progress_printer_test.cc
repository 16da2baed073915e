#include "base/progress_printer.h"

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/testing/fake_clock.h"

namespace dljob {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeClock;

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(FormatProgressLine, RecordsWithBarRateAndEta) {
  EXPECT_EQ(FormatProgressLine("pack train", 27000, 60000, 13500, ProgressUnit::kRecords, true),
            "pack train  [#########-----------]  27000/60000 records  45%  13500 records/s  "
            "ETA 0:02");
  EXPECT_EQ(FormatProgressLine("verify", 60000, 60000, 13500, ProgressUnit::kRecords, false),
            "verify  60000/60000 records  100%  13500 records/s");
}

TEST(FormatProgressLine, BytesInHumanUnitsWithSuffix) {
  EXPECT_EQ(FormatProgressLine("cache", 1ull << 30, 2ull << 30, 100 << 20, ProgressUnit::kBytes,
                               false, "  3/10 objects"),
            "cache  1.0 GiB/2.0 GiB  50%  100.0 MiB/s  ETA 0:10  3/10 objects");
}

TEST(FormatProgressLine, NoRateNoEtaAndTheBarNeverOverflows) {
  EXPECT_EQ(FormatProgressLine("x", 0, 10, 0, ProgressUnit::kRecords, true),
            "x  [--------------------]  0/10 records  0%  0 records/s");
  EXPECT_EQ(FormatProgressLine("x", 0, 0, 0, ProgressUnit::kRecords, true),
            "x  [####################]  0/0 records  100%  0 records/s");
  // More done than the total (a source that grew): the bar stays 20 wide.
  EXPECT_EQ(FormatProgressLine("x", 30, 10, 1, ProgressUnit::kRecords, true),
            "x  [####################]  30/10 records  300%  1 records/s");
}

TEST(StatusLine, RedrawsClearsAndKeepsOnATerminal) {
  std::ostringstream out;
  StatusLine line(out, /*tty=*/true);
  line.Clear();  // nothing shown: nothing to erase
  line.Show("a");
  line.Show("b");
  line.Clear();
  line.Show("c");
  line.Keep();
  line.Keep();  // already kept
  EXPECT_EQ(out.str(), "\r\033[Ka\r\033[Kb\r\033[K\r\033[Kc\n");
}

TEST(StatusLine, PrintsPlainLinesWithThePrefixElsewhere) {
  std::ostringstream out;
  StatusLine line(out, /*tty=*/false, "progress: ");
  line.Show("a");
  line.Clear();
  line.Show("b");
  line.Keep();
  EXPECT_EQ(out.str(), "progress: a\nprogress: b\n");
}

// One record per millisecond: 1000 records/s.
TEST(ProgressPrinter, PlainPrintsOneLinePerTenthAndTheEnd) {
  FakeClock clock;
  std::ostringstream out;
  ProgressPrinter printer(out, /*tty=*/false, clock);
  for (uint64_t done = 0; done <= 1000; ++done) {
    printer.Update("verify", done, 1000);
    clock.Advance(milliseconds(1));
  }
  std::vector<std::string> lines = Lines(out.str());
  ASSERT_EQ(lines.size(), 10u) << out.str();
  EXPECT_EQ(lines[0], "verify  100/1000 records  10%  1000 records/s  ETA 0:01");
  EXPECT_EQ(lines[4], "verify  500/1000 records  50%  1000 records/s  ETA 0:01");
  EXPECT_EQ(lines[9], "verify  1000/1000 records  100%  1000 records/s");
  printer.Update("verify", 1000, 1000);  // the end is printed once
  EXPECT_EQ(Lines(out.str()).size(), 10u);
}

TEST(ProgressPrinter, PlainStartsOverForANewLabel) {
  FakeClock clock;
  std::ostringstream out;
  ProgressPrinter printer(out, false, clock);
  printer.Update("pack train", 0, 10);
  clock.Advance(seconds(1));
  printer.Update("pack train", 10, 10);
  printer.Update("pack test", 0, 4);
  clock.Advance(seconds(2));
  printer.Update("pack test", 2, 4);
  EXPECT_EQ(out.str(),
            "pack train  10/10 records  100%  10 records/s\n"
            "pack test  2/4 records  50%  1 records/s  ETA 0:02\n");
}

TEST(ProgressPrinter, PlainWithNothingToDoPrintsTheEndOnce) {
  FakeClock clock;
  std::ostringstream out;
  ProgressPrinter printer(out, false, clock);
  printer.Update("verify", 0, 0);
  printer.Update("verify", 0, 0);
  EXPECT_EQ(out.str(), "verify  0/0 records  100%  0 records/s\n");
}

// Updates every 10 ms with a 100 ms redraw interval: the first one and then every tenth update are
// drawn, and the last always, kept with a newline.
TEST(ProgressPrinter, TerminalRedrawsAtMostEveryIntervalAndKeepsTheEnd) {
  FakeClock clock;
  std::ostringstream out;
  ProgressPrinter printer(out, /*tty=*/true, clock, {ProgressUnit::kBytes, milliseconds(100)});
  printer.Update("cache", 0, 1000 << 10);  // starts the clock
  for (uint64_t i = 1; i <= 25; ++i) {
    clock.Advance(milliseconds(10));
    printer.Update("cache", i * (40 << 10), 1000 << 10);
  }
  const std::string s = out.str();
  size_t draws = 0;
  for (size_t at = s.find("\r\033[K"); at != std::string::npos; at = s.find("\r\033[K", at + 1)) {
    ++draws;
  }
  EXPECT_EQ(draws, 4u) << s;  // at 10 ms, 110 ms, 210 ms, and the end at 250 ms
  EXPECT_EQ(s.find('\n'), s.size() - 1) << "only the final line ends with a newline";
  EXPECT_EQ(s.substr(0, s.find("\r\033[K", 1)),
            "\r\033[Kcache  [--------------------]  40.0 KiB/1000.0 KiB  4%  3.9 MiB/s  ETA 0:00");
  EXPECT_EQ(s.substr(s.rfind("\r\033[K")),
            "\r\033[Kcache  [####################]  1000.0 KiB/1000.0 KiB  100%  3.9 MiB/s\n");
}

TEST(ProgressPrinter, ASinkGetsThePlainLines) {
  FakeClock clock;
  std::vector<std::string> notices;
  ProgressPrinter printer([&](const std::string& line) { notices.push_back(line); }, clock,
                          {ProgressUnit::kBytes, milliseconds(100)});
  printer.Update("fetching oss://b/x", 0, 2 << 20);
  clock.Advance(seconds(1));
  printer.Update("fetching oss://b/x", 1 << 20, 2 << 20, "  1/2 objects");
  clock.Advance(seconds(1));
  printer.Update("fetching oss://b/x", 2 << 20, 2 << 20, "  2/2 objects");
  EXPECT_EQ(notices,
            (std::vector<std::string>{
                "fetching oss://b/x  1.0 MiB/2.0 MiB  50%  1.0 MiB/s  ETA 0:01  1/2 objects",
                "fetching oss://b/x  2.0 MiB/2.0 MiB  100%  1.0 MiB/s  2/2 objects"}));
}

}  // namespace
}  // namespace dljob
