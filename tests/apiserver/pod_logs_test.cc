// PodLogs (pod_logs.h): appended text reaches readers after the configured delay, and a reader
// always learns that more is on its way. No assertion depends on how fast anything ran: "not yet"
// is checked with a delay of an hour, "arrived" by waiting for it.
#include "tests/apiserver/pod_logs.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace dljob::apiserver
