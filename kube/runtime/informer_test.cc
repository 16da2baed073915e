#include "kube/runtime/informer.h"

#include <chrono>
#include <condition_variable>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/mutex.h"
#include "kube/testing/fake_api.h"
#include "testing/wait.h"

namespace dljob::kube {
namespace {

using kube::testing::Call;
using kube::testing::FakeApi;
using resources::kPods;

// The label the operator's pod informer selects on (operator/controller/builders.h); kube/runtime
// may not include the operator, so the test names it itself.
constexpr char kJobNameLabel[] = "dljob.io/job-name";

Json Pod(const std::string& name, const std::string& job = "j", const std::string& note = "") {
  Json pod = {{"metadata", {{"name", name}, {"namespace", "ns"}}}, {"spec", {{"note", note}}}};
  if (!job.empty()) pod["metadata"]["labels"][kJobNameLabel] = job;
  return pod;
}

using dljob::testing::Eventually;  // liveness only: a hang becomes a failure

// A handler that holds the informer's thread until the test releases it.
struct Gate {
  Mutex mu;
  std::condition_variable_any cv;
  bool held GUARDED_BY(mu) = false;     // the handler is holding the informer's thread
  bool release GUARDED_BY(mu) = false;  // the test lets it go
};

// What the handlers saw, as "add ns/a", "update ns/a", "delete ns/b".
class Recorder {
 public:
  EventHandlers Handlers() {
    return {[this](const Json& o) { Record("add " + ObjectKey(o)); },
            [this](const Json&, const Json& o) { Record("update " + ObjectKey(o)); },
            [this](const Json& o) { Record("delete " + ObjectKey(o)); }};
  }
  std::vector<std::string> Events() const {
    MutexLock lock(mu_);
    return events_;
  }
  size_t Size() const { return Events().size(); }

 private:
  void Record(std::string e) {
    MutexLock lock(mu_);
    events_.push_back(std::move(e));
  }
  mutable Mutex mu_;
  std::vector<std::string> events_ GUARDED_BY(mu_);
};

// The defaults, but for the label selector and the backoff.
InformerOptions Options(std::string label_selector, Duration initial_backoff,
                        Duration max_backoff) {
  InformerOptions o;
  o.label_selector = std::move(label_selector);
  o.initial_backoff = initial_backoff;
  o.max_backoff = max_backoff;
  return o;
}

class InformerTest : public ::testing::Test {
 protected:
  InformerTest()
      : informer_(
            api_, kPods,
            Options(kJobNameLabel, std::chrono::milliseconds(1), std::chrono::milliseconds(10)),
            [](const Json& o) {
              return o["metadata"]["labels"].value(kJobNameLabel, std::string());
            }) {
    informer_.AddHandlers(recorder_.Handlers());
  }
  ~InformerTest() override { Stop(); }

  void Start() {
    thread_ = std::jthread([this](std::stop_token stop) { informer_.Run(stop); });
    ASSERT_TRUE(Eventually([&] { return informer_.HasSynced() && api_.OpenWatches() == 1; }));
  }
  void Stop() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
  }
  std::vector<Call> CallsOf(const std::string& verb) const {
    std::vector<Call> out;
    for (const Call& c : api_.Calls()) {
      if (c.verb == verb) out.push_back(c);
    }
    return out;
  }
  std::string Rv(const std::string& name) {
    return ResourceVersionOf(*api_.Object(kPods, "ns", name));
  }

