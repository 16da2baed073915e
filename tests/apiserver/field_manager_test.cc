// Field management's pure core (field_types.h, field_manager.h): the shapes of objects,
// comparison, merge, and apply/update sequences with the managedFields and conflicts the real
// server gives for them. field_set_test.cc has FieldsV1 and paths.
#include "tests/apiserver/field_manager.h"

#include <gtest/gtest.h>

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

FieldPath P(std::initializer_list<std::string> elements) { return FieldPath(elements); }

// A custom resource's schema with one of each shape.
std::shared_ptr<const Json> WidgetSchema() {
  return std::make_shared<const Json>(Json::parse(R"({
    "type": "object",
    "properties": {
      "spec": {"type": "object", "properties": {
        "gpus": {"type": "integer"},
        "command": {"type": "array", "items": {"type": "string"}},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "workers": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {
                      "name": {"type": "string"}, "image": {"type": "string"}}}},
        "limits": {"type": "object", "additionalProperties": {"type": "string"}},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                     "additionalProperties": {"type": "string"}}}},
      "status": {"type": "object", "properties": {"phase": {"type": "string"}}}}})"));
}

FieldType Widget() { return FieldType::Root(WidgetSchema(), false); }

ResourceType Builtin(const std::string& plural) {
  ResourceType t;
  t.version = "v1";
  t.plural = plural;
  return t;
}

// What a manager owns when it writes an object, shape by shape.
TEST(FieldManagerTest, FieldSetOfFollowsTheShapes) {
  struct Case {
    const char* name;
    FieldType root;
    const char* object;
    std::vector<FieldPath> want;
  } cases[] = {
      {"struct fields are not members, leaves are",
       Widget(),
       R"({"spec":{"gpus":2}})",
       {P({"f:spec", "f:gpus"})}},
      {"lists are atomic by default",
       Widget(),
       R"({"spec":{"command":["a","b"]}})",
       {P({"f:spec", "f:command"})}},
      {"sets by value",
       Widget(),
       R"({"spec":{"tags":["x","y"]}})",
       {P({"f:spec", "f:tags", R"(v:"x")"}), P({"f:spec", "f:tags", R"(v:"y")"})}},
      {"maps of items by key",
       Widget(),
       R"({"spec":{"workers":[{"name":"w","image":"i"}]}})",
       {P({"f:spec", "f:workers", R"(k:{"name":"w"})"}),
        P({"f:spec", "f:workers", R"(k:{"name":"w"})", "f:image"}),
        P({"f:spec", "f:workers", R"(k:{"name":"w"})", "f:name"})}},
      {"map keys are members",
       Widget(),
       R"({"spec":{"limits":{"cpu":"1"}}})",
       {P({"f:spec", "f:limits", "f:cpu"})}},
      {"unknown fields are deduced maps",
       Widget(),
       R"({"spec":{"extra":{"a":{"b":1}}}})",
       {P({"f:spec", "f:extra", "f:a"}), P({"f:spec", "f:extra", "f:a", "f:b"})}},
      {"atomic maps are one value",
       Widget(),
       R"({"spec":{"selector":{"a":"b"}}})",
       {P({"f:spec", "f:selector"})}},
      {"an unkeyable list is one value",
       Widget(),
       R"({"spec":{"workers":[{"image":"i"}]}})",
       {P({"f:spec", "f:workers"})}},
      {"duplicate keys make one value",
       Widget(),
       R"({"spec":{"workers":[{"name":"w"},{"name":"w"}]}})",
       {P({"f:spec", "f:workers"})}},
      {"metadata is ObjectMeta",
       Widget(),
       R"({"metadata":{"name":"n","labels":{"a":"b"},"finalizers":["f"]}})",
       {P({"f:metadata", "f:finalizers", R"(v:"f")"}), P({"f:metadata", "f:labels", "f:a"}),
        P({"f:metadata", "f:name"})}},
      {"ConfigMap data",
       FieldType::RootOf(Builtin("configmaps")),
       R"({"data":{"a":"1"}})",
       {P({"f:data", "f:a"})}},
      {"container ports by number and protocol, TCP by default",
       FieldType::RootOf(Builtin("pods")),
       R"({"spec":{"containers":[{"name":"c","ports":[{"containerPort":80}]}]}})",
       {P({"f:spec", "f:containers", R"(k:{"name":"c"})"}),
        P({"f:spec", "f:containers", R"(k:{"name":"c"})", "f:name"}),
        P({"f:spec", "f:containers", R"(k:{"name":"c"})", "f:ports",
           R"(k:{"containerPort":80,"protocol":"TCP"})"}),
        P({"f:spec", "f:containers", R"(k:{"name":"c"})", "f:ports",
           R"(k:{"containerPort":80,"protocol":"TCP"})", "f:containerPort"})}},
      {"a built-in kind's unknown objects are structs",
       FieldType::RootOf(Builtin("pods")),
       R"({"spec":{"securityContext":{"runAsUser":1}}})",
       {P({"f:spec", "f:securityContext", "f:runAsUser"})}},
  };
  for (const Case& c : cases) {
    FieldSet got = FieldSetOf(Json::parse(c.object), c.root);
    FieldSet want;
    for (const FieldPath& p : c.want) want.Insert(p);
    EXPECT_EQ(got.ToFieldsV1(), want.ToFieldsV1()) << c.name;
  }
}

