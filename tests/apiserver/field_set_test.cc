// Field sets (field_set.h): the FieldsV1 encoding of managedFields and paths as conflicts print
// them, against the real server's spellings.
#include "tests/apiserver/field_set.h"

#include <gtest/gtest.h>

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

FieldPath P(std::initializer_list<std::string> elements) { return FieldPath(elements); }

TEST(FieldSetTest, FieldsV1RoundTripsInTheRealEncoding) {
  struct Case {
    FieldSet set;
    const char* fields_v1;
  } cases[] = {
      {{}, R"({})"},
      {{P({"f:data", "f:a"})}, R"({"f:data":{"f:a":{}}})"},
      {{P({"f:data"}), P({"f:data", "f:a"})}, R"({"f:data":{".":{},"f:a":{}}})"},
      {{P({"f:spec", "f:containers", R"(k:{"name":"main"})"}),
        P({"f:spec", "f:containers", R"(k:{"name":"main"})", "f:image"})},
       R"({"f:spec":{"f:containers":{"k:{\"name\":\"main\"}":{".":{},"f:image":{}}}}})"},
      {{P({"f:metadata", "f:finalizers", R"(v:"a")"})},
       R"({"f:metadata":{"f:finalizers":{"v:\"a\"":{}}}})"},
  };
  for (const Case& c : cases) {
    Json want = Json::parse(c.fields_v1);
    EXPECT_EQ(c.set.ToFieldsV1(), want) << c.fields_v1;
    std::optional<FieldSet> back = FieldSet::FromFieldsV1(want);
    ASSERT_TRUE(back) << c.fields_v1;
    EXPECT_EQ(*back, c.set) << c.fields_v1;
  }
  EXPECT_FALSE(FieldSet::FromFieldsV1(Json::parse(R"({"f:a": 1})")));
  EXPECT_FALSE(FieldSet::FromFieldsV1(Json::array()));
}

TEST(FieldSetTest, PathsPrintAsTheRealServerPrintsThem) {
  struct Case {
    FieldPath path;
    const char* text;
  } cases[] = {
      {P({"f:spec", "f:gpus"}), ".spec.gpus"},
      {P({"f:spec", "f:containers", R"(k:{"name":"main"})", "f:image"}),
       R"(.spec.containers[name="main"].image)"},
      {P({"f:spec", "f:ports", R"(k:{"containerPort":80,"protocol":"TCP"})"}),
       R"(.spec.ports[containerPort=80,protocol="TCP"])"},
      {P({"f:metadata", "f:finalizers", R"(v:"x/y")"}), R"(.metadata.finalizers[="x/y"])"},
      {P({"f:data", "f:a.b"}), ".data.a.b"},
  };
  for (const Case& c : cases) EXPECT_EQ(PathString(c.path), c.text);
}

TEST(FieldSetTest, PrefixesAndMembersBelow) {
  FieldSet s = {P({"f:spec", "f:a", "f:b"}), P({"f:spec", "f:list", R"(k:{"name":"x"})", "f:v"})};
  FieldSet with = s.WithFieldPrefixes();
  EXPECT_TRUE(with.Has(P({"f:spec"})));
  EXPECT_TRUE(with.Has(P({"f:spec", "f:a"})));
  EXPECT_TRUE(with.Has(P({"f:spec", "f:list"})));
  EXPECT_FALSE(with.Has(P({"f:spec", "f:list", R"(k:{"name":"x"})"})));  // an item, not a field
  EXPECT_TRUE(s.HasBelow(P({"f:spec"})));
  EXPECT_TRUE(s.HasBelow(P({"f:spec", "f:a"})));
  EXPECT_FALSE(s.HasBelow(P({"f:spec", "f:a", "f:b"})));
  EXPECT_FALSE(s.HasBelow(P({"f:status"})));
}

}  // namespace
}  // namespace dljob::apiserver
