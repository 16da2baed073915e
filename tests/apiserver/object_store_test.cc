#include "tests/apiserver/object_store.h"

#include <set>

#include <gtest/gtest.h>

namespace dljob::apiserver {
namespace {

ResourceType TypeNamed(const std::string& key) {
  ResourceRegistry registry;
  std::optional<ResourceType> t = registry.FindByKey(key);
  EXPECT_TRUE(t.has_value()) << key;
  return *t;
}

ResourceType DLJobType() {
  Json crd = {{"spec",
               {{"group", "dljob.io"},
                {"scope", "Namespaced"},
                {"names", {{"plural", "dljobs"}, {"kind", "DLJob"}, {"shortNames", {"dlj"}}}},
                {"versions",
                 {{{"name", "v1alpha1"},
                   {"served", true},
                   {"storage", true},
                   {"subresources", {{"status", Json::object()}}}}}}}}};
  Result<ResourceType> t = TypeFromCrd(crd);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return *t;
}

Json Named(const std::string& name, Json labels = Json::object()) {
  return {{"metadata", {{"name", name}, {"labels", std::move(labels)}}}};
}

class ObjectStoreTest : public ::testing::Test {
 protected:
  ObjectStoreTest() {
    StoreOptions options;
    options.now = [] {
      return std::chrono::system_clock::time_point(std::chrono::seconds(1000000000));
    };
    store_ = std::make_unique<ObjectStore>(std::move(options));
    for (const char* ns : {"default", "team-a"}) {
      EXPECT_TRUE(store_->Create(namespaces_, "", Named(ns)).ok());
    }
  }

  Json MustCreate(const ResourceType& type, const std::string& ns, Json object) {
    ApiResult<Json> created = store_->Create(type, ns, std::move(object));
    EXPECT_TRUE(created.ok()) << created.error().ToString();
    return created.ok() ? *created : Json();
  }

  std::vector<std::string> ListNames(const ResourceType& type, const std::string& ns,
                                     const ListQuery& query = {}) {
    ApiResult<Json> list = store_->List(type, ns, query);
    EXPECT_TRUE(list.ok());
    std::vector<std::string> names;
    for (const Json& item : (*list)["items"]) names.push_back(NameOf(item));
    return names;
  }

  ResourceType namespaces_ = TypeNamed("namespaces");
  ResourceType pods_ = TypeNamed("pods");
  ResourceType configmaps_ = TypeNamed("configmaps");
  ResourceType dljobs_ = DLJobType();
  std::unique_ptr<ObjectStore> store_;
};

TEST_F(ObjectStoreTest, CreateStampsMetadataAndGet) {
  Json pod = MustCreate(pods_, "default",
                        {{"metadata", {{"generateName", "w-"}}},
                         {"spec", {{"containers", {{{"name", "c"}}}}}},
                         {"status", {{"phase", "Running"}}}});
  std::string name = NameOf(pod);
  EXPECT_EQ(name.rfind("w-", 0), 0u);
  EXPECT_EQ(name.size(), 7u);
  EXPECT_EQ(pod["kind"], "Pod");
  EXPECT_EQ(pod["apiVersion"], "v1");
  EXPECT_EQ(pod["metadata"]["namespace"], "default");
  EXPECT_EQ(pod["metadata"]["generation"], 1);
  EXPECT_EQ(pod["metadata"]["creationTimestamp"], "2001-09-09T01:46:40Z");
  EXPECT_FALSE(UidOf(pod).empty());
  EXPECT_EQ(pod["status"], Json({{"phase", "Pending"}}));  // a pod starts Pending
  EXPECT_EQ(ResourceVersionOf(pod), std::to_string(store_->resource_version()));

  ApiResult<Json> got = store_->Get(pods_, "default", name);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, pod);
  ApiResult<Json> missing = store_->Get(pods_, "team-a", name);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().http, 404);
  EXPECT_EQ(missing.error().message, "pods \"" + name + "\" not found");
}

