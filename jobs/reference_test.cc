#include "jobs/reference.h"

#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "jobs/crd.h"

namespace dljob {
namespace {

using ojson = nlohmann::ordered_json;

// The table row of the field `name` in the section headed `heading`, or "" when there is none.
std::string Row(const std::string& page, const std::string& heading, const std::string& name) {
  size_t section = page.find("\n## `" + heading + "`\n");
  if (section == std::string::npos) return "";
  size_t end = page.find("\n## ", section + 1);
  size_t row = page.find("\n| `" + name + "`", section);
  if (row == std::string::npos || row > end) return "";
  return page.substr(row + 1, page.find('\n', row + 1) - row - 1);
}

TEST(Reference, DefaultsComeFromApplyDefaults) {
  nlohmann::json defaults = DLJobDefaults();
  EXPECT_EQ(defaults["spec.runPolicy.backoffLimit"], 3);
  EXPECT_EQ(defaults["spec.scheduling.topology"], "Pack");
  EXPECT_EQ(defaults["spec.data[].readOnly"], true);
  EXPECT_EQ(defaults["spec.checkpoint.everySteps"], 500);
  // Both depend on spec.gpus.
  EXPECT_TRUE(defaults["spec.gpusPerWorker"].is_null());
  EXPECT_TRUE(defaults["spec.mpi.slotsPerWorker"].is_null());
  EXPECT_FALSE(defaults.contains("spec.gpus"));
}

TEST(Reference, EveryObjectHasATableAndEveryFieldARow) {
  std::string page = DLJobReference();
  EXPECT_EQ(Row(page, "spec.runPolicy", "backoffLimit"),
            "| `backoffLimit` | integer (int64) | `3` | ≥ 0 | Whole-job restarts before the job "
            "fails. |");
  EXPECT_EQ(Row(page, "spec", "gpus"),
            "| `gpus` | integer (int64) |  | ≥ 1 | Total GPUs, one MPI rank each. Required unless "
            "spec.elastic is set (then it defaults to, and must equal, elastic.maxGpus). |");
  EXPECT_EQ(Row(page, "spec", "data"), "| `data` | [list of object](#specdata) |  |  |  |");
  EXPECT_EQ(Row(page, "spec.gpusPerWorker", "x"), "");
  EXPECT_NE(Row(page, "spec.data[]", "readOnly").find("| `true` |"), std::string::npos);
  EXPECT_NE(Row(page, "status", "phase").find("`Queued`"), std::string::npos);
  // Every field of every object of the CRD is on the page.
  ojson crd = DLJobCrd();
  const ojson& schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
  for (const auto& [key, child] : schema["properties"]["spec"]["properties"].items()) {
    EXPECT_NE(Row(page, "spec", key), "") << key;
  }
  std::string queue = DLQueueReference();
  EXPECT_EQ(queue.find("| Default |"), std::string::npos);
  EXPECT_NE(Row(queue, "spec.quotas[]", "nominal").find("(required)"), std::string::npos);
}

// docs/reference/ holds exactly what `dljob-gen-crd --markdown` prints.
TEST(Reference, TheCheckedInPagesAreUpToDate) {
  for (const auto& [file, page] : {std::pair("docs/reference/dljob.md", DLJobReference()),
                                   std::pair("docs/reference/dlqueue.md", DLQueueReference())}) {
    std::ifstream in(file);
    ASSERT_TRUE(in) << file << " is missing: run scripts/gen/reference.sh";
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), page) << file << " is stale: run scripts/gen/reference.sh";
  }
}

}  // namespace
}  // namespace dljob
