// The OpenAPI documents (openapi.h) and /openapi/v2's protobuf encoding (openapi_v2_proto.h):
// what kubectl reads from them, and the encoding checked field by field with the wire reader.
#include "tests/apiserver/openapi.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "tests/apiserver/openapi_v2_proto.h"
#include "tests/apiserver/protobuf.h"

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

ResourceType Job() {
  ResourceType t;
  t.group = "dljob.io";
  t.version = "v1alpha1";
  t.plural = "dljobs";
  t.kind = "DLJob";
  t.custom = true;
  t.has_status = true;
  t.schema = std::make_shared<const Json>(Json::parse(R"({
    "type": "object",
    "properties": {
      "spec": {"type": "object", "required": ["gpus"],
               "properties": {"gpus": {"type": "integer", "minimum": 1}}}}})"));
  return t;
}

std::vector<ResourceType> Types() {
  std::vector<ResourceType> types = BuiltinTypes();
  types.push_back(Job());
  return types;
}

TEST(OpenApiTest, V2SchemasAreConvertedAsTheRealServerConvertsThem) {
  struct Case {
    const char* name;
    const char* v3;
    const char* v2;
  } cases[] = {
      {"junctors go", R"({"type":"object","anyOf":[{"required":["a"]}],"allOf":[{}]})",
       R"({"type":"object"})"},
      {"nullable is untyped, without items or properties",
       R"({"type":"array","nullable":true,"items":{"type":"string"}})", R"({})"},
      {"preserved unknown fields lose properties",
       R"({"type":"object","x-kubernetes-preserve-unknown-fields":true,
           "properties":{"a":{"type":"string"}}})",
       R"({"type":"object","x-kubernetes-preserve-unknown-fields":true})"},
      {"an array without items is untyped", R"({"type":"array"})", R"({})"},
      {"a nullable property is not required",
       R"({"type":"object","required":["a","b"],
           "properties":{"a":{"type":"string","nullable":true},"b":{"type":"string"}}})",
       R"({"type":"object","required":["b"],"properties":{"a":{},"b":{"type":"string"}}})"},
      {"nested schemas convert", R"({"type":"array","items":{"type":"object",
           "additionalProperties":{"type":"string","nullable":true}}})",
       R"({"type":"array","items":{"type":"object","additionalProperties":{}}})"},
      {"validations and extensions stay",
       R"({"type":"integer","minimum":1,"x-kubernetes-validations":[{"rule":"self > 0"}]})",
       R"({"type":"integer","minimum":1,"x-kubernetes-validations":[{"rule":"self > 0"}]})"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(OpenApiV2Schema(Json::parse(c.v3)), Json::parse(c.v2)) << c.name;
  }
}

