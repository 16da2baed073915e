// See openapi_v2_proto.h. Field numbers are those of gnostic's openapiv2/OpenAPIv2.proto; each
// function below encodes one of its messages.
#include "tests/apiserver/openapi_v2_proto.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "tests/apiserver/protobuf.h"

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

bool IsExtension(const std::string& key) { return key.rfind("x-", 0) == 0; }

std::string StringOf(const Json& v) { return v.is_string() ? v.get<std::string>() : ""; }

// Any {value = 1; yaml = 2}: gnostic keeps free-form values as YAML; JSON is YAML.
ProtoWriter AnyMessage(const Json& value) {
  ProtoWriter any;
  any.String(2, value.dump(), true);
  return any;
}

// NamedAny {name = 1; value = 2} for each x- key of `object`, into `field`.
void Extensions(const Json& object, int field, ProtoWriter& out) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (!IsExtension(it.key())) continue;
    ProtoWriter named;
    named.String(1, it.key(), true);
    named.Message(2, AnyMessage(it.value()));
    out.Message(field, named);
  }
}

void Strings(const Json& list, int field, ProtoWriter& out) {
  if (list.is_string()) return out.String(field, list.get<std::string>(), true);
  if (!list.is_array()) return;
  for (const Json& s : list) out.String(field, StringOf(s), true);
}

ProtoWriter Schema(const Json& s);

// NamedSchema {name = 1; value = 2} for each entry of `object`, into `field`.
void NamedSchemas(const Json& object, int field, ProtoWriter& out) {
  if (!object.is_object()) return;
  for (auto it = object.begin(); it != object.end(); ++it) {
    ProtoWriter named;
    named.String(1, it.key(), true);
    named.Message(2, Schema(it.value()));
    out.Message(field, named);
  }
}

// Schema: _ref 1, format 2, title 3, description 4, default 5, multiple_of 6, maximum 7,
// exclusive_maximum 8, minimum 9, exclusive_minimum 10, max_length 11, min_length 12, pattern 13,
// max_items 14, min_items 15, unique_items 16, max_properties 17, min_properties 18, required 19,
// enum 20, additional_properties 21, type 22, items 23, all_of 24, properties 25,
// discriminator 26, read_only 27, example 30, vendor_extension 31.
// The keywords of a Schema that hold values (not schemas).
void SchemaValues(const Json& s, ProtoWriter& out) {
  auto str = [&](const char* key, int field) { out.String(field, StringOf(s.value(key, Json()))); };
  auto num = [&](const char* key, int field) {
    if (s.contains(key) && s[key].is_number()) out.Double(field, s[key].get<double>());
  };
  auto integer = [&](const char* key, int field) {
    if (s.contains(key) && s[key].is_number()) out.Int64(field, s[key].get<int64_t>());
  };
  auto flag = [&](const char* key, int field) {
    if (s.contains(key) && s[key].is_boolean()) out.Bool(field, s[key].get<bool>());
  };
  str("$ref", 1);
  str("format", 2);
  str("title", 3);
  str("description", 4);
  if (s.contains("default")) out.Message(5, AnyMessage(s["default"]));
  num("multipleOf", 6);
  num("maximum", 7);
  flag("exclusiveMaximum", 8);
  num("minimum", 9);
  flag("exclusiveMinimum", 10);
  integer("maxLength", 11);
  integer("minLength", 12);
  str("pattern", 13);
  integer("maxItems", 14);
  integer("minItems", 15);
  flag("uniqueItems", 16);
  integer("maxProperties", 17);
  integer("minProperties", 18);
  if (s.contains("required")) Strings(s["required"], 19, out);
  if (s.contains("enum") && s["enum"].is_array()) {
    for (const Json& e : s["enum"]) out.Message(20, AnyMessage(e));
  }
  str("discriminator", 26);
  flag("readOnly", 27);
  if (s.contains("example")) out.Message(30, AnyMessage(s["example"]));
  Extensions(s, 31, out);
}

ProtoWriter Schema(const Json& s) {
  ProtoWriter out;
  if (!s.is_object()) return out;
  SchemaValues(s, out);
  if (s.contains("additionalProperties")) {
    const Json& a = s["additionalProperties"];
    ProtoWriter item;  // AdditionalPropertiesItem: oneof {schema = 1; boolean = 2}
    if (a.is_boolean()) {
      item.Bool(2, a.get<bool>(), /*always=*/true);
    } else {
      item.Message(1, Schema(a));
    }
    out.Message(21, item);
  }
  if (s.contains("type")) {
    ProtoWriter type;  // TypeItem {repeated string value = 1}
    Strings(s["type"], 1, type);
    out.Message(22, type);
  }
  if (s.contains("items")) {
    ProtoWriter items;  // ItemsItem {repeated Schema schema = 1}
    if (s["items"].is_array()) {
      for (const Json& item : s["items"]) items.Message(1, Schema(item));
    } else {
      items.Message(1, Schema(s["items"]));
    }
    out.Message(23, items);
  }
  if (s.contains("allOf") && s["allOf"].is_array()) {
    for (const Json& part : s["allOf"]) out.Message(24, Schema(part));
  }
  if (s.contains("properties")) {
    ProtoWriter props;  // Properties {repeated NamedSchema additional_properties = 1}
    NamedSchemas(s["properties"], 1, props);
    out.Message(25, props);
  }
  return out;
}