TEST_F(ObjectStoreTest, CreateRefusesDuplicatesMissingNamespaceAndNoName) {
  MustCreate(configmaps_, "default", Named("c"));
  ApiResult<Json> again = store_->Create(configmaps_, "default", Named("c"));
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(again.error().IsAlreadyExists());
  ApiResult<Json> no_ns = store_->Create(configmaps_, "nowhere", Named("c"));
  ASSERT_FALSE(no_ns.ok());
  EXPECT_EQ(no_ns.error().http, 404);
  ApiResult<Json> mismatch =
      store_->Create(configmaps_, "default", {{"metadata", {{"name", "x"}, {"namespace", "b"}}}});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error().http, 400);
  ApiResult<Json> unnamed = store_->Create(configmaps_, "default", Json::object());
  ASSERT_FALSE(unnamed.ok());
  EXPECT_EQ(unnamed.error().http, 422);
}

// The names a fresh store gives `count` objects created with generateName `prefix`, in order (the
// store's generator has a fixed seed, so every fresh store draws the same names).
std::vector<std::string> FreshStoreNames(const ResourceType& type, const std::string& prefix,
                                         int count) {
  ObjectStore fresh{StoreOptions{}};
  EXPECT_TRUE(fresh.Create(TypeNamed("namespaces"), "", Named("default")).ok());
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    ApiResult<Json> created =
        fresh.Create(type, "default", {{"metadata", {{"generateName", prefix}}}});
    EXPECT_TRUE(created.ok()) << created.error().ToString();
    if (created.ok()) names.push_back(NameOf(*created));
  }
  return names;
}

TEST_F(ObjectStoreTest, GenerateNameDrawsFiveCharactersOfTheServersAlphabet) {
  std::set<std::string> names;
  for (int i = 0; i < 200; ++i) {
    Json cm = MustCreate(configmaps_, "default", {{"metadata", {{"generateName", "resnet50-"}}}});
    const std::string name = NameOf(cm);
    ASSERT_EQ(name.size(), 14u) << name;
    ASSERT_EQ(name.rfind("resnet50-", 0), 0u) << name;
    EXPECT_EQ(name.find_first_not_of("bcdfghjklmnpqrstvwxz2456789", 9), std::string::npos) << name;
    EXPECT_EQ(cm["metadata"]["generateName"], "resnet50-") << "kept, as the real server keeps it";
    names.insert(name);
  }
  EXPECT_EQ(names.size(), 200u);
}

TEST_F(ObjectStoreTest, GenerateNameCutsALongPrefixToFitSixtyThreeCharacters) {
  std::string prefix(70, 'p');
  Json cm = MustCreate(configmaps_, "default", {{"metadata", {{"generateName", prefix}}}});
  EXPECT_EQ(NameOf(cm).size(), 63u);
  EXPECT_EQ(NameOf(cm).substr(0, 58), prefix.substr(0, 58));
  EXPECT_EQ(cm["metadata"]["generateName"], prefix);
}

TEST_F(ObjectStoreTest, AGeneratedNameThatIsTakenIsDrawnAgainByTheServer) {
  // This store draws the same names as a fresh one: the first is taken here, so the server
  // answers with the second, not a 409 the client would have to retry.
  std::vector<std::string> drawn = FreshStoreNames(configmaps_, "w-", 2);
  ASSERT_EQ(drawn.size(), 2u);
  MustCreate(configmaps_, "default", Named(drawn[0]));
  Json cm = MustCreate(configmaps_, "default", {{"metadata", {{"generateName", "w-"}}}});
  EXPECT_EQ(NameOf(cm), drawn[1]);
}

TEST_F(ObjectStoreTest, GenerateNameGivesUpWith409AfterEightTakenNames) {
  std::vector<std::string> drawn = FreshStoreNames(configmaps_, "w-", 9);
  ASSERT_EQ(drawn.size(), 9u);
  for (int i = 0; i < 8; ++i) MustCreate(configmaps_, "default", Named(drawn[i]));
  const std::string version = std::to_string(store_->resource_version());
  ApiResult<Json> refused =
      store_->Create(configmaps_, "default", {{"metadata", {{"generateName", "w-"}}}});
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.error().IsAlreadyExists());
  EXPECT_EQ(refused.error().message,
            "configmaps \"" + drawn[7] +
                "\" already exists, the server was not able to generate a unique name for the "
                "object");
  EXPECT_EQ(std::to_string(store_->resource_version()), version) << "nothing written";
  EXPECT_EQ(ListNames(configmaps_, "default").size(), 8u);
}