  FakeApi api_;
  Recorder recorder_;
  Informer informer_;
  std::jthread thread_;
};

TEST_F(InformerTest, InitialListFillsTheStoreAndCallsAddHandlers) {
  api_.Put(kPods, Pod("a"));
  api_.Put(kPods, Pod("b", "k"));
  api_.Put(kPods, Pod("stranger", ""));  // no job label: filtered out by the selector
  Start();

  EXPECT_EQ(informer_.store().Keys(), (std::vector<std::string>{"ns/a", "ns/b"}));
  EXPECT_EQ(recorder_.Events(), (std::vector<std::string>{"add ns/a", "add ns/b"}));
  ASSERT_EQ(informer_.store().ByIndex("k").size(), 1u);
  EXPECT_EQ(ObjectKey(informer_.store().ByIndex("k")[0]), "ns/b");
  EXPECT_EQ(api_.CallStrings(), (std::vector<std::string>{"list pods", "watch pods"}));
  // The watch continues exactly where the list left off, with the same selector.
  std::vector<Call> watches = CallsOf("watch");
  EXPECT_EQ(watches[0].body["resourceVersion"], Rv("stranger"));
  EXPECT_EQ(watches[0].body["labelSelector"], kJobNameLabel);
}

TEST_F(InformerTest, AppliesWatchEventsInOrder) {
  api_.Put(kPods, Pod("a"));
  api_.Put(kPods, Pod("b"));
  Start();

  api_.Put(kPods, Pod("a", "j", "changed"));
  api_.Put(kPods, Pod("c"));
  api_.Erase(kPods, "ns", "b");
  api_.Put(kPods, Pod("stranger", ""));
  ASSERT_TRUE(Eventually([&] { return recorder_.Size() == 5; }));

  EXPECT_EQ(recorder_.Events(), (std::vector<std::string>{"add ns/a", "add ns/b", "update ns/a",
                                                          "add ns/c", "delete ns/b"}));
  EXPECT_EQ(informer_.store().Keys(), (std::vector<std::string>{"ns/a", "ns/c"}));
  EXPECT_EQ((*informer_.store().Get("ns/a"))["spec"]["note"], "changed");
  EXPECT_EQ(informer_.Lists(), 1);
}

TEST(InformerTransformTest, ListedAndWatchedObjectsAreStoredAndHandedOnTransformed) {
  FakeApi api;
  auto with_fields = [](const std::string& name) {
    Json pod = Pod(name);
    pod["metadata"]["managedFields"] = Json::array({{{"manager", "kubectl"}}});
    return pod;
  };
  api.Put(kPods, with_fields("a"));
  InformerOptions options;
  options.transform = WithoutManagedFields;
  Informer informer(api, kPods, options);
  Mutex mu;
  std::vector<Json> handed;  // what the handlers saw
  auto keep = [&](const Json& o) {
    MutexLock lock(mu);
    handed.push_back(o);
  };
  informer.AddHandlers({keep, [&](const Json&, const Json& o) { keep(o); }, keep});
  std::jthread thread([&](std::stop_token stop) { informer.Run(stop); });
  ASSERT_TRUE(Eventually([&] { return informer.HasSynced() && api.OpenWatches() == 1; }));
  api.Put(kPods, with_fields("b"));
  ASSERT_TRUE(Eventually([&] { return informer.store().Size() == 2; }));
  thread.request_stop();
  thread.join();

  for (const std::string key : {"ns/a", "ns/b"}) {
    const Json& meta = (*informer.store().Find(key))["metadata"];
    EXPECT_FALSE(meta.contains("managedFields")) << key;
    EXPECT_EQ(meta["name"], key.substr(3));  // the rest is kept
  }
  MutexLock lock(mu);
  ASSERT_EQ(handed.size(), 2u);
  for (const Json& o : handed) EXPECT_FALSE(o["metadata"].contains("managedFields"));
}

TEST(InformerCompactTest, ACompactStoreStillHandsTheHandlersTheOldAndTheNewObject) {
  FakeApi api;
  api.Put(kPods, Pod("a", "j", "first"));
  InformerOptions options;
  options.compact = true;
  Informer informer(api, kPods, options);
  Mutex mu;
  std::vector<std::pair<Json, Json>> updates;  // (old, new) as the handler saw them
  informer.AddHandlers({nullptr,
                        [&](const Json& old, const Json& o) {
                          MutexLock lock(mu);
                          updates.emplace_back(old, o);
                        },
                        nullptr});
  std::jthread thread([&](std::stop_token stop) { informer.Run(stop); });
  ASSERT_TRUE(Eventually([&] { return informer.HasSynced() && api.OpenWatches() == 1; }));
  api.Put(kPods, Pod("a", "j", "second"));
  ASSERT_TRUE(Eventually([&] {
    MutexLock lock(mu);
    return updates.size() == 1;
  }));
  thread.request_stop();
  thread.join();

  EXPECT_TRUE(informer.store().compact());
  MutexLock lock(mu);
  EXPECT_EQ(updates[0].first["spec"]["note"], "first");
  EXPECT_EQ(updates[0].second["spec"]["note"], "second");
  EXPECT_EQ(*informer.store().Get("ns/a"), updates[0].second);
}

TEST_F(InformerTest, BookmarkMovesOnlyTheVersionAndTheNextWatchStartsThere) {
  api_.Put(kPods, Pod("a"));
  Start();

  std::string bookmark = api_.Bookmark();
  ASSERT_TRUE(Eventually([&] { return informer_.LastResourceVersion() == bookmark; }));
  EXPECT_EQ(recorder_.Events(), (std::vector<std::string>{"add ns/a"}));
  EXPECT_EQ(informer_.store().Keys(), (std::vector<std::string>{"ns/a"}));

  api_.EndWatches();  // the server's timeoutSeconds passed: watch again, no list
  ASSERT_TRUE(Eventually([&] { return CallsOf("watch").size() == 2 && api_.OpenWatches() == 1; }));
  EXPECT_EQ(CallsOf("watch")[1].body["resourceVersion"], bookmark);
  EXPECT_EQ(informer_.Lists(), 1);
}

TEST_F(InformerTest, ErrorEventRelistsAndNotifiesOnlyTheDifference) {
  api_.Put(kPods, Pod("a"));
  api_.Put(kPods, Pod("b"));
  api_.Put(kPods, Pod("c"));
  // A handler that holds the informer's thread while the test changes the world behind its
  // back: the changes and a compaction happen while it is not reading, so its watch can only
  // answer "too old" (an ERROR event with 410) and the informer must re-list.
  Gate gate;
  informer_.AddHandlers({[&](const Json& o) {
                           if (ObjectKey(o) != "ns/gate") return;
                           MutexLock lock(gate.mu);
                           gate.held = true;
                           gate.cv.notify_all();
                           gate.cv.wait(gate.mu, [&]() REQUIRES(gate.mu) { return gate.release; });
                         },
                         nullptr, nullptr});
  Start();
  api_.Put(kPods, Pod("gate"));
  {
    MutexLock lock(gate.mu);
    gate.cv.wait(gate.mu, [&]() REQUIRES(gate.mu) { return gate.held; });
  }
  api_.Put(kPods, Pod("a", "j", "changed"));
  api_.Erase(kPods, "ns", "b");
  api_.Put(kPods, Pod("d"));
  api_.Compact();
  {
    MutexLock lock(gate.mu);
    gate.release = true;
    gate.cv.notify_all();
  }
  ASSERT_TRUE(Eventually([&] { return informer_.Lists() == 2 && api_.OpenWatches() == 1; }));

  // c and gate did not change, so they are not reported again; b vanished unseen: deleted.
  EXPECT_EQ(recorder_.Events(),
            (std::vector<std::string>{"add ns/a", "add ns/b", "add ns/c", "add ns/gate",
                                      "update ns/a", "add ns/d", "delete ns/b"}));
  EXPECT_EQ(informer_.store().Keys(),
            (std::vector<std::string>{"ns/a", "ns/c", "ns/d", "ns/gate"}));
  EXPECT_EQ(api_.CallStrings(),
            (std::vector<std::string>{"list pods", "watch pods", "list pods", "watch pods"}));
  EXPECT_EQ(CallsOf("watch")[1].body["resourceVersion"], Rv("d"));
}

TEST_F(InformerTest, GoneOnWatchAndFailedListsAreRetried) {
  api_.Put(kPods, Pod("a"));
  api_.FailNext("list", "pods", {500, "InternalError", "etcd is sad"});
  api_.FailNext("watch", "pods", {410, "Expired", "too old resource version"});
  Start();

  EXPECT_EQ(api_.CallStrings(), (std::vector<std::string>{"list pods", "list pods", "watch pods",
                                                          "list pods", "watch pods"}));
  EXPECT_EQ(informer_.Lists(), 2);  // successful ones
  EXPECT_EQ(recorder_.Events(), (std::vector<std::string>{"add ns/a"}));
}

TEST_F(InformerTest, BrokenStreamRewatchesFromTheLastVersionSeen) {
  api_.Put(kPods, Pod("a"));
  Start();
  api_.Put(kPods, Pod("a", "j", "changed"));
  ASSERT_TRUE(Eventually([&] { return recorder_.Size() == 2; }));
  std::string seen = Rv("a");

  api_.BreakWatches();
  ASSERT_TRUE(Eventually([&] { return CallsOf("watch").size() == 2 && api_.OpenWatches() == 1; }));
  EXPECT_EQ(CallsOf("watch")[1].body["resourceVersion"], seen);
  EXPECT_EQ(informer_.Lists(), 1);

  api_.Put(kPods, Pod("e"));  // the new watch delivers what follows
  ASSERT_TRUE(Eventually([&] { return recorder_.Size() == 3; }));
  EXPECT_EQ(recorder_.Events().back(), "add ns/e");
}

TEST_F(InformerTest, StopsPromptlyWhileWatching) {
  Start();
  Stop();  // would hang here if a blocked Next() were not cancelled
  EXPECT_EQ(api_.OpenWatches(), 0);
}

TEST(InformerStopTest, StopsPromptlyWhileBackingOff) {
  FakeApi api;
  for (int i = 0; i < 10; ++i) api.FailNext("list", "pods", {503, "ServiceUnavailable", "down"});
  Informer informer(api, kPods, Options("", std::chrono::hours(1), std::chrono::hours(1)));
  std::jthread thread([&](std::stop_token stop) { informer.Run(stop); });
  ASSERT_TRUE(Eventually([&] { return api.Calls().size() == 1; }));
  thread.request_stop();
  thread.join();  // an hour's backoff must not hold it
  EXPECT_FALSE(informer.HasSynced());
}

}  // namespace
}  // namespace dljob::kube