// A query or path parameter (QueryParameterSubSchema, PathParameterSubSchema): required 1,
// in 2, description 3, name 4, then type and format, and unique_items and vendor extensions at
// numbers that differ between the two.
ProtoWriter NonBodyParameter(const Json& p) {
  bool query = StringOf(p.value("in", Json())) == "query";
  ProtoWriter sub;
  sub.Bool(1, p.value("required", false));
  sub.String(2, StringOf(p.value("in", Json())));
  sub.String(3, StringOf(p.value("description", Json())));
  sub.String(4, StringOf(p.value("name", Json())));
  sub.String(query ? 6 : 5, StringOf(p.value("type", Json())));
  sub.String(query ? 7 : 6, StringOf(p.value("format", Json())));
  sub.Bool(query ? 20 : 19, p.value("uniqueItems", false));
  Extensions(p, query ? 23 : 22, sub);
  ProtoWriter non_body;  // NonBodyParameter: oneof {header 1, form_data 2, query 3, path 4}
  non_body.Message(query ? 3 : 4, sub);
  return non_body;
}

// ParametersItem {oneof {Parameter parameter = 1; JsonReference json_reference = 2}}, Parameter
// {oneof {BodyParameter body_parameter = 1; NonBodyParameter non_body_parameter = 2}}.
ProtoWriter ParametersItem(const Json& p) {
  ProtoWriter parameter;
  if (StringOf(p.value("in", Json())) == "body") {
    ProtoWriter body;  // description 1, name 2, in 3, required 4, schema 5, vendor_extension 6
    body.String(1, StringOf(p.value("description", Json())));
    body.String(2, StringOf(p.value("name", Json())));
    body.String(3, "body");
    body.Bool(4, p.value("required", false));
    if (p.contains("schema")) body.Message(5, Schema(p["schema"]));
    Extensions(p, 6, body);
    parameter.Message(1, body);
  } else {
    parameter.Message(2, NonBodyParameter(p));
  }
  ProtoWriter item;
  item.Message(1, parameter);
  return item;
}

// Responses {repeated NamedResponseValue response_code = 1; vendor_extension = 2};
// ResponseValue {oneof {Response response = 1; ...}}; Response {description 1, schema 2
// (SchemaItem {oneof {Schema schema = 1; ...}}), vendor_extension 5}.
ProtoWriter Responses(const Json& responses) {
  ProtoWriter out;
  for (auto it = responses.begin(); it != responses.end(); ++it) {
    if (IsExtension(it.key())) continue;
    ProtoWriter response;
    response.String(1, StringOf(it.value().value("description", Json())), true);
    if (it.value().contains("schema")) {
      ProtoWriter schema_item;
      schema_item.Message(1, Schema(it.value()["schema"]));
      response.Message(2, schema_item);
    }
    Extensions(it.value(), 5, response);
    ProtoWriter value;
    value.Message(1, response);
    ProtoWriter named;
    named.String(1, it.key(), true);
    named.Message(2, value);
    out.Message(1, named);
  }
  Extensions(responses, 2, out);
  return out;
}

// Operation: tags 1, summary 2, description 3, operation_id 5, produces 6, consumes 7,
// parameters 8, responses 9, schemes 10, deprecated 11, vendor_extension 13.
ProtoWriter Operation(const Json& op) {
  ProtoWriter out;
  if (op.contains("tags")) Strings(op["tags"], 1, out);
  out.String(2, StringOf(op.value("summary", Json())));
  out.String(3, StringOf(op.value("description", Json())));
  out.String(5, StringOf(op.value("operationId", Json())));
  if (op.contains("produces")) Strings(op["produces"], 6, out);
  if (op.contains("consumes")) Strings(op["consumes"], 7, out);
  for (const Json& p : op.value("parameters", Json::array())) out.Message(8, ParametersItem(p));
  if (op.contains("responses")) out.Message(9, Responses(op["responses"]));
  if (op.contains("schemes")) Strings(op["schemes"], 10, out);
  out.Bool(11, op.value("deprecated", false));
  Extensions(op, 13, out);
  return out;
}