TEST_F(ObjectStoreTest, CustomResourceStatusIsDroppedOnCreate) {
  Json job = MustCreate(
      dljobs_, "default",
      {{"metadata", {{"name", "j"}}}, {"spec", {{"gpus", 8}}}, {"status", {{"phase", "Running"}}}});
  EXPECT_FALSE(job.contains("status"));
  EXPECT_EQ(job["apiVersion"], "dljob.io/v1alpha1");
}

TEST_F(ObjectStoreTest, ListsByNamespaceWithListKindAndVersion) {
  MustCreate(configmaps_, "default", Named("b"));
  MustCreate(configmaps_, "default", Named("a"));
  MustCreate(configmaps_, "team-a", Named("c"));
  ApiResult<Json> list = store_->List(configmaps_, "default", {});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)["kind"], "ConfigMapList");
  EXPECT_EQ((*list)["apiVersion"], "v1");
  EXPECT_EQ((*list)["metadata"]["resourceVersion"], std::to_string(store_->resource_version()));
  EXPECT_FALSE((*list)["metadata"].contains("continue"));
  EXPECT_EQ(ListNames(configmaps_, "default"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ListNames(configmaps_, ""), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(ListNames(namespaces_, ""), (std::vector<std::string>{"default", "team-a"}));
}

TEST_F(ObjectStoreTest, PagesWithContinueAtTheFirstPagesVersion) {
  for (const char* n : {"a", "b", "c", "d", "e"}) MustCreate(configmaps_, "default", Named(n));
  ListQuery query;
  query.limit = 2;
  ApiResult<Json> first = store_->List(configmaps_, "default", query);
  ASSERT_TRUE(first.ok());
  std::string version = (*first)["metadata"]["resourceVersion"];
  EXPECT_EQ((*first)["metadata"]["remainingItemCount"], 3);
  std::vector<std::string> names;
  Json page = *first;
  int pages = 1;
  for (;;) {
    for (const Json& item : page["items"]) names.push_back(NameOf(item));
    if (!page["metadata"].contains("continue")) break;
    MustCreate(configmaps_, "default", Named("z" + std::to_string(pages)));  // after the snapshot
    query.continue_token = page["metadata"]["continue"];
    ApiResult<Json> next = store_->List(configmaps_, "default", query);
    ASSERT_TRUE(next.ok());
    EXPECT_EQ(next->at("metadata")["resourceVersion"], version);
    page = *next;
    ++pages;
  }
  // Objects are listed in key order; the ones added while paging come after the last page
  // boundary and so appear too (the store has no MVCC snapshot), but nothing repeats.
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 5),
            (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  std::set<std::string> unique(names.begin(), names.end());
  EXPECT_EQ(unique.size(), names.size());

  query.continue_token = "garbage";
  ApiResult<Json> bad = store_->List(configmaps_, "default", query);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().http, 400);
}

TEST_F(ObjectStoreTest, ListFiltersByLabelAndFieldSelectors) {
  MustCreate(pods_, "default", Named("w0", {{"role", "worker"}}));
  MustCreate(pods_, "default", Named("w1", {{"role", "worker"}}));
  MustCreate(pods_, "default", Named("l", {{"role", "launcher"}}));
  ASSERT_TRUE(store_
                  ->Mutate(pods_, "default", "w1",
                           [](Json& pod) -> std::optional<ApiError> {
                             pod["spec"]["nodeName"] = "gpu-1";
                             return std::nullopt;
                           })
                  .ok());
  ListQuery query;
  query.labels = *LabelSelector::Parse("role=worker");
  EXPECT_EQ(ListNames(pods_, "default", query), (std::vector<std::string>{"w0", "w1"}));
  query.fields = *FieldSelector::Parse("spec.nodeName=");
  EXPECT_EQ(ListNames(pods_, "default", query), (std::vector<std::string>{"w0"}));
  query.labels = {};
  query.fields = *FieldSelector::Parse("metadata.name!=w0,status.phase=Pending");
  EXPECT_EQ(ListNames(pods_, "", query), (std::vector<std::string>{"l", "w1"}));
}

