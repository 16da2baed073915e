// One validation: every malformed example in examples/invalid/ is refused by the operator's
// admission webhook (operator/app/admission_review.h) with exactly the problems `dljob validate`
// prints for the file — the same paths, the same reasons, in the same order — the file positions
// aside (a request's JSON has none). The CLI runs as the built program, as a user runs it.
#include <algorithm>
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jobs/codec.h"
#include "jobs/dlqueue_types.h"
#include "operator/app/admission_review.h"
#include "testing/command.h"

namespace dljob::testing {
namespace {

using Json = nlohmann::json;

std::vector<std::string> InvalidExamples() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(SourceDir() + "/examples/invalid")) {
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The webhook's answer to `kubectl apply` of the object: its problem lines, or none if allowed.
std::vector<std::string> WebhookProblems(const Json& object) {
  const bool queue = object.value("kind", "") == kQueueKind;
  Json review = {
      {"apiVersion", "admission.k8s.io/v1"},
      {"kind", "AdmissionReview"},
      {"request",
       {{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
        {"kind", {{"group", "dljob.io"}, {"version", "v1alpha1"}, {"kind", object["kind"]}}},
        {"resource",
         {{"group", "dljob.io"},
          {"version", "v1alpha1"},
          {"resource", queue ? "dlqueues" : "dljobs"}}},
        {"operation", "CREATE"},
        {"userInfo", {{"username", "alice"}}},
        {"object", object}}}};
  op::AdmissionAnswer answer =
      op::ReviewAdmission(queue ? op::kValidateDLQueuePath : op::kValidateDLJobPath, review.dump());
  EXPECT_EQ(answer.status, 200) << answer.body;
  Json response = Json::parse(answer.body)["response"];
  EXPECT_EQ(response["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
  if (response.value("allowed", true)) return {};
  EXPECT_EQ(response["status"]["code"], 422);
  std::vector<std::string> out;
  std::istringstream lines(response["status"].value("message", ""));
  std::string first;
  std::getline(lines, first);  // "DLJob NAME is not valid (N problems):"
  EXPECT_NE(first.find(" is not valid ("), std::string::npos) << first;
  for (std::string line; std::getline(lines, line);) {
    size_t start = line.find_first_not_of(' ');
    if (start != std::string::npos) out.push_back(line.substr(start));
  }
  return out;
}

TEST(AdmissionMatchesValidate, EveryInvalidExampleIsRefusedWithTheSameProblems) {
  std::vector<std::string> files = InvalidExamples();
  ASSERT_GE(files.size(), 5u);
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    int exit_code = -1;
    std::vector<std::string> expected = ValidateProblems(file, &exit_code);
    EXPECT_EQ(exit_code, 1);
    ASSERT_FALSE(expected.empty());

    Result<std::string> text = ReadDocumentFile(file);
    ASSERT_TRUE(text.ok()) << text.status().message();
    Result<Json> object = YamlToJson(*text);
    ASSERT_TRUE(object.ok()) << object.status().message();
    EXPECT_EQ(WebhookProblems(*object), expected);
  }
}

TEST(AdmissionMatchesValidate, EveryExampleTheCliAcceptsTheWebhookAdmits) {
  for (const char* name : {"examples/resnet-job.yaml", "examples/queue-default.yaml"}) {
    const std::string file = SourceDir() + "/" + name;
    SCOPED_TRACE(file);
    CommandResult cli = RunCommand({BinDir() + "/dljob", "validate", "-f", file});
    ASSERT_EQ(cli.exit_code, 0) << cli.err;
    Result<std::string> text = ReadDocumentFile(file);
    ASSERT_TRUE(text.ok());
    Result<Json> object = YamlToJson(*text);
    ASSERT_TRUE(object.ok());
    EXPECT_EQ(WebhookProblems(*object), std::vector<std::string>{});
  }
}

}  // namespace
}  // namespace dljob::testing
