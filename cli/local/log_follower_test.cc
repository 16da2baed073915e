// FollowLog's waits go to the injected clock: following a log that has nothing new waits 200 ms
// on it between reads (recorded by the FakeClock, not slept) until the job is finished.
#include "cli/local/log_follower.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "base/testing/fake_clock.h"

namespace dljob {
namespace {

TEST(FollowLogTest, WaitsOnTheClockUntilTheJobIsFinished) {
  char path[] = "/tmp/dljob-log-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << "one\n";
  testing::FakeClock clock;
  int asked = 0;
  auto finished = [&] { return ++asked >= 3; };  // finished when asked the third time
  std::ostringstream out;
  LogOptions options;
  options.follow = true;
  Status s = FollowLog(path, options, finished, clock, out);
  std::remove(path);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(out.str(), "one\n");
  EXPECT_EQ(asked, 3);
  EXPECT_EQ(clock.sleeps(), std::vector<Clock::Duration>{std::chrono::milliseconds(200)});
}

}  // namespace
}  // namespace dljob
