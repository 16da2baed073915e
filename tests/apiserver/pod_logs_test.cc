// PodLogs (pod_logs.h): appended text reaches readers after the configured delay, and a reader
// always learns that more is on its way. No assertion depends on how fast anything ran: "not yet"
// is checked with a delay of an hour, "arrived" by waiting for it.
#include "tests/apiserver/pod_logs.h"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "kube/log_timestamp.h"

namespace dljob::apiserver {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

TEST(PodLogsTest, WithoutADelayTextIsReadAtOnce) {
  PodLogs logs;
  logs.Append("ns/p", "one\n");
  logs.Append("ns/p", "two\n");
  EXPECT_EQ(logs.Read("ns/p"), "one\ntwo\n");
  EXPECT_EQ(logs.Read("ns/p", 4), "two\n");
  EXPECT_FALSE(logs.Unread("ns/p", 8));
  EXPECT_EQ(logs.Read("ns/other"), "");
}

TEST(PodLogsTest, StampedLinesCarryTheTimeOfTheirAppendInOrder) {
  PodLogs logs;
  const auto before = std::chrono::system_clock::now();
  logs.Append("ns/p", "one\ntwo\nthr");
  logs.Append("ns/p", "ee\nfour\n");
  const auto after = std::chrono::system_clock::now();
  const std::string text = logs.Read("ns/p");
  // Read from any offset, a line is stamped where it begins, never in its middle.
  for (size_t offset : {size_t{0}, size_t{4}, size_t{10}}) {
    std::string stamped = logs.Stamped("ns/p", offset, text.substr(offset));
    std::vector<std::string> lines;
    for (size_t pos = 0; pos < stamped.size();) {
      size_t nl = stamped.find('\n', pos);
      lines.push_back(stamped.substr(pos, nl - pos));
      pos = nl + 1;
    }
    std::vector<std::string> texts;
    std::optional<WallTime> previous;
    for (const std::string& line : lines) {
      if (offset == 10 && texts.empty()) {  // begins inside "three": no stamp
        texts.push_back(line);
        continue;
      }
      std::optional<kube::StampedLogLine> split = kube::SplitLogTimestamp(line);
      ASSERT_TRUE(split.has_value()) << line;
      EXPECT_GE(split->time, before);
      EXPECT_LE(split->time, after);
      if (previous) {
        EXPECT_GE(split->time, *previous);
      }
      previous = split->time;
      texts.emplace_back(split->text);
    }
    const std::vector<std::string> want_from_0 = {"one", "two", "three", "four"};
    if (offset == 0) {
      EXPECT_EQ(texts, want_from_0);
    } else if (offset == 4) {
      EXPECT_EQ(texts, std::vector<std::string>(want_from_0.begin() + 1, want_from_0.end()));
    } else if (offset == 10) {
      EXPECT_EQ(texts, (std::vector<std::string>{"ree", "four"}));
    }
  }
}

TEST(PodLogsTest, DelayedTextIsUnreadButNotReadUntilItArrives) {
  PodLogs logs(hours(1));
  logs.Append("ns/p", "one\n");
  EXPECT_EQ(logs.Read("ns/p"), "");
  EXPECT_TRUE(logs.Unread("ns/p", 0));
  // A reader waiting for it gives up at its deadline, with nothing read.
  logs.WaitForMore("ns/p", 0, steady_clock::now() + milliseconds(20));
  EXPECT_EQ(logs.Read("ns/p"), "");
}

TEST(PodLogsTest, AWaitingReaderWakesWhenDelayedTextArrives) {
  PodLogs logs(milliseconds(50));
  logs.Append("ns/p", "one\n");
  logs.Append("ns/p", "two\n");
  // Nothing notifies the reader when the text arrives: it must wake for the arrival itself.
  while (logs.Read("ns/p") != "one\ntwo\n") {
    logs.WaitForMore("ns/p", logs.Read("ns/p").size(), steady_clock::now() + hours(1));
  }
  EXPECT_FALSE(logs.Unread("ns/p", 8));
}

TEST(PodLogsTest, AFollowerWakesForItsOwnPodsTextItsPodsEndAndTheServersWake) {
  PodLogs logs;
  std::atomic<bool> woke{false};
  std::thread follower([&] {
    logs.WaitForMore("ns/p", 0, steady_clock::now() + hours(1));
    woke = true;
  });
  logs.Append("ns/q", "another pod's line\n");
  logs.Append("ns/p", "its own line\n");
  follower.join();  // an hour, were it not woken
  EXPECT_TRUE(woke);

  // Woken without new text: its own pod finished (Wake(pod)), or the server drops streams (Wake()).
  for (const bool own_pod : {true, false}) {
    std::atomic<bool> done{false};
    std::thread waiting([&] {
      logs.WaitForMore("ns/p", logs.Read("ns/p").size(), steady_clock::now() + hours(1));
      done = true;
    });
    while (!done) {  // until the follower waits and is woken: a wake before its wait is not seen
      own_pod ? logs.Wake("ns/p") : logs.Wake();
      std::this_thread::sleep_for(milliseconds(1));
    }
    waiting.join();
  }
}

}  // namespace
}  // namespace dljob::apiserver