TEST_F(ObjectStoreTest, UpdateRefusesStaleVersionAndBumpsGeneration) {
  Json cm =
      MustCreate(configmaps_, "default", {{"metadata", {{"name", "c"}}}, {"data", {{"k", "1"}}}});
  Json edit = cm;
  edit["data"]["k"] = "2";
  ApiResult<Json> updated = store_->Update(configmaps_, "default", "c", edit);
  ASSERT_TRUE(updated.ok()) << updated.error().ToString();
  EXPECT_EQ((*updated)["data"]["k"], "2");
  EXPECT_EQ((*updated)["metadata"]["generation"], 2);
  EXPECT_NE(ResourceVersionOf(*updated), ResourceVersionOf(cm));
  EXPECT_EQ(UidOf(*updated), UidOf(cm));

  edit["data"]["k"] = "3";  // still carries the old resourceVersion
  ApiResult<Json> stale = store_->Update(configmaps_, "default", "c", edit);
  ASSERT_FALSE(stale.ok());
  EXPECT_TRUE(stale.error().IsConflict());
  EXPECT_EQ(stale.error().reason, "Conflict");
  EXPECT_EQ((*store_->Get(configmaps_, "default", "c"))["data"]["k"], "2");

  Json labels_only = *updated;
  labels_only["metadata"]["labels"] = {{"a", "b"}};
  ApiResult<Json> relabelled = store_->Update(configmaps_, "default", "c", labels_only);
  ASSERT_TRUE(relabelled.ok());
  EXPECT_EQ((*relabelled)["metadata"]["generation"], 2);  // metadata does not bump it

  Json unconditional = *relabelled;
  unconditional["metadata"].erase("resourceVersion");
  unconditional["data"]["k"] = "4";
  EXPECT_TRUE(store_->Update(configmaps_, "default", "c", unconditional).ok());
}

TEST_F(ObjectStoreTest, NoOpUpdateKeepsVersionAndRecordsNothing) {
  Json cm =
      MustCreate(configmaps_, "default", {{"metadata", {{"name", "c"}}}, {"data", {{"k", "1"}}}});
  uint64_t before = store_->resource_version();
  ApiResult<Json> same = store_->Update(configmaps_, "default", "c", cm);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(ResourceVersionOf(*same), ResourceVersionOf(cm));
  EXPECT_EQ(store_->resource_version(), before);
  ApiResult<Json> patched =
      store_->MergePatch(configmaps_, "default", "c", {{"data", {{"k", "1"}}}});
  ASSERT_TRUE(patched.ok());
  EXPECT_EQ(store_->resource_version(), before);
}

TEST_F(ObjectStoreTest, CustomResourceUpdateNeedsResourceVersion) {
  Json job =
      MustCreate(dljobs_, "default", {{"metadata", {{"name", "j"}}}, {"spec", {{"gpus", 8}}}});
  job["metadata"].erase("resourceVersion");
  ApiResult<Json> updated = store_->Update(dljobs_, "default", "j", job);
  ASSERT_FALSE(updated.ok());
  EXPECT_EQ(updated.error().http, 422);
}

TEST_F(ObjectStoreTest, StatusSubresourceIsolatedBothWays) {
  Json job =
      MustCreate(dljobs_, "default", {{"metadata", {{"name", "j"}}}, {"spec", {{"gpus", 8}}}});
  // A status write changes only .status.
  Json status_write = job;
  status_write["status"] = {{"phase", "Running"}};
  status_write["spec"]["gpus"] = 16;
  status_write["metadata"]["labels"] = {{"x", "y"}};
  ApiResult<Json> s =
      store_->Update(dljobs_, "default", "j", status_write, ObjectStore::Part::kStatus);
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ((*s)["status"]["phase"], "Running");
  EXPECT_EQ((*s)["spec"]["gpus"], 8);
  EXPECT_FALSE((*s)["metadata"].contains("labels"));
  EXPECT_EQ((*s)["metadata"]["generation"], 1);

  // A main write keeps the stored .status.
  Json main_write = *s;
  main_write["status"] = {{"phase", "Failed"}};
  main_write["spec"]["gpus"] = 4;
  ApiResult<Json> m = store_->Update(dljobs_, "default", "j", main_write);
  ASSERT_TRUE(m.ok()) << m.error().ToString();
  EXPECT_EQ((*m)["status"]["phase"], "Running");
  EXPECT_EQ((*m)["spec"]["gpus"], 4);
  EXPECT_EQ((*m)["metadata"]["generation"], 2);

  // The same through merge patches.
  ApiResult<Json> ps = store_->MergePatch(
      dljobs_, "default", "j", {{"status", {{"phase", "Succeeded"}}}, {"spec", {{"gpus", 1}}}},
      ObjectStore::Part::kStatus);
  ASSERT_TRUE(ps.ok());
  EXPECT_EQ((*ps)["status"]["phase"], "Succeeded");
  EXPECT_EQ((*ps)["spec"]["gpus"], 4);
  ApiResult<Json> pm = store_->MergePatch(dljobs_, "default", "j", {{"status", nullptr}});
  ASSERT_TRUE(pm.ok());
  EXPECT_EQ((*pm)["status"]["phase"], "Succeeded");
}

