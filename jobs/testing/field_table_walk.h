// Test support for jobs/: walks over the field tables (field_table.h) that every API kind's
// every-field test runs (field_table_test.cc for DLJob, dlqueue_test.cc for DLQueue):
//
//   ExpectEverySet(s, "")         every row of every struct reachable from s is set in s
//   CollectStructs<S>(tree, ...)  the JSON pointer and field path of every API-struct object in
//                                 an encoded tree, to put an unknown key into each
//   ExpectStructInCrd<S>(schema)  the CRD schema's properties are exactly S's rows, in order, each
//                                 with its type, and its `required` S's required rows, all the
//                                 way down
//
// GoogleTest assertions; header-only templates.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jobs/dljob_types.h"
#include "jobs/field_path.h"
#include "jobs/field_table.h"

namespace dljob::testing {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

template <ApiStruct S>
void ExpectEverySet(const S& s, const std::string& path);

// A value counts as set when the encoder writes it and it differs from the type's default.
template <typename M>
void ExpectSet(const M& v, const std::string& path) {
  if constexpr (ApiStruct<M>) {
    ExpectEverySet(v, path);
  } else if constexpr (kIsOptional<M>) {
    ASSERT_TRUE(v.has_value()) << path << " is not set";
    if constexpr (ApiStruct<typename M::value_type>) ExpectEverySet(*v, path);
  } else if constexpr (kIsVector<M>) {
    ASSERT_FALSE(v.empty()) << path << " is empty";
    for (size_t i = 0; i < v.size(); ++i) ExpectSet(v[i], JoinIndex(path, i));
  } else if constexpr (std::is_same_v<M, JobPhase>) {
    EXPECT_NE(v, JobPhase::kUnset) << path;
  } else if constexpr (std::is_same_v<M, int64_t>) {
    EXPECT_NE(v, 0) << path << " is zero";
  } else {
    EXPECT_FALSE(v.empty()) << path << " is empty";  // strings, maps
  }
}

template <ApiStruct S>
void ExpectEverySet(const S& s, const std::string& path) {
  ForEachField<S>([&](const auto& f) { ExpectSet(s.*f.member, JoinField(path, f.name)); });
  if constexpr (KeepsUnknownKeys<S>) {
    EXPECT_FALSE((s.*FieldTable<S>::kRest).empty()) << path << ": no unknown key kept";
  }
}

// Every object of `tree` that is an API struct: its JSON pointer, field path and type's policy.
struct StructObject {
  json::json_pointer at;
  std::string path;
  bool keeps_unknown_keys;
};

template <ApiStruct S>
void CollectStructs(const json& tree, const json::json_pointer& at, const std::string& path,
                    std::vector<StructObject>& out);

template <typename M>
void CollectValue(const json& tree, const json::json_pointer& at, const std::string& path,
                  std::vector<StructObject>& out) {
  if constexpr (ApiStruct<M>) {
    CollectStructs<M>(tree, at, path, out);
  } else if constexpr (kIsOptional<M> || kIsVector<M>) {
    using Inner = typename M::value_type;
    if constexpr (ApiStruct<Inner> && kIsVector<M>) {
      for (size_t i = 0; i < tree[at].size(); ++i) {
        CollectStructs<Inner>(tree, at / i, JoinIndex(path, i), out);
      }
    } else if constexpr (ApiStruct<Inner>) {
      CollectStructs<Inner>(tree, at, path, out);
    }
  }
}

template <ApiStruct S>
void CollectStructs(const json& tree, const json::json_pointer& at, const std::string& path,
                    std::vector<StructObject>& out) {
  out.push_back({at, path, KeepsUnknownKeys<S>});
  ForEachField<S>([&](const auto& f) {
    using M = typename std::decay_t<decltype(f)>::Member;
    std::string name(f.name);
    if (tree[at].contains(name)) CollectValue<M>(tree, at / name, JoinField(path, name), out);
  });
}

template <ApiStruct S>
void ExpectStructInCrd(const ojson& schema, const std::string& path);

template <typename M>
void ExpectTypeInCrd(const ojson& node, const std::string& path) {
  if constexpr (ApiStruct<M>) {
    ExpectStructInCrd<M>(node, path);
  } else if constexpr (kIsOptional<M>) {
    ExpectTypeInCrd<typename M::value_type>(node, path);
  } else if constexpr (kIsVector<M>) {
    ASSERT_EQ(node["type"], "array") << path;
    ExpectTypeInCrd<typename M::value_type>(node["items"], path + "[]");
  } else if constexpr (kIsStringMap<M>) {
    EXPECT_EQ(node["type"], "object") << path;
    EXPECT_EQ(node["additionalProperties"], ojson({{"type", "string"}})) << path;
  } else if constexpr (std::is_same_v<M, int64_t>) {
    EXPECT_EQ(node["type"], "integer") << path;
  } else if constexpr (std::is_same_v<M, double>) {
    EXPECT_EQ(node["type"], "number") << path;
  } else if constexpr (std::is_same_v<M, bool>) {
    EXPECT_EQ(node["type"], "boolean") << path;
  } else {
    EXPECT_EQ(node["type"], "string") << path;  // strings and the phase
  }
}

// The schema's properties are exactly S's rows, in table order, each with its type.
template <ApiStruct S>
void ExpectStructInCrd(const ojson& schema, const std::string& path) {
  ASSERT_EQ(schema["type"], "object") << path;
  if constexpr (KeepsUnknownKeys<S>) {
    // Left to the API server, but for the fields a CRD may restrict there: name, generateName.
    const ojson properties = schema.value("properties", ojson::object());
    for (const auto& [key, child] : properties.items()) {
      EXPECT_TRUE(path + "." + key == "metadata.name" ||
                  path + "." + key == "metadata.generateName")
          << path + "." + key << " is left to the API server";
    }
  } else {
    std::vector<std::string> in_crd, in_table;
    for (const auto& [key, child] : schema["properties"].items()) in_crd.push_back(key);
    for (std::string_view name : FieldNames<S>()) in_table.emplace_back(name);
    EXPECT_EQ(in_crd, in_table) << path;
    std::vector<std::string> required;
    ForEachField<S>([&](const auto& f) {
      if (f.info.required) required.emplace_back(f.name);
    });
    if (required.empty()) {
      EXPECT_FALSE(schema.contains("required")) << path;
    } else {
      EXPECT_EQ(schema["required"], ojson(required)) << path << ": required fields";
    }
    ForEachField<S>([&](const auto& f) {
      using M = typename std::decay_t<decltype(f)>::Member;
      std::string name(f.name);
      if (schema["properties"].contains(name)) {
        ExpectTypeInCrd<M>(schema["properties"][name], JoinField(path, name));
      }
    });
  }
}

}  // namespace dljob::testing