TEST(OpenApiTest, V2HasTheKindsAndThePatchOperationsKubectlReads) {
  Json doc = OpenApiV2Document(Types());
  EXPECT_EQ(doc["swagger"], "2.0");
  Json job = doc["definitions"]["io.dljob.v1alpha1.DLJob"];
  EXPECT_EQ(job["x-kubernetes-group-version-kind"],
            Json::parse(R"([{"group":"dljob.io","version":"v1alpha1","kind":"DLJob"}])"));
  EXPECT_EQ(job["properties"]["metadata"]["$ref"],
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
  EXPECT_EQ(job["properties"]["spec"]["properties"]["gpus"]["minimum"], 1);
  // Built-in kinds: minimal and without group-version-kind (see openapi.h).
  EXPECT_FALSE(
      doc["definitions"]["io.k8s.api.core.v1.Pod"].contains("x-kubernetes-group-version-kind"));
  // Every $ref resolves (kubectl's parser refuses a dangling one).
  std::function<void(const Json&)> refs = [&](const Json& node) {
    if (node.is_object()) {
      if (node.contains("$ref")) {
        std::string ref = node["$ref"];
        ASSERT_EQ(ref.rfind("#/definitions/", 0), 0u) << ref;
        EXPECT_TRUE(doc["definitions"].contains(ref.substr(14))) << ref;
      }
      for (const auto& [k, v] : node.items()) refs(v);
    } else if (node.is_array()) {
      for (const Json& v : node) refs(v);
    }
  };
  refs(doc);

  Json patch =
      doc["paths"]["/apis/dljob.io/v1alpha1/namespaces/{namespace}/dljobs/{name}"]["patch"];
  EXPECT_EQ(patch["x-kubernetes-group-version-kind"]["kind"], "DLJob");
  EXPECT_EQ(patch["consumes"], Json({"application/json-patch+json", "application/merge-patch+json",
                                     "application/apply-patch+yaml"}));
  std::set<std::string> params;
  for (const Json& p : patch["parameters"]) params.insert(p["name"].get<std::string>());
  EXPECT_EQ(params,
            (std::set<std::string>{"body", "dryRun", "fieldManager", "fieldValidation", "force"}));
  Json pod_patch = doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"];
  EXPECT_EQ(pod_patch["consumes"][2], "application/strategic-merge-patch+json");
  EXPECT_TRUE(
      doc["paths"].contains("/apis/dljob.io/v1alpha1/namespaces/{namespace}/dljobs/"
                            "{name}/status"));

  // v3 says the same from the same model.
  Json v3 = *OpenApiV3Document(Types(), "apis/dljob.io/v1alpha1");
  Json v3_patch =
      v3["paths"]["/apis/dljob.io/v1alpha1/namespaces/{namespace}/dljobs/{name}"]["patch"];
  std::vector<std::string> media;
  for (const auto& [m, body] : v3_patch["requestBody"]["content"].items()) media.push_back(m);
  std::vector<std::string> v2_media = patch["consumes"];
  std::sort(v2_media.begin(), v2_media.end());
  EXPECT_EQ(media, v2_media);
  EXPECT_EQ(v3_patch["parameters"].size(), patch["parameters"].size() - 1);  // no body parameter
}

// The fields of one message, by number, as (wire type, bytes or varint) pairs.
std::multimap<int, std::string> Fields(std::string_view message) {
  std::multimap<int, std::string> out;
  ProtoReader r(message);
  while (r.Next()) {
    out.emplace(r.field(),
                r.wire_type() == 2 ? std::string(r.bytes()) : std::to_string(r.varint()));
  }
  EXPECT_EQ(r.error(), "");
  return out;
}

std::string One(const std::multimap<int, std::string>& fields, int field) {
  auto [begin, end] = fields.equal_range(field);
  EXPECT_EQ(std::distance(begin, end), 1) << "field " << field;
  return begin == end ? "" : begin->second;
}

TEST(OpenApiTest, V2ProtobufIsGnosticsDocumentMessage) {
  Json swagger = Json::parse(R"({
    "swagger": "2.0",
    "info": {"title": "Kubernetes", "version": "v1"},
    "paths": {"/api/v1/pods/{name}": {
      "parameters": [{"name": "name", "in": "path", "required": true, "type": "string"}],
      "patch": {"operationId": "patchPod", "consumes": ["a", "b"],
                "parameters": [{"name": "body", "in": "body", "required": true,
                                "schema": {"$ref": "#/definitions/Patch"}},
                               {"name": "fieldValidation", "in": "query", "type": "string"}],
                "responses": {"200": {"description": "OK", "schema": {"$ref": "#/definitions/P"}}},
                "x-kubernetes-group-version-kind": {"group": "", "version": "v1", "kind": "Pod"}}}},
    "definitions": {"P": {
      "type": "object", "required": ["spec"], "minimum": 1.5, "maxLength": 3,
      "additionalProperties": false,
      "properties": {"spec": {"type": "array", "items": {"type": "string"}, "enum": ["x"]}},
      "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "P"}]}}})");
  auto doc = Fields(EncodeOpenApiV2(swagger));
  EXPECT_EQ(One(doc, 1), "2.0");
  auto info = Fields(One(doc, 2));
  EXPECT_EQ(One(info, 1), "Kubernetes");
  EXPECT_EQ(One(info, 2), "v1");

  auto named_path = Fields(One(Fields(One(doc, 8)), 2));  // Paths.path: NamedPathItem
  EXPECT_EQ(One(named_path, 1), "/api/v1/pods/{name}");
  auto item = Fields(One(named_path, 2));
  auto path_param = Fields(One(Fields(One(Fields(One(item, 9)), 1)), 2));  // -> NonBodyParameter
  auto path_sub = Fields(One(path_param, 4));                              // PathParameterSubSchema
  EXPECT_EQ(One(path_sub, 1), "1");
  EXPECT_EQ(One(path_sub, 4), "name");
  EXPECT_EQ(One(path_sub, 5), "string");
  auto op = Fields(One(item, 8));  // patch
  EXPECT_EQ(One(op, 5), "patchPod");
  auto [c0, c1] = op.equal_range(7);
  EXPECT_EQ(std::distance(c0, c1), 2);  // consumes
  EXPECT_EQ(c0->second, "a");
  auto [p0, p1] = op.equal_range(8);
  ASSERT_EQ(std::distance(p0, p1), 2);
  auto body = Fields(One(Fields(One(Fields(p0->second), 1)), 1));  // -> BodyParameter
  EXPECT_EQ(One(body, 2), "body");
  EXPECT_EQ(One(Fields(One(body, 5)), 1), "#/definitions/Patch");
  auto query = Fields(One(Fields(One(Fields(One(Fields(std::next(p0)->second), 1)), 2)), 3));
  EXPECT_EQ(One(query, 4), "fieldValidation");
  EXPECT_EQ(One(query, 6), "string");
  auto gvk = Fields(One(op, 13));  // NamedAny
  EXPECT_EQ(One(gvk, 1), "x-kubernetes-group-version-kind");
  EXPECT_EQ(Json::parse(One(Fields(One(gvk, 2)), 2)),
            swagger["paths"]["/api/v1/pods/{name}"]["patch"]["x-kubernetes-group-version-kind"]);
  auto response = Fields(One(Fields(One(Fields(One(op, 9)), 1)), 2));  // -> ResponseValue
  auto response_body = Fields(One(response, 1));
  EXPECT_EQ(One(response_body, 1), "OK");
  EXPECT_EQ(One(Fields(One(Fields(One(response_body, 2)), 1)), 1), "#/definitions/P");

  auto named_schema = Fields(One(Fields(One(doc, 9)), 1));  // Definitions: NamedSchema
  EXPECT_EQ(One(named_schema, 1), "P");
  auto schema = Fields(One(named_schema, 2));
  EXPECT_EQ(One(Fields(One(schema, 22)), 1), "object");  // TypeItem
  EXPECT_EQ(One(schema, 19), "spec");                    // required
  double minimum = 0;
  uint64_t bits = std::stoull(One(schema, 9));
  std::memcpy(&minimum, &bits, sizeof minimum);
  EXPECT_EQ(minimum, 1.5);
  EXPECT_EQ(One(schema, 11), "3");
  auto additional = Fields(One(schema, 21));
  EXPECT_EQ(One(additional, 2), "0");  // boolean false, written: a oneof member
  auto prop = Fields(One(Fields(One(schema, 25)), 1));
  EXPECT_EQ(One(prop, 1), "spec");
  auto spec = Fields(One(prop, 2));
  auto item_schema = Fields(One(Fields(One(spec, 23)), 1));  // ItemsItem.schema
  EXPECT_EQ(One(Fields(One(item_schema, 22)), 1), "string");
  EXPECT_EQ(One(Fields(One(spec, 20)), 2), "\"x\"");  // enum as YAML
  auto ext = Fields(One(schema, 31));
  EXPECT_EQ(One(ext, 1), "x-kubernetes-group-version-kind");
}

TEST(OpenApiTest, NegotiationFollowsTheAcceptHeader) {
  struct Case {
    const char* accept;
    OpenApiV2Format want;
  } cases[] = {
      {"", OpenApiV2Format::kJson},
      {"*/*", OpenApiV2Format::kJson},
      {"application/json", OpenApiV2Format::kJson},
      {"application/com.github.proto-openapi.spec.v2@v1.0+protobuf", OpenApiV2Format::kProtobuf},
      {"application/com.github.proto-openapi.spec.v2.v1.0+protobuf", OpenApiV2Format::kProtobuf},
      {"application/com.github.proto-openapi.spec.v2@v1.0+protobuf;q=0.5, application/json",
       OpenApiV2Format::kJson},
      {"text/html, application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
       OpenApiV2Format::kProtobuf},
      {"application/vnd.kubernetes.protobuf", OpenApiV2Format::kNotAcceptable},
      {"application/json;q=0", OpenApiV2Format::kNotAcceptable},
  };
  for (const Case& c : cases) EXPECT_EQ(NegotiateOpenApiV2(c.accept), c.want) << c.accept;
}

TEST(ProtoWriterTest, WritesProto3Encoding) {
  struct Case {
    std::function<void(ProtoWriter&)> write;
    std::string want;
  } cases[] = {
      {[](ProtoWriter& w) { w.String(1, "ab"); }, std::string("\x0a\x02"
                                                              "ab",
                                                              4)},
      {[](ProtoWriter& w) { w.String(1, ""); }, ""},
      {[](ProtoWriter& w) { w.String(2, "", true); }, std::string("\x12\x00", 2)},
      {[](ProtoWriter& w) { w.Bool(3, true); }, "\x18\x01"},
      {[](ProtoWriter& w) { w.Bool(3, false); }, ""},
      {[](ProtoWriter& w) { w.Int64(4, 300); }, "\x20\xac\x02"},
      {[](ProtoWriter& w) { w.Double(5, 1.0); }, std::string("\x29\0\0\0\0\0\0\xf0\x3f", 9)},
      {[](ProtoWriter& w) { w.String(20, "x"); }, std::string("\xa2\x01\x01x", 4)},
      {[](ProtoWriter& w) {
         ProtoWriter inner;
         w.Message(6, inner);
       },
       std::string("\x32\x00", 2)},
  };
  for (const Case& c : cases) {
    ProtoWriter w;
    c.write(w);
    EXPECT_EQ(w.data(), c.want);
  }
}

}  // namespace
}  // namespace dljob::apiserver
