#include "tests/apiserver/watch_cursor.h"

#include <gtest/gtest.h>

namespace dljob::apiserver {
namespace {

class WatchCursorTest : public ::testing::Test {
 protected:
  WatchCursorTest() : store_(Options()) {
    ResourceRegistry registry;
    pods_ = *registry.FindByKey("pods");
    configmaps_ = *registry.FindByKey("configmaps");
  }

  static StoreOptions Options() {
    StoreOptions options;
    options.require_namespaces = false;
    return options;
  }

  void CreatePod(const std::string& ns, const std::string& name, Json labels = Json::object()) {
    ASSERT_TRUE(
        store_.Create(pods_, ns, {{"metadata", {{"name", name}, {"labels", std::move(labels)}}}})
            .ok());
  }

  void Relabel(const std::string& ns, const std::string& name, Json labels) {
    ASSERT_TRUE(
        store_.MergePatch(pods_, ns, name, {{"metadata", {{"labels", std::move(labels)}}}}).ok());
  }

  WatchFilter Filter(const std::string& ns, const std::string& labels = "") {
    WatchFilter f;
    f.type = pods_;
    f.ns = ns;
    f.labels = *LabelSelector::Parse(labels);
    return f;
  }

  // "TYPE name" for each event.
  static std::vector<std::string> Describe(const std::vector<WatchOut>& events) {
    std::vector<std::string> out;
    for (const WatchOut& e : events) out.push_back(e.type + " " + NameOf(*e.object));
    return out;
  }

  std::vector<std::string> PollNames(WatchCursor& cursor) {
    ApiResult<std::vector<WatchOut>> events = cursor.Poll();
    EXPECT_TRUE(events.ok());
    return events.ok() ? Describe(*events) : std::vector<std::string>{};
  }

  ObjectStore store_;
  ResourceType pods_;
  ResourceType configmaps_;
};

using Names = std::vector<std::string>;

TEST_F(WatchCursorTest, FromEmptyOrZeroStartsWithSyntheticAdded) {
  CreatePod("a", "p1");
  CreatePod("b", "p2");
  ASSERT_TRUE(store_.Create(configmaps_, "a", {{"metadata", {{"name", "cm"}}}}).ok());
  for (const char* rv : {"", "0"}) {
    std::vector<WatchOut> initial;
    ApiResult<WatchCursor> cursor = WatchCursor::Start(store_, Filter("a"), rv, &initial);
    ASSERT_TRUE(cursor.ok());
    EXPECT_EQ(Describe(initial), Names{"ADDED p1"});
    EXPECT_EQ(cursor->version(), store_.resource_version());
    EXPECT_TRUE(PollNames(*cursor).empty());
  }
  std::vector<WatchOut> all;
  ASSERT_TRUE(WatchCursor::Start(store_, Filter(""), "", &all).ok());
  EXPECT_EQ(Describe(all), (Names{"ADDED p1", "ADDED p2"}));
}

TEST_F(WatchCursorTest, FromAVersionSendsLaterChangesInOrder) {
  CreatePod("a", "p1");
  std::string from = std::to_string(store_.resource_version());
  CreatePod("a", "p2");
  Relabel("a", "p1", {{"x", "1"}});
  ASSERT_TRUE(store_.Delete(pods_, "a", "p2").ok());
  ASSERT_TRUE(store_.Create(configmaps_, "a", {{"metadata", {{"name", "cm"}}}}).ok());
  std::vector<WatchOut> initial;
  ApiResult<WatchCursor> cursor = WatchCursor::Start(store_, Filter("a"), from, &initial);
  ASSERT_TRUE(cursor.ok());
  EXPECT_TRUE(initial.empty());
  EXPECT_EQ(PollNames(*cursor), (Names{"ADDED p2", "MODIFIED p1", "DELETED p2"}));
  EXPECT_TRUE(PollNames(*cursor).empty());
  CreatePod("a", "p3");
  EXPECT_EQ(PollNames(*cursor), Names{"ADDED p3"});

  Json bookmark = cursor->Bookmark();
  EXPECT_EQ(bookmark["type"], "BOOKMARK");
  EXPECT_EQ(bookmark["object"]["kind"], "Pod");
  EXPECT_EQ(bookmark["object"]["metadata"]["resourceVersion"],
            std::to_string(store_.resource_version()));
}

TEST_F(WatchCursorTest, EventObjectsCarryTheirOwnVersion) {
  CreatePod("a", "p1");
  std::vector<WatchOut> initial;
  ApiResult<WatchCursor> cursor = WatchCursor::Start(store_, Filter("a"), "", &initial);
  ASSERT_TRUE(cursor.ok());
  Relabel("a", "p1", {{"x", "1"}});
  uint64_t modified_at = store_.resource_version();
  ASSERT_TRUE(store_.Delete(pods_, "a", "p1").ok());
  ApiResult<std::vector<WatchOut>> events = cursor->Poll();
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ(ResourceVersionOf(*(*events)[0].object), std::to_string(modified_at));
  EXPECT_EQ(ResourceVersionOf(*(*events)[1].object), std::to_string(store_.resource_version()));
}

TEST_F(WatchCursorTest, CompactedVersionIsGone) {
  CreatePod("a", "p1");
  std::string old = std::to_string(store_.resource_version());
  std::vector<WatchOut> initial;
  ApiResult<WatchCursor> cursor = WatchCursor::Start(store_, Filter("a"), old, &initial);
  ASSERT_TRUE(cursor.ok());
  CreatePod("a", "p2");
  store_.CompactHistory();
  ApiResult<std::vector<WatchOut>> events = cursor->Poll();
  ASSERT_FALSE(events.ok());
  EXPECT_TRUE(events.error().IsGone());
  EXPECT_EQ(events.error().reason, "Expired");

  ApiResult<WatchCursor> late = WatchCursor::Start(store_, Filter("a"), old, &initial);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().http, 410);
  EXPECT_TRUE(
      WatchCursor::Start(store_, Filter("a"), std::to_string(store_.resource_version()), &initial)
          .ok());
  EXPECT_EQ(WatchCursor::Start(store_, Filter("a"), "12x", &initial).error().http, 400);