TEST(FieldManagerTest, CompareReportsAddedModifiedAndRemoved) {
  struct Case {
    const char* before;
    const char* after;
    std::vector<FieldPath> added, modified, removed;
  } cases[] = {
      {R"({"spec":{"gpus":1}})", R"({"spec":{"gpus":2}})", {}, {P({"f:spec", "f:gpus"})}, {}},
      {R"({})", R"({"spec":{"gpus":2}})", {P({"f:spec"}), P({"f:spec", "f:gpus"})}, {}, {}},
      {R"({"spec":{"gpus":1,"command":["a"]}})",
       R"({"spec":{"gpus":1}})",
       {},
       {},
       {P({"f:spec", "f:command"})}},
      {R"({"spec":{"workers":[{"name":"a","image":"1"}]}})",
       R"({"spec":{"workers":[{"name":"a","image":"2"},{"name":"b"}]}})",
       {P({"f:spec", "f:workers", R"(k:{"name":"b"})"}),
        P({"f:spec", "f:workers", R"(k:{"name":"b"})", "f:name"})},
       {P({"f:spec", "f:workers", R"(k:{"name":"a"})", "f:image"})},
       {}},
      {R"({"spec":{"limits":{}}})", R"({"spec":{"limits":{}}})", {}, {}, {}},
  };
  for (const Case& c : cases) {
    Json before = Json::parse(c.before), after = Json::parse(c.after);
    Comparison got = Compare(&before, &after, Widget());
    auto set = [](const std::vector<FieldPath>& paths) {
      FieldSet s;
      for (const FieldPath& p : paths) s.Insert(p);
      return s;
    };
    EXPECT_EQ(got.added, set(c.added)) << c.before << " -> " << c.after;
    EXPECT_EQ(got.modified, set(c.modified)) << c.before << " -> " << c.after;
    EXPECT_EQ(got.removed, set(c.removed)) << c.before << " -> " << c.after;
  }
}

