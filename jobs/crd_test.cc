#include "jobs/crd.h"

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "jobs/child_names.h"
#include "jobs/codec.h"
#include "jobs/defaults.h"
#include "jobs/dlqueue_codec.h"
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
  // metadata: only the name and generateName are restricted (all a CRD may restrict there), as
  // validation does for a one-worker job.
  const ojson& name = Schema(crd)["properties"]["metadata"]["properties"]["name"];
  EXPECT_EQ(Schema(crd)["properties"]["metadata"]["properties"].size(), 2u);
  EXPECT_EQ(name["maxLength"], MaxJobNameLength(1));
  EXPECT_EQ(name["pattern"], "^[a-z]([-a-z0-9]*[a-z0-9])?$");
  const ojson& prefix = Schema(crd)["properties"]["metadata"]["properties"]["generateName"];
  EXPECT_EQ(prefix["maxLength"], MaxJobNameLength(1) - 5);
  EXPECT_EQ(prefix["pattern"], "^[a-z][-a-z0-9]*$");
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

TEST(Crd, DLQueueIsAClusterScopedStructuralSchemaWithStatusAndColumns) {
  ojson crd = DLQueueCrd();
  EXPECT_EQ(crd["metadata"]["name"], "dlqueues.dljob.io");
  EXPECT_EQ(crd["spec"]["scope"], "Cluster");
  EXPECT_EQ(crd["spec"]["names"]["kind"], "DLQueue");
  EXPECT_EQ(crd["spec"]["names"]["listKind"], "DLQueueList");
  EXPECT_EQ(crd["spec"]["names"]["shortNames"][0], "dlq");
  const ojson& version = crd["spec"]["versions"][0];
  EXPECT_TRUE(version["subresources"].contains("status"));
  std::vector<std::string> columns;
  for (const ojson& c : version["additionalPrinterColumns"]) columns.push_back(c["name"]);
  EXPECT_EQ(columns, (std::vector<std::string>{"Cohort", "Product", "Nominal", "Used", "Borrowed",
                                               "Pending", "Running", "Age"}));
  ExpectStructural(Schema(crd), "");
  const ojson& quota = Schema(crd)["properties"]["spec"]["properties"]["quotas"]["items"];
  EXPECT_EQ(quota["required"], ojson::array({"nominal"}));
  EXPECT_EQ(quota["properties"]["nominal"]["minimum"], 0);
  EXPECT_EQ(quota["properties"]["borrowingLimit"]["minimum"], 0);
  // Every column's path is in the schema.
  for (const ojson& c : version["additionalPrinterColumns"]) {
    std::string path = c["jsonPath"];
    if (path.rfind(".metadata.", 0) == 0) continue;
    const ojson* node = &Schema(crd);
    for (size_t start = 1; start < path.size();) {
      size_t end = path.find_first_of(".[", start);
      std::string key = path.substr(start, end == std::string::npos ? end : end - start);
      ASSERT_TRUE((*node)["properties"].contains(key)) << path;
      node = &(*node)["properties"][key];
      if (end != std::string::npos && path[end] == '[') {
        node = &(*node)["items"];
        end = path.find(']', end) + 1;
      }
      start = end == std::string::npos ? end : end + 1;
    }
  }
}

TEST(Crd, TheDefaultQueueIsCovered) {
  Result<std::string> text = ReadDocumentFile("examples/queue-default.yaml");
  ASSERT_TRUE(text.ok()) << text.status().message();
  QueueDecodeResult d = DecodeQueueYaml(*text);
  ASSERT_TRUE(d.ok()) << JoinFieldErrors(d.errors);
  ojson crd = DLQueueCrd();
  ExpectCovered(EncodeQueueTree(d.queue)["spec"], Schema(crd)["properties"]["spec"], "spec");
}

// The chart's copies are exactly what dljob-gen-crd prints.
TEST(Crd, TheChartsCopiesAreUpToDate) {
  for (const auto& [file, crd] :
       {std::pair("charts/dljob/crds/dljob.io_dljobs.yaml", DLJobCrd()),
        std::pair("charts/dljob/crds/dljob.io_dlqueues.yaml", DLQueueCrd())}) {
    std::ifstream in(file);
    ASSERT_TRUE(in) << file << " is missing: run scripts/gen/crd.sh";
    std::stringstream text;
    text << in.rdbuf();
    std::string have = text.str();
    have = have.substr(have.find('\n') + 1);  // the "generated" comment line
    EXPECT_EQ(have, EmitYaml(crd)) << file << " is stale: run scripts/gen/crd.sh";
  }
}

}  // namespace
}  // namespace dljob
