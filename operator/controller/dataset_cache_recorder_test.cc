// RecordWarmCaches against the fake Api: given a node and a pod event, exactly these calls, in
// this order, and the node's annotation after them.
#include "operator/controller/dataset_cache_recorder.h"

#include <gtest/gtest.h>

#include "kube/testing/fake_api.h"
#include "operator/controller/dataset_cache.h"

namespace dljob::controller {
namespace {

using Json = nlohmann::json;
using kube::resources::kNodes;
using kube::testing::FakeApi;
using Strings = std::vector<std::string>;
using Json = nlohmann::json;

// A worker pod on `node` caching "nas://s/a" and "pvc:b", in `phase`.
Json Pod(const std::string& phase, const std::string& node = "n1") {
  return {{"metadata",
           {{"name", "j-worker-0"},
            {"namespace", "ns"},
            {"annotations",
             {{kCacheSourcesAnnotation, R"({"cache-a": "nas://s/a", "cache-b": "pvc:b"})"}}}}},
          {"spec", {{"nodeName", node}}},
          {"status", {{"phase", phase}}}};
}

Json Node(const std::string& name, const Strings& cached) {
  Json n = {{"metadata", {{"name", name}}}};
  if (!cached.empty()) {
    n["metadata"]["annotations"][kCachedDatasetsAnnotation] = EncodeCachedDatasets(cached);
  }
  return n;
}

class RecordWarmCachesTest : public ::testing::Test {
 protected:
  // Puts the node in the fake and, as the informer would have it, in the node cache.
  void PutNode(const Json& node) { nodes_.Upsert(api_.Put(kNodes, node)); }
  Strings Recorded(const std::string& node) {
    std::optional<Json> n = api_.Object(kNodes, "", node);
    return n ? CachedDatasetsOf(*n) : Strings{};
  }
  Status Update(const Json& old_pod, const Json& pod) {
    return RecordWarmCaches(api_, nodes_, &old_pod, pod);
  }
  Status Add(const Json& pod) { return RecordWarmCaches(api_, nodes_, nullptr, pod); }

  FakeApi api_;
  kube::Store nodes_;
};

TEST_F(RecordWarmCachesTest, APodThatStartsRunningPutsItsDatasetsFirstOnItsNode) {
  PutNode(Node("n1", {"nas://older"}));
  std::string rv = kube::ResourceVersionOf(*api_.Object(kNodes, "", "n1"));
  ASSERT_TRUE(Update(Pod("Pending"), Pod("Running")).ok());
  EXPECT_EQ(api_.CallStrings(), (Strings{"get nodes n1", "patch nodes n1"}));
  EXPECT_EQ(api_.Calls()[1].body, CachedDatasetsPatch({"nas://s/a", "pvc:b", "nas://older"}, rv));
  EXPECT_EQ(Recorded("n1"), (Strings{"nas://s/a", "pvc:b", "nas://older"}));
}

TEST_F(RecordWarmCachesTest, NothingNewlyProvedCallsNothing) {
  PutNode(Node("n1", {}));
  ASSERT_TRUE(Update(Pod("Running"), Pod("Running")).ok());      // a status tick
  ASSERT_TRUE(Update(Pod("Pending"), Pod("Pending")).ok());      // nothing copied yet
  ASSERT_TRUE(Update(Pod("Pending", ""), Pod("Pending")).ok());  // just bound
  EXPECT_EQ(api_.CallStrings(), Strings{});
}

TEST_F(RecordWarmCachesTest, AnAddTheNodeCacheAlreadyListsCallsNothing) {
  // The operator starting again sees every running pod added: nothing to write.
  PutNode(Node("n1", {"pvc:b", "x", "nas://s/a"}));
  ASSERT_TRUE(Add(Pod("Running")).ok());
  EXPECT_EQ(api_.CallStrings(), Strings{});
  // One it does not list is written, in front.
  ASSERT_TRUE(Add(Pod("Running", "n2")).ok());               // n2 is not even in the cache yet
  EXPECT_EQ(api_.CallStrings(), (Strings{"get nodes n2"}));  // and not on the server: nothing
  PutNode(Node("n2", {"x"}));
  api_.ClearCalls();
  ASSERT_TRUE(Add(Pod("Running", "n2")).ok());
  EXPECT_EQ(api_.CallStrings(), (Strings{"get nodes n2", "patch nodes n2"}));
  EXPECT_EQ(Recorded("n2"), (Strings{"nas://s/a", "pvc:b", "x"}));
}

TEST_F(RecordWarmCachesTest, ACacheBehindTheServerWritesOnlyWhenTheServerNeedsIt) {
  nodes_.Upsert(Node("n1", {}));  // the cache has not seen the last write yet
  api_.Put(kNodes, Node("n1", {"nas://s/a", "pvc:b"}));
  ASSERT_TRUE(Add(Pod("Running")).ok());
  EXPECT_EQ(api_.CallStrings(), (Strings{"get nodes n1"}));
}

TEST_F(RecordWarmCachesTest, AConflictReadsTheNodeAgain) {
  PutNode(Node("n1", {}));
  api_.FailNext("patch", "nodes", {409, "Conflict", "the object has been modified"});
  ASSERT_TRUE(Update(Pod("Pending"), Pod("Running")).ok());
  EXPECT_EQ(api_.CallStrings(),
            (Strings{"get nodes n1", "patch nodes n1", "get nodes n1", "patch nodes n1"}));
  EXPECT_EQ(Recorded("n1"), (Strings{"nas://s/a", "pvc:b"}));
}

TEST_F(RecordWarmCachesTest, GivesUpAfterThreeConflictsAndSaysWhere) {
  PutNode(Node("n1", {}));
  for (int i = 0; i < 3; ++i) {
    api_.FailNext("patch", "nodes", {409, "Conflict", "the object has been modified"});
  }
  Status s = Update(Pod("Pending"), Pod("Running"));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("node n1"), std::string::npos) << s.message();
  EXPECT_EQ(api_.CallStrings().size(), 6u);
  EXPECT_EQ(Recorded("n1"), Strings{});
}

TEST_F(RecordWarmCachesTest, AnErrorNamesTheNodeAndAGoneNodeIsNoError) {
  PutNode(Node("n1", {}));
  api_.FailNext("get", "nodes", {500, "InternalError", "etcd is down"});
  Status s = Update(Pod("Pending"), Pod("Running"));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("reading node n1"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("etcd is down"), std::string::npos) << s.message();

  api_.FailNext("patch", "nodes", {403, "Forbidden", "cannot patch nodes"});
  s = Update(Pod("Pending"), Pod("Running"));
  EXPECT_NE(s.message().find("recording cached datasets on node n1"), std::string::npos)
      << s.message();

  api_.Erase(kNodes, "", "n1");
  api_.ClearCalls();
  EXPECT_TRUE(Update(Pod("Pending"), Pod("Running")).ok());
  EXPECT_EQ(api_.CallStrings(), (Strings{"get nodes n1"}));
}

}  // namespace
}  // namespace dljob::controller