TEST(FieldManagerTest, MergeFollowsTheShapes) {
  struct Case {
    const char* name;
    const char* live;
    const char* config;
    const char* want;
  } cases[] = {
      {"fields merge", R"({"spec":{"gpus":1,"command":["a"]}})", R"({"spec":{"gpus":2}})",
       R"({"spec":{"gpus":2,"command":["a"]}})"},
      {"atomic lists are replaced", R"({"spec":{"command":["a","b"]}})",
       R"({"spec":{"command":["c"]}})", R"({"spec":{"command":["c"]}})"},
      {"sets are unions", R"({"spec":{"tags":["a","b"]}})", R"({"spec":{"tags":["c","a"]}})",
       R"({"spec":{"tags":["c","a","b"]}})"},
      {"keyed items merge, the configuration's order first",
       R"({"spec":{"workers":[{"name":"a","image":"1"},{"name":"x"},{"name":"b","image":"2"}]}})",
       R"({"spec":{"workers":[{"name":"b","image":"3"},{"name":"a"}]}})",
       R"({"spec":{"workers":[{"name":"x"},{"name":"b","image":"3"},{"name":"a","image":"1"}]}})"},
      {"atomic maps are replaced", R"({"spec":{"selector":{"a":"1","b":"2"}}})",
       R"({"spec":{"selector":{"c":"3"}}})", R"({"spec":{"selector":{"c":"3"}}})"},
      {"maps merge by key", R"({"spec":{"limits":{"a":"1"}}})", R"({"spec":{"limits":{"b":"2"}}})",
       R"({"spec":{"limits":{"a":"1","b":"2"}}})"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(MergeObjects(Json::parse(c.live), Json::parse(c.config), Widget()),
              Json::parse(c.want))
        << c.name;
  }
}

TEST(FieldManagerTest, RemoveFieldsTakesWholeItemsAndFields) {
  Json object = Json::parse(
      R"({"spec":{"gpus":1,"workers":[{"name":"a","image":"1"},{"name":"b","image":"2"}]}})");
  FieldSet remove = {P({"f:spec", "f:gpus"}), P({"f:spec", "f:workers", R"(k:{"name":"a"})"}),
                     P({"f:spec", "f:workers", R"(k:{"name":"b"})", "f:image"})};
  EXPECT_EQ(RemoveFields(object, remove, Widget()),
            Json::parse(R"({"spec":{"workers":[{"name":"b"}]}})"));
}

// A widget in the store, written by managers one after another.
class ManagedWidget {
 public:
  ManagedWidget() {
    object_ = {{"apiVersion", "example.io/v1"},
               {"kind", "Widget"},
               {"metadata", {{"name", "w"}, {"namespace", "default"}}}};
  }

  // Applies `config` (the spec only); returns "" or the conflict message.
  std::string Apply(const std::string& manager, const Json& spec, bool force = false) {
    Json config = {{"apiVersion", "example.io/v1"},
                   {"kind", "Widget"},
                   {"metadata", {{"name", "w"}}},
                   {"spec", spec}};
    ApplyResult r = ApplyConfiguration(Context(manager), object_, config, force);
    if (!r.conflicts.empty()) return MakeApplyConflict(r.conflicts).error.message;
    object_ = r.object;
    return "";
  }
  // An update (PUT, merge patch) that leaves `spec`.
  void Update(const std::string& manager, const Json& spec) {
    Json next = object_;
    next["spec"] = spec;
    Json managed = UpdatedManagedFields(Context(manager), &object_, next);
    SetManagedFields(next, managed);
    object_ = next;
  }

  const Json& spec() const { return object_["spec"]; }
  // manager (operation) -> its fields' paths.
  std::map<std::string, std::vector<std::string>> Owners() const {
    std::map<std::string, std::vector<std::string>> out;
    std::optional<ManagedFields> entries =
        DecodeManagedFields(object_["metadata"].value("managedFields", Json::array()));
    for (const ManagerEntry& e : entries.value()) {
      for (const FieldPath& p : e.fields.members()) {
        out[e.manager + " (" + e.operation + ")"].push_back(PathString(p));
      }
    }
    return out;
  }
  const Json& object() const { return object_; }
  int tick_ = 0;

 private:
  WriteContext Context(const std::string& manager) {
    char now[32];
    std::snprintf(now, sizeof now, "2026-01-01T00:00:%02dZ", ++tick_);
    return {Widget(), manager, "example.io/v1", "", FieldScope::kAllButStatus, now};
  }
  Json object_;
};

using Owners = std::map<std::string, std::vector<std::string>>;

TEST(FieldManagerTest, AnApplierOwnsWhatItAppliesAndPrunesWhatItDropsAlone) {
  ManagedWidget w;
  ASSERT_EQ(w.Apply("alice", {{"gpus", 2}, {"command", {"a"}}}), "");
  EXPECT_EQ(w.Owners(), Owners({{"alice (Apply)", {".spec.command", ".spec.gpus"}}}));
  ASSERT_EQ(w.Apply("alice", {{"gpus", 2}}), "");  // command left out: pruned
  EXPECT_EQ(w.spec(), Json({{"gpus", 2}}));
  EXPECT_EQ(w.Owners(), Owners({{"alice (Apply)", {".spec.gpus"}}}));
  ASSERT_EQ(w.Apply("alice", Json::object()), "");  // everything left out
  EXPECT_FALSE(w.object().contains("spec") && w.spec().contains("gpus")) << w.object();
  EXPECT_FALSE(w.object()["metadata"].contains("managedFields")) << w.object();
}

TEST(FieldManagerTest, ASharedFieldStaysWhenOneApplierDropsIt) {
  ManagedWidget w;
  ASSERT_EQ(w.Apply("alice", {{"gpus", 2}, {"tags", {"x"}}}), "");
  ASSERT_EQ(w.Apply("bob", {{"gpus", 2}}), "");  // the same value: shared, no conflict
  EXPECT_EQ(w.Owners(), Owners({{"alice (Apply)", {".spec.gpus", ".spec.tags[=\"x\"]"}},
                                {"bob (Apply)", {".spec.gpus"}}}));
  ASSERT_EQ(w.Apply("alice", {{"tags", {"x"}}}), "");
  EXPECT_EQ(w.spec()["gpus"], 2);  // bob still owns it
  EXPECT_EQ(w.Owners(),
            Owners({{"alice (Apply)", {".spec.tags[=\"x\"]"}}, {"bob (Apply)", {".spec.gpus"}}}));
}

TEST(FieldManagerTest, ConflictsNameTheFieldAndManagerAndForceTakesThem) {
  ManagedWidget w;
  ASSERT_EQ(w.Apply("alice", {{"gpus", 2}, {"limits", {{"cpu", "1"}}}}), "");
  EXPECT_EQ(w.Apply("bob", {{"gpus", 4}}),
            "Apply failed with 1 conflict: conflict with \"alice\": .spec.gpus");
  EXPECT_EQ(w.spec()["gpus"], 2);
  EXPECT_EQ(w.Apply("bob", {{"gpus", 4}, {"limits", {{"cpu", "2"}}}}),
            "Apply failed with 2 conflicts: conflicts with \"alice\":\n- .spec.gpus\n"
            "- .spec.limits.cpu");
  ASSERT_EQ(w.Apply("bob", {{"gpus", 4}}, /*force=*/true), "");
  EXPECT_EQ(w.spec()["gpus"], 4);
  EXPECT_EQ(w.Owners(),
            Owners({{"alice (Apply)", {".spec.limits.cpu"}}, {"bob (Apply)", {".spec.gpus"}}}));
}

TEST(FieldManagerTest, UpdatesOwnWhatTheyChangeAndConflictWithAppliers) {
  ManagedWidget w;
  w.Update("kubectl-create", {{"gpus", 1}, {"command", {"a"}}});
  EXPECT_EQ(w.Owners(),
            Owners({{"kubectl-create (Update)", {".spec", ".spec.command", ".spec.gpus"}}}));
  w.Update("kubectl-edit", {{"gpus", 3}, {"command", {"a"}}});
  EXPECT_EQ(w.Owners(), Owners({{"kubectl-create (Update)", {".spec", ".spec.command"}},
                                {"kubectl-edit (Update)", {".spec.gpus"}}}));
  EXPECT_EQ(w.Apply("ci", {{"gpus", 4}}),
            "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using example.io/v1: "
            ".spec.gpus");
  ASSERT_EQ(w.Apply("ci", {{"gpus", 3}}), "");  // the value it has: shared
  // An update that removes a field takes it from everyone.
  w.Update("kubectl-edit", {{"gpus", 3}});
  EXPECT_EQ(w.Owners(), Owners({{"ci (Apply)", {".spec.gpus"}},
                                {"kubectl-create (Update)", {".spec"}},
                                {"kubectl-edit (Update)", {".spec.gpus"}}}));
}

TEST(FieldManagerTest, KeyedItemsMergeAndEachApplierKeepsItsOwn) {
  ManagedWidget w;
  ASSERT_EQ(w.Apply("alice", {{"workers", {{{"name", "a"}, {"image", "1"}}}}}), "");
  ASSERT_EQ(w.Apply("bob", {{"workers", {{{"name", "b"}, {"image", "2"}}}}}), "");
  EXPECT_EQ(w.spec()["workers"],
            Json::parse(R"([{"name":"a","image":"1"},{"name":"b","image":"2"}])"));
  ASSERT_EQ(w.Apply("alice", {{"workers", {{{"name", "a"}, {"image", "3"}}}}}), "");
  EXPECT_EQ(w.spec()["workers"],
            Json::parse(R"([{"name":"a","image":"3"},{"name":"b","image":"2"}])"));
  ASSERT_EQ(w.Apply("alice", {{"gpus", 1}}), "");  // drops item a: removed, b stays
  EXPECT_EQ(w.spec()["workers"], Json::parse(R"([{"name":"b","image":"2"}])"));
  EXPECT_EQ(w.Apply("alice", {{"workers", {{{"name", "b"}, {"image", "9"}}}}}),
            "Apply failed with 1 conflict: conflict with \"bob\": .spec.workers[name=\"b\"].image");
}

// kubectl's server-side apply takes over what kubectl applied client-side, as long as the live
// values are still the ones the last-applied annotation records.
TEST(FieldManagerTest, KubectlTakesOverFieldsItAppliedClientSide) {
  const char* kAnnotation = "kubectl.kubernetes.io/last-applied-configuration";
  ManagedWidget w;
  Json last = {{"apiVersion", "example.io/v1"},
               {"kind", "Widget"},
               {"metadata", {{"name", "w"}}},
               {"spec", {{"gpus", 1}, {"tags", {"x"}}}}};
  Json next = w.object();
  next["metadata"]["annotations"][kAnnotation] = last.dump();
  next["spec"] = last["spec"];
  WriteContext csa{Widget(), "kubectl-client-side-apply", "example.io/v1", "", FieldScope::kAll,
                   "t"};
  SetManagedFields(next, UpdatedManagedFields(csa, &w.object(), next));  // as applied client-side
  ApplyResult taken = ApplyConfiguration(
      {Widget(), "kubectl", "example.io/v1", "", FieldScope::kAllButStatus, "t2"}, next,
      {{"apiVersion", "example.io/v1"}, {"kind", "Widget"}, {"spec", {{"gpus", 2}}}}, false);
  ASSERT_TRUE(taken.conflicts.empty());
  EXPECT_EQ(taken.object["spec"]["gpus"], 2);
  EXPECT_EQ(taken.object["metadata"]["annotations"][kAnnotation],
            R"({"apiVersion":"example.io/v1","kind":"Widget","spec":{"gpus":2}})"
            "\n");
  // Another manager gets the conflict.
  ApplyResult other = ApplyConfiguration(
      {Widget(), "ci", "example.io/v1", "", FieldScope::kAllButStatus, "t2"}, next,
      {{"apiVersion", "example.io/v1"}, {"kind", "Widget"}, {"spec", {{"gpus", 2}}}}, false);
  EXPECT_EQ(MakeApplyConflict(other.conflicts).error.message,
            "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using "
            "example.io/v1: .spec.gpus");
  // Changed since it was applied: the field is not kubectl's to take.
  Json changed = next;
  changed["spec"]["gpus"] = 5;
  ApplyResult refused = ApplyConfiguration(
      {Widget(), "kubectl", "example.io/v1", "", FieldScope::kAllButStatus, "t2"}, changed,
      {{"apiVersion", "example.io/v1"}, {"kind", "Widget"}, {"spec", {{"gpus", 2}}}}, false);
  EXPECT_EQ(refused.conflicts.size(), 1u);
}

TEST(FieldManagerTest, TimesMoveOnlyWhenAWriteChangesSomething) {
  ManagedWidget w;
  ASSERT_EQ(w.Apply("alice", {{"gpus", 2}}), "");
  std::string first = w.object()["metadata"]["managedFields"][0]["time"];
  ASSERT_EQ(w.Apply("alice", {{"gpus", 2}}), "");
  EXPECT_EQ(w.object()["metadata"]["managedFields"][0]["time"], first);
  ASSERT_EQ(w.Apply("alice", {{"gpus", 3}}), "");
  EXPECT_NE(w.object()["metadata"]["managedFields"][0]["time"], first);
}

TEST(FieldManagerTest, StrippedFieldsAndScopes) {
  ManagedWidget w;
  Json before = w.object();
  Json after = before;
  after["metadata"]["labels"] = {{"a", "b"}};
  after["metadata"]["uid"] = "u";
  after["status"] = {{"phase", "Running"}};
  auto owned = [&](FieldScope scope, const std::string& sub) {
    WriteContext ctx{Widget(), "m", "example.io/v1", sub, scope, "2026-01-01T00:00:00Z"};
    Json entries = UpdatedManagedFields(ctx, &before, after);
    return entries.empty() ? Json() : entries[0]["fieldsV1"];
  };
  EXPECT_EQ(owned(FieldScope::kAll, ""),
            Json::parse(R"({"f:metadata":{"f:labels":{".":{},"f:a":{}}},
                            "f:status":{".":{},"f:phase":{}}})"));
  EXPECT_EQ(owned(FieldScope::kAllButStatus, ""),
            Json::parse(R"({"f:metadata":{"f:labels":{".":{},"f:a":{}}}})"));
  EXPECT_EQ(owned(FieldScope::kOnlyStatus, "status"),
            Json::parse(R"({"f:status":{".":{},"f:phase":{}}})"));
  WriteContext status{Widget(), "kubelet", "v1", "status", FieldScope::kOnlyStatus, "t"};
  EXPECT_EQ(UpdatedManagedFields(status, &before, after)[0]["subresource"], "status");
}

TEST(FieldManagerTest, ClientsMayWriteOrResetManagedFields) {
  ManagedWidget w;
  ASSERT_EQ(w.Apply("alice", {{"gpus", 2}}), "");
  WriteContext ctx{Widget(), "kubectl", "example.io/v1", "", FieldScope::kAll, "t"};
  Json next = w.object();
  next["metadata"]["managedFields"] = Json::array({Json::object()});  // [{}]: reset
  EXPECT_EQ(UpdatedManagedFields(ctx, &w.object(), next), Json::array());
  next["metadata"]["managedFields"] = Json::parse(
      R"([{"manager":"bob","operation":"Apply","apiVersion":"example.io/v1",
           "fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:gpus":{}}}}])");
  EXPECT_EQ(UpdatedManagedFields(ctx, &w.object(), next)[0]["manager"], "bob");
  next["metadata"]["managedFields"] = "garbage";  // unreadable: the stored ones stay
  EXPECT_EQ(UpdatedManagedFields(ctx, &w.object(), next)[0]["manager"], "alice");
}

