// Spans (spans.h): the JSON-lines file written and read back, the thread's current object, and
// TracedApi's span per call over a FakeApi whose calls take FakeClock time.
#include "kube/runtime/spans.h"

#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "base/testing/fake_clock.h"
#include "kube/runtime/work_queue.h"
#include "kube/testing/fake_api.h"
#include "testing/command.h"

namespace dljob::kube {
namespace {

using std::chrono::milliseconds;

class Collect final : public SpanSink {
 public:
  void Record(Span span) override {
    MutexLock lock(mu_);
    spans_.push_back(std::move(span));
  }
  std::vector<Span> spans() {
    MutexLock lock(mu_);
    return spans_;
  }

 private:
  Mutex mu_;
  std::vector<Span> spans_ GUARDED_BY(mu_);
};

TEST(SpanFile, WritesOneLinePerSpanAndReadsThemBackToTheMicrosecond) {
  dljob::testing::TempDir dir;
  const std::string path = dir.path() + "/spans.jsonl";
  const WallTime t0 = WallTime(std::chrono::seconds(1'790'000'000)) + std::chrono::microseconds(7);
  const std::vector<Span> written = {
      {"ns/a", "queue", "follow-up", t0, t0 + milliseconds(3)},
      {"", "api", "watch pods", t0, t0},
      {"ns/\"odd\"", "child", "pod a-worker-0 updated Running ready", t0, t0}};
  {
    auto file = SpanFile::Open(path);
    ASSERT_TRUE(file.ok()) << file.status().message();
    for (const Span& s : written) (*file)->Record(s);
  }
  auto read = ReadSpanFile(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(*read, written);
}

TEST(SpanFile, ABadLineIsNamedByItsNumber) {
  dljob::testing::TempDir dir;
  const std::string path = dir.path() + "/spans.jsonl";
  {
    auto file = SpanFile::Open(path);
    ASSERT_TRUE(file.ok());
    (*file)->Record({"k", "api", "get pods", WallTime{}, WallTime{}});
  }
  { std::ofstream(path, std::ios::app) << "{\"key\": 3}\n"; }
  auto read = ReadSpanFile(path);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("spans.jsonl:2: not a span"), std::string::npos)
      << read.status().message();
  EXPECT_FALSE(SpanFile::Open(dir.path() + "/no/such/dir/spans").ok());
}

TEST(SpanScope, NamesTheInnermostObjectOfThisThreadOnly) {
  EXPECT_EQ(SpanScope::Current(), "");
  {
    SpanScope outer("ns/a");
    EXPECT_EQ(SpanScope::Current(), "ns/a");
    {
      SpanScope inner("ns/b");
      EXPECT_EQ(SpanScope::Current(), "ns/b");
      std::string elsewhere = "unset";
      std::thread([&] { elsewhere = SpanScope::Current(); }).join();
      EXPECT_EQ(elsewhere, "");
    }
    EXPECT_EQ(SpanScope::Current(), "ns/a");
  }
  EXPECT_EQ(SpanScope::Current(), "");
}

TEST(TracedApi, RecordsEachCallWithItsVerbResourceDurationAndObject) {
  dljob::testing::FakeClock clock;
  testing::FakeApi fake;
  fake.OnCall([&](const testing::Call&) { clock.Advance(milliseconds(4)); });
  Collect sink;
  TracedApi api(fake, sink, clock);
  const WallTime t0 = clock.Now();
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "a-worker-0"}, {"namespace", "ns"}}}};
  {
    SpanScope scope("ns/a");
    ASSERT_TRUE(api.Create(resources::kPods, "ns", pod).ok());
    ASSERT_TRUE(api.Bind("ns", "a-worker-0", "node-1").ok());
    pod = *api.Get(resources::kPods, "ns", "a-worker-0");
    ASSERT_TRUE(api.ReplaceStatus(resources::kPods, "ns", pod).ok());
    ASSERT_TRUE(
        api.MergePatch(resources::kPods, "ns", "a-worker-0", {{"metadata", Json::object()}}).ok());
  }
  std::unique_ptr<Api> view = api.WithDeadline(clock.MonotonicNow() + std::chrono::seconds(5));
  ASSERT_TRUE(view->List(resources::kPods, "ns", {}).ok());
  ASSERT_TRUE(view->Delete(resources::kPods, "ns", "a-worker-0").ok());

  std::vector<std::string> seen;
  for (const Span& s : sink.spans()) {
    EXPECT_EQ(s.name, "api");
    EXPECT_EQ(s.end - s.start, milliseconds(4)) << s.detail;
    EXPECT_GE(s.start, t0);
    seen.push_back((s.key.empty() ? "-" : s.key) + " " + s.detail);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"ns/a create pods", "ns/a create pods/binding",
                                            "ns/a get pods", "ns/a update pods/status",
                                            "ns/a patch pods", "- list pods", "- delete pods"}));
}

TEST(WorkQueueHandout, TellsWhenEachKeyBecameReadyAndItsLane) {
  dljob::testing::FakeClock clock;
  std::vector<std::string> handed;
  WorkQueue queue(clock, {}, [&](const std::string& key, WallTime ready, Lane lane) {
    handed.push_back(
        key + " waited " +
        std::to_string(std::chrono::duration_cast<milliseconds>(clock.Now() - ready).count()) +
        (lane == Lane::kFollowUp ? " follow-up" : " normal"));
  });
  queue.Add("a");
  clock.Advance(milliseconds(10));
  queue.Add("b", Lane::kFollowUp);
  queue.Add("a");  // already waiting: it keeps its first time
  clock.Advance(milliseconds(5));
  ASSERT_EQ(queue.TryGet(), "b");
  ASSERT_EQ(queue.TryGet(), "a");
  queue.Add("a");  // while processing: ready from now, handed out after Done
  clock.Advance(milliseconds(7));
  queue.Done("a");
  queue.Done("b");
  queue.AddAfter("b", milliseconds(20));
  clock.Advance(milliseconds(30));
  ASSERT_EQ(queue.TryGet(), "a");
  ASSERT_EQ(queue.TryGet(), "b");
  EXPECT_EQ(handed, (std::vector<std::string>{"b waited 5 follow-up", "a waited 15 normal",
                                              "a waited 37 normal", "b waited 10 normal"}));
}

}  // namespace
}  // namespace dljob::kube
