#include "jobs/crd.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "jobs/codec.h"
#include "jobs/defaults.h"
#include "jobs/yaml_tree.h"

namespace dljob {
namespace {

using ojson = nlohmann::ordered_json;

const ojson& Schema(const ojson& crd) {
  return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
}

// Kubernetes requires a structural schema: every node states its type, objects say what they
// hold. metadata is the one object left to the API server.
void ExpectStructural(const ojson& s, const std::string& path) {
  ASSERT_TRUE(s.contains("type")) << path;
  if (s["type"] == "object" && path != ".metadata") {
    EXPECT_TRUE(s.contains("properties") || s.contains("additionalProperties")) << path;
  }
  if (s["type"] == "array") {
    ASSERT_TRUE(s.contains("items")) << path;
    ExpectStructural(s["items"], path + "[]");
  }
  if (s.contains("properties")) {
    for (const auto& [key, child] : s["properties"].items())
      ExpectStructural(child, path + "." + key);
  }
}

// Every field a real job uses is in the schema, with the type the encoder writes.
void ExpectCovered(const nlohmann::json& value, const ojson& s, const std::string& path) {
  if (s.contains("additionalProperties")) return;
  if (value.is_object()) {
    ASSERT_EQ(s["type"], "object") << path;
    for (const auto& [key, child] : value.items()) {
      ASSERT_TRUE(s["properties"].contains(key)) << path << "." << key << " is not in the CRD";
      ExpectCovered(child, s["properties"][key], path + "." + key);
    }
  } else if (value.is_array()) {
    ASSERT_EQ(s["type"], "array") << path;
    for (const auto& item : value) ExpectCovered(item, s["items"], path + "[]");
  } else if (s.contains("enum")) {
    bool listed = false;
    for (const auto& e : s["enum"]) listed = listed || e == nlohmann::ordered_json(value);
    EXPECT_TRUE(listed) << path << ": " << value << " is not in the CRD's enum";
  }
}

TEST(Crd, IsAStructuralSchemaWithStatusSubresourceAndColumns) {
  ojson crd = DLJobCrd();
  EXPECT_EQ(crd["metadata"]["name"], "dljobs.dljob.io");
  EXPECT_EQ(crd["spec"]["names"]["shortNames"][0], "dlj");
  EXPECT_EQ(crd["spec"]["names"]["kind"], "DLJob");
  const ojson& version = crd["spec"]["versions"][0];
  EXPECT_TRUE(version["subresources"].contains("status"));
  EXPECT_EQ(version["additionalPrinterColumns"].size(), 5u);
  ExpectStructural(Schema(crd), "");
  EXPECT_EQ(Schema(crd)["properties"]["spec"]["properties"]["gpus"]["type"], "integer");
  EXPECT_EQ(Schema(crd)["properties"]["status"]["properties"]["throughput"]["properties"]
                       ["imagesPerSec"]["type"],
            "number");
}

// Every field of the API is in the schema: field_table_test.cc walks the tables against it.
TEST(Crd, CoversEveryFieldOfTheExamples) {
  ojson crd = DLJobCrd();
  for (const char* file : {"examples/mnist-job.yaml", "examples/resnet-job.yaml"}) {
    DecodeResult d = ReadJobFile(file);
    ASSERT_TRUE(d.ok()) << file;
    ApplyDefaults(d.job);
    nlohmann::json tree = EncodeTree(d.job);
    ExpectCovered(tree["spec"], Schema(crd)["properties"]["spec"], "spec");
  }
}

TEST(Crd, TheChartsCopyIsUpToDate) {
  std::ifstream in("charts/dljob/crds/dljob.io_dljobs.yaml");
  ASSERT_TRUE(in) << "charts/dljob/crds/dljob.io_dljobs.yaml is missing: run scripts/gen-crd.sh";
  std::stringstream text;
  text << in.rdbuf();
  std::string want = EmitYaml(DLJobCrd());
  std::string have = text.str();
  have = have.substr(have.find('\n') + 1);  // the "generated" comment line
  EXPECT_EQ(have, want) << "the CRD in charts/ is stale: run scripts/gen-crd.sh";
}

}  // namespace
}  // namespace dljob