// PathItem: get 2, put 3, post 4, delete 5, options 6, head 7, patch 8, parameters 9,
// vendor_extension 10.
ProtoWriter PathItem(const Json& item) {
  static const std::pair<const char*, int> kMethods[] = {{"get", 2},    {"put", 3},     {"post", 4},
                                                         {"delete", 5}, {"options", 6}, {"head", 7},
                                                         {"patch", 8}};
  ProtoWriter out;
  for (const auto& [method, field] : kMethods) {
    if (item.contains(method)) out.Message(field, Operation(item[method]));
  }
  for (const Json& p : item.value("parameters", Json::array())) out.Message(9, ParametersItem(p));
  Extensions(item, 10, out);
  return out;
}

struct MediaRange {
  std::string type;
  double quality = 1;
  int specificity = 0;  // 2: type/subtype, 1: type/*, 0: */*
};

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string_view::npos ? "" : std::string(s.substr(b, e - b + 1));
}

}  // namespace

std::string EncodeOpenApiV2(const Json& swagger) {
  ProtoWriter doc;  // swagger 1, info 2, host 3, base_path 4, schemes 5, consumes 6, produces 7,
                    // paths 8, definitions 9, vendor_extension 16
  doc.String(1, StringOf(swagger.value("swagger", Json())));
  if (swagger.contains("info")) {
    const Json& info = swagger["info"];
    ProtoWriter i;  // title 1, version 2, description 3, vendor_extension 7
    i.String(1, StringOf(info.value("title", Json())));
    i.String(2, StringOf(info.value("version", Json())));
    i.String(3, StringOf(info.value("description", Json())));
    Extensions(info, 7, i);
    doc.Message(2, i);
  }
  doc.String(3, StringOf(swagger.value("host", Json())));
  doc.String(4, StringOf(swagger.value("basePath", Json())));
  for (auto [key, field] : {std::pair{"schemes", 5}, {"consumes", 6}, {"produces", 7}}) {
    if (swagger.contains(key)) Strings(swagger[key], field, doc);
  }
  if (swagger.contains("paths")) {
    ProtoWriter paths;  // vendor_extension 1, path 2 (NamedPathItem {name 1, value 2})
    Extensions(swagger["paths"], 1, paths);
    for (auto it = swagger["paths"].begin(); it != swagger["paths"].end(); ++it) {
      if (IsExtension(it.key())) continue;
      ProtoWriter named;
      named.String(1, it.key(), true);
      named.Message(2, PathItem(it.value()));
      paths.Message(2, named);
    }
    doc.Message(8, paths);
  }
  if (swagger.contains("definitions")) {
    ProtoWriter definitions;  // repeated NamedSchema additional_properties = 1
    NamedSchemas(swagger["definitions"], 1, definitions);
    doc.Message(9, definitions);
  }
  Extensions(swagger, 16, doc);
  return doc.data();
}

OpenApiV2Format NegotiateOpenApiV2(std::string_view accept) {
  if (Trim(accept).empty()) return OpenApiV2Format::kJson;
  std::vector<MediaRange> ranges;
  size_t start = 0;
  while (start <= accept.size()) {
    size_t comma = accept.find(',', start);
    std::string_view clause = accept.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    MediaRange range;
    size_t semi = clause.find(';');
    range.type = Trim(clause.substr(0, semi));
    while (semi != std::string_view::npos) {
      size_t next = clause.find(';', semi + 1);
      std::string param = Trim(clause.substr(
          semi + 1, next == std::string_view::npos ? std::string_view::npos : next - semi - 1));
      if (param.rfind("q=", 0) == 0) range.quality = std::atof(param.c_str() + 2);
      semi = next;
    }
    range.specificity = range.type == "*/*" ? 0 : range.type.ends_with("/*") ? 1 : 2;
    if (!range.type.empty() && range.quality > 0) ranges.push_back(range);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  std::stable_sort(ranges.begin(), ranges.end(), [](const MediaRange& a, const MediaRange& b) {
    return a.quality != b.quality ? a.quality > b.quality : a.specificity > b.specificity;
  });
  for (const MediaRange& r : ranges) {
    if (r.type == "*/*" || r.type == "application/*" || r.type == "application/json") {
      return OpenApiV2Format::kJson;
    }
    if (r.type == "application/com.github.proto-openapi.spec.v2@v1.0+protobuf" ||
        r.type == kOpenApiV2ProtobufType) {
      return OpenApiV2Format::kProtobuf;
    }
  }
  return OpenApiV2Format::kNotAcceptable;
}

}  // namespace dljob::apiserver