  Json error = ExpiredEventJson("too old");
  EXPECT_EQ(error["type"], "ERROR");
  EXPECT_EQ(error["object"]["kind"], "Status");
  EXPECT_EQ(error["object"]["code"], 410);
  EXPECT_EQ(error["object"]["reason"], "Expired");
  EXPECT_EQ(WatchEventLine("ERROR", error["object"]), error.dump() + "\n");
  const Json pod = {{"metadata", {{"name", "p\"1"}}}, {"spec", {{"nodeName", "n"}}}};
  EXPECT_EQ(WatchEventLine("ADDED", pod), WatchEventJson("ADDED", pod).dump() + "\n");
}

TEST_F(WatchCursorTest, SelectorTransitionsBecomeAddedAndDeleted) {
  CreatePod("a", "p1", {{"role", "worker"}});
  CreatePod("a", "p2", {{"role", "launcher"}});
  std::vector<WatchOut> initial;
  ApiResult<WatchCursor> cursor =
      WatchCursor::Start(store_, Filter("a", "role=worker"), "0", &initial);
  ASSERT_TRUE(cursor.ok());
  EXPECT_EQ(Describe(initial), Names{"ADDED p1"});
  Relabel("a", "p2", {{"role", "worker"}});    // starts matching
  Relabel("a", "p1", {{"role", "launcher"}});  // stops matching
  Relabel("a", "p1", {{"extra", "1"}});        // still not matching: nothing
  Relabel("a", "p2", {{"extra", "1"}});        // matching before and after
  ASSERT_TRUE(store_.Delete(pods_, "a", "p1").ok());
  EXPECT_EQ(PollNames(*cursor), (Names{"ADDED p2", "DELETED p1", "MODIFIED p2"}));
}

TEST_F(WatchCursorTest, WaitReturnsAtOnceWhenTheStoreIsAlreadyPast) {
  std::vector<WatchOut> initial;
  ApiResult<WatchCursor> cursor = WatchCursor::Start(store_, Filter("a"), "", &initial);
  ASSERT_TRUE(cursor.ok());
  CreatePod("a", "p1");
  // Already past: returns without waiting for the (far) deadline.
  cursor->Wait(std::chrono::steady_clock::now() + std::chrono::hours(1));
  EXPECT_EQ(PollNames(*cursor), Names{"ADDED p1"});
}

}  // namespace
}  // namespace dljob::apiserver
