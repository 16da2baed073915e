#include "kube/runtime/store.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace dljob::kube {
namespace {

Json Pod(const std::string& name, const std::string& job, const std::string& rv = "1") {
  return {
      {"metadata",
       {{"name", name}, {"namespace", "ns"}, {"resourceVersion", rv}, {"labels", {{"job", job}}}}},
      {"status", {{"phase", "Running"}, {"podIP", "10.0.0.7"}, {"ready", true}}}};
}

std::string JobOf(const Json& o) { return o["metadata"]["labels"].value("job", ""); }

std::vector<std::string> Names(const Objects& objects) {
  std::vector<std::string> out;
  for (const ObjectPtr& o : objects) out.push_back((*o)["metadata"]["name"]);
  return out;
}

// Every read gives the same objects whether the store keeps them as they are or packed.
class StoreTest : public ::testing::TestWithParam<bool> {
 protected:
  Store store_{JobOf, GetParam()};
};

TEST_P(StoreTest, ReadsGiveBackWhatWasStored) {
  EXPECT_EQ(store_.compact(), GetParam());
  EXPECT_EQ(store_.Upsert(Pod("b", "j1")), nullptr);
  EXPECT_EQ(store_.Upsert(Pod("a", "j1")), nullptr);
  EXPECT_EQ(store_.Upsert(Pod("c", "j2")), nullptr);
  EXPECT_EQ(store_.Size(), 3u);
  EXPECT_EQ(store_.Get("ns/a"), Pod("a", "j1"));
  EXPECT_EQ(*store_.Find("ns/c"), Pod("c", "j2"));
  EXPECT_EQ(store_.Get("ns/zz"), std::nullopt);
  EXPECT_EQ(store_.Find("ns/zz"), nullptr);
  EXPECT_EQ(Names(store_.All()), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(store_.List(), (std::vector<Json>{Pod("a", "j1"), Pod("b", "j1"), Pod("c", "j2")}));
  EXPECT_EQ(Names(store_.AllByIndex("j1")), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(store_.ByIndex("j2"), std::vector<Json>{Pod("c", "j2")});
  EXPECT_TRUE(store_.ByIndex("none").empty());
  EXPECT_EQ(store_.Keys(), (std::vector<std::string>{"ns/a", "ns/b", "ns/c"}));
}

TEST_P(StoreTest, UpsertAndRemoveReturnThePreviousObjectAndKeepTheIndex) {
  store_.Upsert(Pod("a", "j1", "1"));
  ObjectPtr old = store_.Upsert(Pod("a", "j2", "2"));  // moved to another job
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(*old, Pod("a", "j1", "1"));
  EXPECT_TRUE(store_.AllByIndex("j1").empty());
  EXPECT_EQ(store_.ByIndex("j2"), std::vector<Json>{Pod("a", "j2", "2")});
  ObjectPtr gone = store_.Remove("ns/a");
  ASSERT_NE(gone, nullptr);
  EXPECT_EQ(*gone, Pod("a", "j2", "2"));
  EXPECT_EQ(store_.Remove("ns/a"), nullptr);
  EXPECT_TRUE(store_.AllByIndex("j2").empty());
  EXPECT_EQ(store_.Size(), 0u);
}

TEST_P(StoreTest, AReaderKeepsTheObjectItReadWhileItIsReplaced) {
  store_.Upsert(Pod("a", "j1", "1"));
  ObjectPtr read = store_.Find("ns/a");
  store_.Upsert(Pod("a", "j1", "2"));
  EXPECT_EQ(ResourceVersionOf(*read), "1");
  EXPECT_EQ(ResourceVersionOf(*store_.Find("ns/a")), "2");
}

INSTANTIATE_TEST_SUITE_P(AsTheyAreAndPacked, StoreTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Compact" : "Shared"; });

TEST(StoreSharingTest, AStoreThatIsNotCompactHandsOutTheObjectItHolds) {
  Store store;
  store.Upsert(Pod("a", "j1"));
  EXPECT_EQ(store.Find("ns/a"), store.Find("ns/a"));  // the same shared object, not copies
  Store compact(nullptr, true);
  compact.Upsert(Pod("a", "j1"));
  EXPECT_NE(compact.Find("ns/a"), compact.Find("ns/a"));  // unpacked on each read
  EXPECT_EQ(*compact.Find("ns/a"), *compact.Find("ns/a"));
}

}  // namespace
}  // namespace dljob::kube