TEST_F(ObjectStoreTest, MergePatchMergesDeletesWithNullAndChecksVersion) {
  Json cm = MustCreate(configmaps_, "default",
                       {{"metadata", {{"name", "c"}, {"labels", {{"a", "1"}, {"b", "2"}}}}},
                        {"data", {{"k", "1"}, {"gone", "x"}}}});
  ApiResult<Json> patched =
      store_->MergePatch(configmaps_, "default", "c",
                         {{"metadata", {{"labels", {{"a", nullptr}, {"c", "3"}}}}},
                          {"data", {{"gone", nullptr}, {"n", "2"}}}});
  ASSERT_TRUE(patched.ok());
  EXPECT_EQ((*patched)["metadata"]["labels"], Json({{"b", "2"}, {"c", "3"}}));
  EXPECT_EQ((*patched)["data"], Json({{"k", "1"}, {"n", "2"}}));
  EXPECT_EQ(UidOf(*patched), UidOf(cm));

  ApiResult<Json> stale = store_->MergePatch(
      configmaps_, "default", "c",
      {{"metadata", {{"resourceVersion", ResourceVersionOf(cm)}}}, {"data", {{"k", "9"}}}});
  ASSERT_FALSE(stale.ok());
  EXPECT_TRUE(stale.error().IsConflict());
  ApiResult<Json> renamed =
      store_->MergePatch(configmaps_, "default", "c", {{"metadata", {{"uid", "other"}}}});
  ASSERT_TRUE(renamed.ok());
  EXPECT_EQ(UidOf(*renamed), UidOf(cm));  // identity fields cannot be patched
  EXPECT_FALSE(store_->MergePatch(configmaps_, "default", "nope", Json::object()).ok());
}

Json OwnerRef(const Json& owner) {
  return {{"apiVersion", owner["apiVersion"]},
          {"kind", owner["kind"]},
          {"name", NameOf(owner)},
          {"uid", UidOf(owner)},
          {"controller", true}};
}

TEST_F(ObjectStoreTest, DeletingAnOwnerCollectsItsDependentsRecursively) {
  Json job = MustCreate(dljobs_, "default", Named("j"));
  Json pod = MustCreate(pods_, "default",
                        {{"metadata", {{"name", "p"}, {"ownerReferences", {OwnerRef(job)}}}}});
  MustCreate(configmaps_, "default",
             {{"metadata", {{"name", "grandchild"}, {"ownerReferences", {OwnerRef(pod)}}}}});
  Json other = MustCreate(configmaps_, "default", Named("other-owner"));
  MustCreate(
      configmaps_, "default",
      {{"metadata", {{"name", "shared"}, {"ownerReferences", {OwnerRef(job), OwnerRef(other)}}}}});
  MustCreate(configmaps_, "default", Named("unrelated"));

  ApiResult<Json> deleted = store_->Delete(dljobs_, "default", "j");
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(NameOf(*deleted), "j");
  EXPECT_FALSE(store_->Get(pods_, "default", "p").ok());
  EXPECT_EQ(ListNames(configmaps_, "default"),
            (std::vector<std::string>{"other-owner", "shared", "unrelated"}));
  ASSERT_TRUE(store_->Delete(configmaps_, "default", "other-owner").ok());
  EXPECT_EQ(ListNames(configmaps_, "default"), (std::vector<std::string>{"unrelated"}));
}

