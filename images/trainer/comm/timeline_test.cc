#include "images/trainer/comm/timeline.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace dljob::trainer {
namespace {

using Clock = Timeline::Clock;

TEST(TimelineTest, KeepsEventsInOrderWithTheirFields) {
  Timeline timeline(8);
  const Clock::time_point t0 = Clock::now();
  timeline.Record("FORWARD", "compute", t0, t0 + std::chrono::microseconds(250), kMainThread, 3);
  timeline.Record("ALLREDUCE", "comm", t0 + std::chrono::microseconds(300),
                  t0 + std::chrono::microseconds(400), kCommThread, 3, 2);
  std::vector<TraceEvent> events = timeline.Events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_STREQ(events[0].name, "FORWARD");
  EXPECT_EQ(events[0].duration_us, 250);
  EXPECT_EQ(events[0].bucket, -1);
  EXPECT_STREQ(events[1].name, "ALLREDUCE");
  EXPECT_EQ(events[1].thread, kCommThread);
  EXPECT_EQ(events[1].bucket, 2);
  EXPECT_EQ(events[1].start_us - events[0].start_us, 300);
  EXPECT_EQ(timeline.dropped(), 0);
}

TEST(TimelineTest, IsBoundedAndKeepsTheNewestEvents) {
  Timeline timeline(3);
  const Clock::time_point t0 = Clock::now();
  for (int64_t step = 1; step <= 5; ++step) {
    timeline.Record("BACKWARD", "compute", t0, t0, kMainThread, step);
  }
  std::vector<TraceEvent> events = timeline.Events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].step, 3);
  EXPECT_EQ(events[2].step, 5);
  EXPECT_EQ(timeline.dropped(), 2);
}

TEST(TimelineTest, SpansRecordOnlyWhenEnabled) {
  Timeline timeline;
  { TimelineSpan span(&timeline, "OPTIMIZER", "compute", kMainThread, 7); }
  { TimelineSpan span(nullptr, "OPTIMIZER", "compute", kMainThread, 8); }  // a null check only
  ASSERT_EQ(timeline.Events().size(), 1u);
  EXPECT_EQ(timeline.Events()[0].step, 7);
}

TEST(TimelineTest, RecordsFromManyThreads) {
  Timeline timeline(1000);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&timeline, t] {
      for (int i = 0; i < 100; ++i) {
        TimelineSpan span(&timeline, "FUSE", "comm", t % 2, i, t);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(timeline.Events().size(), 400u);
}

TEST(TimelineTest, FormatsChromeTraceJson) {
  std::vector<TraceEvent> events = {{"NEGOTIATE", "comm", 10, 5, kCommThread, 1, 0},
                                    {"FORWARD", "compute", 0, 9, kMainThread, 1, -1}};
  nlohmann::json trace = nlohmann::json::parse(FormatChromeTrace(events, 3, 4));
  const nlohmann::json& list = trace.at("traceEvents");
  std::vector<nlohmann::json> complete;
  bool dropped_note = false;
  for (const nlohmann::json& e : list) {
    EXPECT_EQ(e.at("pid"), 3);
    if (e.at("ph") == "X") complete.push_back(e);
    if (e.at("ph") == "i") dropped_note = e.at("args").at("older_events_dropped") == 4;
  }
  EXPECT_TRUE(dropped_note);
  ASSERT_EQ(complete.size(), 2u);
  EXPECT_EQ(complete[0].at("name"), "NEGOTIATE");
  EXPECT_EQ(complete[0].at("cat"), "comm");
  EXPECT_EQ(complete[0].at("ts"), 10);
  EXPECT_EQ(complete[0].at("dur"), 5);
  EXPECT_EQ(complete[0].at("tid"), kCommThread);
  EXPECT_EQ(complete[0].at("args").at("step"), 1);
  EXPECT_EQ(complete[0].at("args").at("bucket"), 0);
  EXPECT_FALSE(complete[1].at("args").contains("bucket"));
}

TEST(TimelineTest, PathPerRank) {
  EXPECT_EQ(TimelinePath("/tmp/trace.json", 0, 1), "/tmp/trace.json");
  EXPECT_EQ(TimelinePath("/tmp/trace.json", 1, 2), "/tmp/trace.rank1.json");
  EXPECT_EQ(TimelinePath("/tmp/trace", 0, 4), "/tmp/trace.rank0.json");
  EXPECT_EQ(TimelinePath(".json", 2, 4), ".json.rank2.json");
}

TEST(TimelineTest, WritesAFileThatParsesAndNamesAnUnwritablePath) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("timeline_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  struct Cleanup {
    std::filesystem::path dir;
    ~Cleanup() { std::filesystem::remove_all(dir); }
  } cleanup{dir};
  Timeline timeline;
  { TimelineSpan span(&timeline, "BACKWARD", "compute", kMainThread, 1); }
  const std::string path = (dir / "t.json").string();
  ASSERT_TRUE(WriteTimeline(timeline, 0, path).ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json trace = nlohmann::json::parse(text.str());
  std::set<std::string> names;
  for (const nlohmann::json& e : trace.at("traceEvents")) names.insert(e.at("name"));
  EXPECT_TRUE(names.count("BACKWARD"));
  Status bad = WriteTimeline(timeline, 0, (dir / "missing" / "t.json").string());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("--timeline"), std::string::npos);
  EXPECT_NE(bad.message().find("missing/t.json"), std::string::npos);
}

}  // namespace
}  // namespace dljob::trainer
