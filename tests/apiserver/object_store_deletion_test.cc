// Finalizers and graceful pod deletion in the store (object_store.h): what a delete marks, what
// clients may and may not change then, and when the object finally goes.
#include <gtest/gtest.h>

#include "tests/apiserver/object_store.h"

namespace dljob::apiserver {
namespace {

class DeletionTest : public ::testing::Test {
 protected:
  DeletionTest() {
    StoreOptions options;
    options.now = [] {
      return std::chrono::system_clock::time_point(std::chrono::seconds(1000000000));
    };
    store_ = std::make_unique<ObjectStore>(std::move(options));
    EXPECT_TRUE(store_->Create(Type("namespaces"), "", {{"metadata", {{"name", "a"}}}}).ok());
  }

  static ResourceType Type(const std::string& key) { return *ResourceRegistry().FindByKey(key); }

  Json Pod(const std::string& name, const std::string& node) {
    Json pod = {{"metadata", {{"name", name}}},
                {"spec", {{"containers", {{{"name", "c"}, {"image", "i"}}}}}}};
    if (!node.empty()) pod["spec"]["nodeName"] = node;
    ApiResult<Json> created = store_->Create(Type("pods"), "a", pod);
    EXPECT_TRUE(created.ok()) << created.error().ToString();
    return *created;
  }

  bool Exists(const std::string& key, const std::string& name) {
    return store_->Get(Type(key), "a", name).ok();
  }

  std::unique_ptr<ObjectStore> store_;
};

TEST_F(DeletionTest, FinalizersHoldADeletedObjectUntilTheLastOneIsRemoved) {
  ResourceType cms = Type("configmaps");
  Json cm = {{"metadata", {{"name", "c"}, {"finalizers", {"x.io/a", "x.io/b"}}}}};
  ASSERT_TRUE(store_->Create(cms, "a", cm).ok());
  ApiResult<Json> marked = store_->Delete(cms, "a", "c");
  ASSERT_TRUE(marked.ok());
  EXPECT_EQ((*marked)["metadata"]["deletionTimestamp"], "2001-09-09T01:46:40Z");
  EXPECT_EQ((*marked)["metadata"]["deletionGracePeriodSeconds"], 0);
  EXPECT_TRUE(Exists("configmaps", "c"));
  // A second delete changes nothing; a client cannot clear the mark or add a finalizer.
  ApiResult<Json> again = store_->Delete(cms, "a", "c");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(ResourceVersionOf(*again), ResourceVersionOf(*marked));
  ApiResult<Json> added = store_->MergePatch(
      cms, "a", "c", {{"metadata", {{"finalizers", {"x.io/a", "x.io/b", "x.io/c"}}}}});
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(added.error().http, 422);
  EXPECT_NE(added.error().message.find("no new finalizers can be added"), std::string::npos);
  ApiResult<Json> cleared =
      store_->MergePatch(cms, "a", "c", {{"metadata", {{"deletionTimestamp", nullptr}}}});
  ASSERT_TRUE(cleared.ok());
  EXPECT_TRUE((*cleared)["metadata"].contains("deletionTimestamp"));

  ASSERT_TRUE(store_->MergePatch(cms, "a", "c", {{"metadata", {{"finalizers", {"x.io/b"}}}}}).ok());
  EXPECT_TRUE(Exists("configmaps", "c"));
  ASSERT_TRUE(store_->MergePatch(cms, "a", "c", {{"metadata", {{"finalizers", nullptr}}}}).ok());
  EXPECT_FALSE(Exists("configmaps", "c"));
}

TEST_F(DeletionTest, RunningPodsWaitForTheKubeletOnlyWhileGracefulDeletionIsOn) {
  Pod("unbound", "");
  Pod("bound", "node-1");
  Pod("quick", "node-1");
  // Off (no simulated kubelet): every pod goes at once.
  ASSERT_TRUE(store_->Delete(Type("pods"), "a", "bound").ok());
  EXPECT_FALSE(Exists("pods", "bound"));

  store_->SetGracefulPodDeletion(true);
  Pod("bound", "node-1");
  ASSERT_TRUE(store_->Delete(Type("pods"), "a", "unbound").ok());
  EXPECT_FALSE(Exists("pods", "unbound"));  // no kubelet runs it
  ApiResult<Json> marked = store_->Delete(Type("pods"), "a", "bound");
  ASSERT_TRUE(marked.ok());
  EXPECT_EQ((*marked)["metadata"]["deletionGracePeriodSeconds"], 30);
  EXPECT_EQ((*marked)["metadata"]["deletionTimestamp"], "2001-09-09T01:47:10Z");  // now + 30 s
  EXPECT_TRUE(Exists("pods", "bound"));
  DeleteRequest shorter;
  shorter.grace_period_seconds = 5;
  ApiResult<Json> shortened = store_->Delete(Type("pods"), "a", "bound", shorter);
  ASSERT_TRUE(shortened.ok());
  EXPECT_EQ((*shortened)["metadata"]["deletionGracePeriodSeconds"], 5);
  DeleteRequest stopped;  // the kubelet's
  stopped.grace_period_seconds = 0;
  ASSERT_TRUE(store_->Delete(Type("pods"), "a", "bound", stopped).ok());
  EXPECT_FALSE(Exists("pods", "bound"));
  ASSERT_TRUE(store_->Delete(Type("pods"), "a", "quick", stopped).ok());  // --grace-period=0
  EXPECT_FALSE(Exists("pods", "quick"));
}

}  // namespace
}  // namespace dljob::apiserver