TEST_F(ObjectStoreTest, GarbageCollectionFollowsReferencesAsUpdatesLeaveThem) {
  Json job = MustCreate(dljobs_, "default", Named("j"));
  MustCreate(configmaps_, "default", Named("adopted"));  // referenced only by a later update
  Json patch = {{"metadata", {{"ownerReferences", {OwnerRef(job)}}}}};
  ASSERT_TRUE(store_->MergePatch(configmaps_, "default", "adopted", patch).ok());
  MustCreate(configmaps_, "default",
             {{"metadata", {{"name", "released"}, {"ownerReferences", {OwnerRef(job)}}}}});
  Json release = {{"metadata", {{"ownerReferences", nullptr}}}};
  ASSERT_TRUE(store_->MergePatch(configmaps_, "default", "released", release).ok());
  // Deleted and made again under the same name, owned by nobody.
  MustCreate(configmaps_, "default",
             {{"metadata", {{"name", "again"}, {"ownerReferences", {OwnerRef(job)}}}}});
  ASSERT_TRUE(store_->Delete(configmaps_, "default", "again").ok());
  MustCreate(configmaps_, "default", Named("again"));

  ASSERT_TRUE(store_->Delete(dljobs_, "default", "j").ok());
  EXPECT_EQ(ListNames(configmaps_, "default"), (std::vector<std::string>{"again", "released"}));
}

TEST_F(ObjectStoreTest, OrphanPolicyStripsTheReference) {
  Json job = MustCreate(dljobs_, "default", Named("j"));
  MustCreate(pods_, "default",
             {{"metadata", {{"name", "p"}, {"ownerReferences", {OwnerRef(job)}}}}});
  DeleteRequest request;
  request.propagation_policy = "Orphan";
  ASSERT_TRUE(store_->Delete(dljobs_, "default", "j", request).ok());
  ApiResult<Json> pod = store_->Get(pods_, "default", "p");
  ASSERT_TRUE(pod.ok());
  EXPECT_FALSE((*pod)["metadata"].contains("ownerReferences"));
}

TEST_F(ObjectStoreTest, DeletePreconditionsAndPolicy) {
  Json cm = MustCreate(configmaps_, "default", Named("c"));
  DeleteRequest request;
  request.precondition_uid = "not-it";
  ApiResult<Json> wrong_uid = store_->Delete(configmaps_, "default", "c", request);
  ASSERT_FALSE(wrong_uid.ok());
  EXPECT_EQ(wrong_uid.error().http, 409);
  request.precondition_uid = UidOf(cm);
  request.propagation_policy = "Sometimes";
  EXPECT_EQ(store_->Delete(configmaps_, "default", "c", request).error().http, 400);
  request.propagation_policy = "Foreground";
  EXPECT_TRUE(store_->Delete(configmaps_, "default", "c", request).ok());
  EXPECT_EQ(store_->Delete(configmaps_, "default", "c").error().http, 404);
}

TEST_F(ObjectStoreTest, DeletingANamespaceDeletesItsContents) {
  MustCreate(configmaps_, "team-a", Named("c"));
  MustCreate(pods_, "team-a", Named("p"));
  MustCreate(pods_, "default", Named("p"));
  ASSERT_TRUE(store_->Delete(namespaces_, "", "team-a").ok());
  EXPECT_TRUE(ListNames(configmaps_, "").empty());
  EXPECT_EQ(ListNames(pods_, ""), (std::vector<std::string>{"p"}));
  EXPECT_TRUE(store_->Get(pods_, "default", "p").ok());
  EXPECT_EQ(ListNames(namespaces_, ""), (std::vector<std::string>{"default"}));
}

TEST_F(ObjectStoreTest, HistoryIsBoundedAndCompactable) {
  StoreOptions options;
  options.history_limit = 3;
  options.require_namespaces = false;
  ObjectStore small(options);
  for (const char* n : {"a", "b", "c", "d", "e"})
    ASSERT_TRUE(small.Create(configmaps_, "x", Named(n)).ok());
  EXPECT_EQ(small.resource_version(), 5u);
  EXPECT_EQ(small.compacted_version(), 2u);
  std::vector<StoredEvent> events;
  uint64_t now_at = 0;
  EXPECT_FALSE(small.EventsAfter(1, &events, &now_at));
  ASSERT_TRUE(small.EventsAfter(2, &events, &now_at));
  EXPECT_EQ(events.size(), 3u);
  EXPECT_EQ(now_at, 5u);
  small.CompactHistory();
  EXPECT_FALSE(small.EventsAfter(4, &events, &now_at));
  events.clear();
  EXPECT_TRUE(small.EventsAfter(5, &events, &now_at));
  EXPECT_TRUE(events.empty());
}

}  // namespace
}  // namespace dljob::apiserver