TEST(FieldManagerTest, EntriesSortAsTheRealServerSortsThem) {
  ManagedFields entries = {
      {"z", "Update", "v1", "", "2026-01-01T00:00:01Z", {P({"f:a"})}},
      {"b", "Apply", "v1", "", "2026-01-01T00:00:02Z", {P({"f:b"})}},
      {"a", "Apply", "v1", "", "2026-01-01T00:00:02Z", {P({"f:c"})}},
      {"empty", "Apply", "v1", "", "", {}},
  };
  Json encoded = EncodeManagedFields(entries);
  ASSERT_EQ(encoded.size(), 3u);
  EXPECT_EQ(encoded[0]["manager"], "a");
  EXPECT_EQ(encoded[1]["manager"], "b");
  EXPECT_EQ(encoded[2]["manager"], "z");
  EXPECT_EQ(encoded[2]["fieldsType"], "FieldsV1");
  std::optional<ManagedFields> decoded = DecodeManagedFields(encoded);
  ASSERT_TRUE(decoded);
  EXPECT_EQ((*decoded)[2].fields, FieldSet({P({"f:a"})}));
  EXPECT_FALSE(DecodeManagedFields(Json::parse(R"([{"manager":"x","operation":"Patch"}])")));
}

TEST(FieldManagerTest, ManagersDescribeThemselvesAsConflictsNameThem) {
  EXPECT_EQ(ManagerEntry({"a", "Apply", "v1", "", "", {}}).Describe(), "\"a\"");
  EXPECT_EQ(ManagerEntry({"a", "Update", "apps/v1", "", "", {}}).Describe(), "\"a\" using apps/v1");
  EXPECT_EQ(ManagerEntry({"k", "Update", "v1", "status", "", {}}).Describe(),
            "\"k\" with subresource \"status\" using v1");
  ApplyConflictStatus status =
      MakeApplyConflict({{{"b", "Update", "v1", "", "", {}}, P({"f:data", "f:x"})},
                         {{"a", "Apply", "v1", "", "", {}}, P({"f:data", "f:y"})}});
  EXPECT_EQ(status.error.http, 409);
  EXPECT_EQ(status.error.reason, "Conflict");
  EXPECT_EQ(status.error.message,
            "Apply failed with 2 conflicts: conflicts with \"a\":\n- .data.y\n"
            "conflicts with \"b\" using v1:\n- .data.x");
  EXPECT_EQ(status.details["causes"][0], Json({{"type", "FieldManagerConflict"},
                                               {"message", "conflict with \"a\""},
                                               {"field", ".data.y"}}));
}

}  // namespace
}  // namespace dljob::apiserver
