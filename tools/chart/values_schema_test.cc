#include "tools/chart/values_schema.h"

#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

namespace dljob::chart {
namespace {

using nlohmann::json;

std::vector<std::string> Violations(const json& schema, const json& values) {
  Result<std::vector<SchemaViolation>> found = CheckAgainstSchema(schema, values);
  EXPECT_TRUE(found.ok()) << found.status().message();
  std::vector<std::string> out;
  if (found.ok()) {
    for (const SchemaViolation& v : *found) out.push_back("at '" + v.at + "': " + v.message);
  }
  return out;
}

const json kSchema = json::parse(R"({
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "additionalProperties": false,
  "required": ["replicas"],
  "properties": {
    "replicas": {"type": "integer", "minimum": 1, "maximum": 9, "description": "pods"},
    "ratio": {"type": "number"},
    "policy": {"type": "string", "enum": ["dljob", "fifo"]},
    "only": {"enum": ["one"]},
    "minAvailable": {"type": ["integer", "string"], "pattern": "^[0-9]+%$"},
    "name": {"type": "string", "minLength": 1},
    "args": {"type": "array", "items": {"type": "string"}},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "free": {"type": "object"},
    "pdb": {"type": "object", "additionalProperties": false,
            "properties": {"enabled": {"type": "boolean"}}}
  }
})");

TEST(ValuesSchema, AcceptsWhatItDescribes) {
  EXPECT_EQ(Violations(kSchema, {{"replicas", 2},
                                 {"ratio", 0.5},
                                 {"policy", "fifo"},
                                 {"only", "one"},
                                 {"minAvailable", 1},
                                 {"name", "x"},
                                 {"args", {"--a", "--b"}},
                                 {"labels", {{"team", "a"}}},
                                 {"free", {{"anything", {1, 2}}}},
                                 {"pdb", {{"enabled", true}}}}),
            std::vector<std::string>{});
  EXPECT_EQ(Violations(kSchema, {{"replicas", 3.0}, {"minAvailable", "50%"}, {"ratio", 2}}),
            std::vector<std::string>{});  // 3.0 is an integer; an integer is a number
}

// Each keyword's failure, worded as Helm's checker words it, at a JSON pointer.
TEST(ValuesSchema, NamesTheFieldAsHelmDoes) {
  EXPECT_EQ(Violations(kSchema, {{"replicas", "two"}}),
            std::vector<std::string>{"at '/replicas': got string, want integer"});
  EXPECT_EQ(Violations(kSchema, {{"replicas", 1.5}}),
            std::vector<std::string>{"at '/replicas': got number, want integer"});
  EXPECT_EQ(Violations(kSchema, {{"replicas", 0}}),
            std::vector<std::string>{"at '/replicas': must be >= 1 but found 0"});
  EXPECT_EQ(Violations(kSchema, {{"replicas", 10}}),
            std::vector<std::string>{"at '/replicas': must be <= 9 but found 10"});
  EXPECT_EQ(Violations(kSchema, json::object()),
            std::vector<std::string>{"at '': missing property 'replicas'"});
  EXPECT_EQ(Violations(kSchema, {{"replicas", 1}, {"replica", 1}, {"x/y~", 1}}),
            std::vector<std::string>{"at '': additional properties 'replica', 'x/y~' not allowed"});
  EXPECT_EQ(Violations(kSchema, {{"replicas", 1}, {"policy", "lifo"}}),
            std::vector<std::string>{"at '/policy': value must be one of 'dljob', 'fifo'"});
  EXPECT_EQ(Violations(kSchema, {{"replicas", 1}, {"only", 2}}),
            std::vector<std::string>{"at '/only': value must be 'one'"});
  EXPECT_EQ(
      Violations(kSchema, {{"replicas", 1}, {"minAvailable", "half"}}),
      std::vector<std::string>{"at '/minAvailable': 'half' does not match pattern '^[0-9]+%$'"});
  EXPECT_EQ(Violations(kSchema, {{"replicas", 1}, {"minAvailable", true}}),
            std::vector<std::string>{"at '/minAvailable': got boolean, want integer or string"});
  EXPECT_EQ(Violations(kSchema, {{"replicas", 1}, {"name", ""}}),
            std::vector<std::string>{"at '/name': length must be >= 1, but got 0"});
  EXPECT_EQ(Violations(kSchema, {{"replicas", 1}, {"args", {"a", 3}}}),
            std::vector<std::string>{"at '/args/1': got integer, want string"});
  EXPECT_EQ(Violations(kSchema, {{"replicas", 1}, {"labels", {{"a/b", 1}}}}),
            std::vector<std::string>{"at '/labels/a~1b': got integer, want string"});
  EXPECT_EQ(Violations(kSchema, {{"replicas", 1}, {"pdb", {{"enabld", true}}}}),
            std::vector<std::string>{"at '/pdb': additional properties 'enabld' not allowed"});
  EXPECT_EQ(Violations(kSchema, {{"replicas", 1}, {"pdb", nullptr}}),
            std::vector<std::string>{"at '/pdb': got null, want object"});
}

TEST(ValuesSchema, HelmsMessageListsEveryViolation) {
  Status s = ValidateValues(kSchema, {{"replicas", "2"}, {"policy", "x"}}, "dljob");
  EXPECT_EQ(s.message(),
            "values don't meet the specifications of the schema(s) in the following chart(s):\n"
            "dljob:\n"
            "- at '/policy': value must be one of 'dljob', 'fifo'\n"
            "- at '/replicas': got string, want integer");
  EXPECT_TRUE(ValidateValues(kSchema, {{"replicas", 2}}, "dljob").ok());
}

TEST(ValuesSchema, RefusesKeywordsItDoesNotImplement) {
  for (const char* keyword : {"oneOf", "$ref", "anyOf", "patternProperties", "const"}) {
    json schema = {{"properties", {{"a", {{keyword, json::array()}}}}}};
    Result<std::vector<SchemaViolation>> r = CheckAgainstSchema(schema, {{"a", 1}});
    ASSERT_FALSE(r.ok()) << keyword;
    EXPECT_EQ(r.status().message(),
              std::string("values.schema.json at '/properties/a': keyword \"") + keyword +
                  "\" is not supported by dljob-render-chart");
  }
  EXPECT_FALSE(CheckAgainstSchema({{"type", 3}}, 1).ok());
  EXPECT_FALSE(CheckAgainstSchema({{"pattern", "("}}, "x").ok());
  EXPECT_FALSE(CheckAgainstSchema(json::array(), 1).ok());
}

TEST(ValuesSchema, DeepAndLongValuesAreRefusedNotWalked) {
  json deep = json::object();
  json nested = json::object();  // a schema as deep as the value
  for (int i = 0; i < 10'000; ++i) {
    json next = json::object();
    next["a"] = std::move(deep);
    deep = std::move(next);
    json level = {{"type", "object"}};
    level["additionalProperties"] = std::move(nested);
    nested = std::move(level);
  }
  std::vector<std::string> v = Violations(nested, deep);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("nested deeper than 64 levels"), std::string::npos);
  json pattern = {{"pattern", "^[0-9]+$"}};
  EXPECT_EQ(Violations(pattern, std::string(100'000, '1')).size(), 1u);
  EXPECT_EQ(Violations(pattern, std::string(1'000, '1')).size(), 0u);
}

// A random value built from pieces of every type, in the places the real chart's schema
// describes and elsewhere.
json RandomValue(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> pick(0, depth > 4 ? 5 : 7);
  switch (pick(rng)) {
    case 0:
      return nullptr;
    case 1:
      return rng() % 2 == 0;
    case 2:
      return static_cast<int>(rng() % 7) - 2;
    case 3:
      return (rng() % 1000) / 7.0;
    case 4:
      return std::string(rng() % 3, "ab%1/~"[rng() % 6]);
    case 5:
      return "50%";
    case 6: {
      json a = json::array();
      for (int i = rng() % 3; i > 0; --i) a.push_back(RandomValue(rng, depth + 1));
      return a;
    }
    default: {
      static const char* kKeys[] = {"replicas", "enabled", "minAvailable", "image",  "tag",
                                    "metrics",  "x/y",     "labels",       "policy", "port"};
      json o = json::object();
      for (int i = rng() % 4; i > 0; --i) o[kKeys[rng() % 10]] = RandomValue(rng, depth + 1);
      return o;
    }
  }
}

// The chart's own schema over 20,000 random value trees (fixed seed): never an error of the
// checker itself, and every violation's place is a JSON pointer that resolves in the values.
TEST(ValuesSchema, RandomValuesAgainstTheChartsSchema) {
  std::ifstream in("charts/dljob/values.schema.json");
  ASSERT_TRUE(in) << "run from the repository root";
  std::stringstream text;
  text << in.rdbuf();
  const json schema = json::parse(text.str());
  std::mt19937 rng(21);
  size_t violations = 0;
  for (int i = 0; i < 20'000; ++i) {
    json values = RandomValue(rng, 0);
    Result<std::vector<SchemaViolation>> r = CheckAgainstSchema(schema, values);
    ASSERT_TRUE(r.ok()) << r.status().message();
    for (const SchemaViolation& v : *r) {
      ++violations;
      EXPECT_NO_THROW((void)values.at(json::json_pointer(v.at))) << v.at << " in " << values;
    }
  }
  EXPECT_GT(violations, 1000u);  // the random trees do hit the schema's rules
}

}  // namespace
}  // namespace dljob::chart
