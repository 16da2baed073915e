// The DLQueue API: its field tables against a queue with every field set (round trips, a fixed
// document, an unknown key in every object, every row in the CRD), validation rule by rule,
// decode errors with their positions, the example queue, and dispatch on a document's kind.
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "jobs/crd.h"
#include "jobs/dlqueue_codec.h"
#include "jobs/dlqueue_fields.h"
#include "jobs/testing/field_table_walk.h"
#include "jobs/validation.h"

namespace dljob {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

// When a field is added, set it here and in kEveryFieldQueueYaml.
DLQueue EveryFieldQueue() {
  DLQueue q;
  q.metadata.name = "team-a";
  q.metadata.generate_name = "team-";
  q.metadata.labels = {{"team", "a"}};
  q.metadata.annotations = {{"dljob.io/owner", "vision"}};
  q.metadata.uid = "7f1e";
  q.metadata.resource_version = "9";
  q.metadata.generation = 2;
  q.metadata.creation_timestamp = "2024-05-01T09:00:00Z";
  q.metadata.other = {{"finalizers", {"dljob.io/queue"}}};
  q.metadata.namespace_ = "unused";  // cluster-scoped: validation rejects it, the codec keeps it
  q.spec.cohort = "vision";
  q.spec.quotas = {
      QueueQuota{.gpu_product = "NVIDIA-A100-SXM4-80GB", .nominal = 32, .borrowing_limit = 16}};
  q.status.used = {QueueUsage{.gpu_product = "NVIDIA-A100-SXM4-80GB", .gpus = 40}};
  q.status.borrowed = {QueueUsage{.gpu_product = "NVIDIA-A100-SXM4-80GB", .gpus = 8}};
  q.status.pending_jobs = 3;
  q.status.running_jobs = 5;
  return q;
}

constexpr char kEveryFieldQueueYaml[] = R"(apiVersion: dljob.io/v1alpha1
kind: DLQueue
metadata:
  name: team-a
  generateName: team-
  namespace: unused
  labels:
    team: a
  annotations:
    dljob.io/owner: vision
  uid: 7f1e
  resourceVersion: "9"
  generation: 2
  creationTimestamp: 2024-05-01T09:00:00Z
  finalizers:
    - dljob.io/queue
spec:
  cohort: vision
  quotas:
    - gpuProduct: NVIDIA-A100-SXM4-80GB
      nominal: 32
      borrowingLimit: 16
status:
  used:
    - gpuProduct: NVIDIA-A100-SXM4-80GB
      gpus: 40
  borrowed:
    - gpuProduct: NVIDIA-A100-SXM4-80GB
      gpus: 8
  pendingJobs: 3
  runningJobs: 5
)";

TEST(DLQueueFields, EveryFieldQueueSetsEveryRow) { testing::ExpectEverySet(EveryFieldQueue(), ""); }

TEST(DLQueueFields, EveryFieldRoundTripsThroughYamlJsonAndTheTree) {
  const DLQueue queue = EveryFieldQueue();
  QueueDecodeResult yaml = DecodeQueueYaml(EncodeQueueYaml(queue));
  ASSERT_TRUE(yaml.ok()) << JoinFieldErrors(yaml.errors);
  EXPECT_EQ(yaml.queue, queue);
  QueueDecodeResult from_json = DecodeQueueJson(EncodeQueueJson(queue));
  ASSERT_TRUE(from_json.ok()) << JoinFieldErrors(from_json.errors);
  EXPECT_EQ(from_json.queue, queue);
  QueueDecodeResult tree = DecodeQueueTree(EncodeQueueTree(queue));
  ASSERT_TRUE(tree.ok()) << JoinFieldErrors(tree.errors);
  EXPECT_EQ(tree.queue, queue);
  EXPECT_EQ(DecodeQueueAny(EncodeQueueJson(queue)).queue, queue);
  EXPECT_EQ(DecodeQueueAny(EncodeQueueYaml(queue)).queue, queue);
}

TEST(DLQueueFields, EveryFieldDocumentDecodesAndEncodesBackUnchanged) {
  EXPECT_EQ(EncodeQueueYaml(EveryFieldQueue()), kEveryFieldQueueYaml);
  QueueDecodeResult decoded = DecodeQueueYaml(kEveryFieldQueueYaml);
  ASSERT_TRUE(decoded.ok()) << JoinFieldErrors(decoded.errors);
  EXPECT_EQ(decoded.queue, EveryFieldQueue());
  std::string json_text = EncodeQueueJson(decoded.queue);
  EXPECT_EQ(EncodeQueueJson(DecodeQueueJson(json_text).queue), json_text);
}

TEST(DLQueueFields, EveryObjectReportsAnUnknownKeyAtItsPath) {
  const json tree = EncodeQueueTree(EveryFieldQueue());
  std::vector<testing::StructObject> objects;
  testing::CollectStructs<DLQueue>(tree, json::json_pointer(), "", objects);
  // The queue, metadata, spec, status, a quota, a used and a borrowed entry.
  ASSERT_EQ(objects.size(), 7u);
  for (const testing::StructObject& o : objects) {
    SCOPED_TRACE(o.path);
    json bad = tree;
    bad[o.at]["zzzUnknown"] = 1;
    QueueDecodeResult r = DecodeQueueTree(bad);
    if (o.keeps_unknown_keys) {
      EXPECT_TRUE(r.ok()) << JoinFieldErrors(r.errors);
      EXPECT_EQ(r.queue.metadata.other["zzzUnknown"], 1);
    } else {
      ASSERT_EQ(r.errors.size(), 1u) << JoinFieldErrors(r.errors);
      EXPECT_EQ(r.errors[0].path, JoinField(o.path, "zzzUnknown"));
      EXPECT_EQ(r.errors[0].reason, "unknown field");
    }
  }
}

TEST(DLQueueFields, EveryRowIsInTheCrdWithItsType) {
  ojson crd = DLQueueCrd();
  testing::ExpectStructInCrd<DLQueue>(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"], "");
}

TEST(DLQueueCodec, ErrorsNamePathAndPosition) {
  QueueDecodeResult r = DecodeQueueYaml(R"(apiVersion: dljob.io/v1alpha1
kind: DLQueue
metadata: {name: a}
spec:
  quotas:
    - gpuProduct: A100
      nominal: eight
      borowingLimit: 2
)");
  ASSERT_EQ(r.errors.size(), 2u) << JoinFieldErrors(r.errors);
  EXPECT_EQ(r.errors[0].ToString(),
            "spec.quotas[0].nominal: must be an integer, got string \"eight\" (line 7, column 16)");
  EXPECT_EQ(r.errors[1].path, "spec.quotas[0].borowingLimit");
  EXPECT_NE(r.errors[1].reason.find("did you mean \"borrowingLimit\""), std::string::npos)
      << r.errors[1].reason;
  EXPECT_EQ(r.errors[1].line, 8);

  EXPECT_EQ(JoinFieldErrors(DecodeQueueYaml("").errors),
            "empty document: expected a DLQueue (apiVersion, kind, metadata, spec)");
  EXPECT_EQ(JoinFieldErrors(DecodeQueueYaml("a: 1\n---\nb: 2\n").errors),
            "expected one DLQueue document, found 2");
  EXPECT_EQ(JoinFieldErrors(DecodeQueueJson("[1]").errors),
            "a DLQueue must be an object, got a list");
  EXPECT_FALSE(DecodeQueueJson("{\"kind\": ").ok());
}

TEST(DLQueueCodec, TheDefaultQueueExampleIsValid) {
  Result<std::string> text = ReadDocumentFile("examples/queue-default.yaml");
  ASSERT_TRUE(text.ok()) << text.status().message() << " (run from the repository root)";
  EXPECT_EQ(DocumentKind(*text), "DLQueue");
  QueueDecodeResult r = DecodeQueueYaml(*text);
  ASSERT_TRUE(r.ok()) << JoinFieldErrors(r.errors);
  EXPECT_EQ(JoinFieldErrors(Validate(r.queue)), "");
  EXPECT_EQ(r.queue.metadata.name, "default");  // the queue spec.scheduling.queue defaults to
}

TEST(DocumentKind, ReadsTheKindOfEitherFormatAndNothingElse) {
  EXPECT_EQ(DocumentKind("kind: DLQueue\n"), "DLQueue");
  EXPECT_EQ(DocumentKind("{\"kind\": \"DLJob\"}"), "DLJob");
  EXPECT_EQ(DocumentKind("apiVersion: v1\n"), "");
  EXPECT_EQ(DocumentKind("kind: [DLQueue]\n"), "");
  EXPECT_EQ(DocumentKind("- a\n"), "");
  EXPECT_EQ(DocumentKind("kind: [\n"), "");
  EXPECT_EQ(DocumentKind("{\"kind\""), "");
}

DLQueue ValidQueue() {
  DLQueue q;
  q.metadata.name = "team-a";
  q.spec.quotas = {QueueQuota{"NVIDIA-A100-SXM4-80GB", 32, std::nullopt},
                   QueueQuota{.gpu_product = "", .nominal = 0, .borrowing_limit = 8}};
  return q;
}

TEST(DLQueueValidation, ValidQueueHasNoErrors) {
  EXPECT_EQ(JoinFieldErrors(Validate(ValidQueue())), "");
  DLQueue in_cohort = ValidQueue();
  for (const char* cohort : {"ml", "team-a-2", "x", "0"}) {
    in_cohort.spec.cohort = cohort;
    EXPECT_EQ(JoinFieldErrors(Validate(in_cohort)), "") << cohort;
  }
  in_cohort.spec.cohort = std::string(63, 'c');
  EXPECT_EQ(JoinFieldErrors(Validate(in_cohort)), "");
}

// spec.cohort is optional: omitted, it decodes as "" (the default cohort) and encodes as nothing.
TEST(DLQueueCodec, CohortIsOptional) {
  QueueDecodeResult r = DecodeQueueYaml(R"(apiVersion: dljob.io/v1alpha1
kind: DLQueue
metadata: {name: a}
spec:
  quotas: [{nominal: 8}]
)");
  ASSERT_TRUE(r.ok()) << JoinFieldErrors(r.errors);
  EXPECT_EQ(r.queue.spec.cohort, "");
  EXPECT_FALSE(EncodeQueueTree(r.queue)["spec"].contains("cohort"));
  r.queue.spec.cohort = "ml";
  EXPECT_EQ(EncodeQueueTree(r.queue)["spec"]["cohort"], "ml");
  EXPECT_EQ(DecodeQueueJson(EncodeQueueJson(r.queue)).queue.spec.cohort, "ml");
}

struct QueueCase {
  const char* name;
  std::function<void(DLQueue&)> mutate;
  const char* path;
  const char* phrase;  // a key part of the reason
};

class DLQueueRule : public ::testing::TestWithParam<QueueCase> {};

TEST_P(DLQueueRule, ReportsPathAndReason) {
  DLQueue q = ValidQueue();
  GetParam().mutate(q);
  FieldErrors errors = Validate(q);
  ASSERT_EQ(errors.size(), 1u) << JoinFieldErrors(errors);
  EXPECT_EQ(errors[0].path, GetParam().path);
  EXPECT_NE(errors[0].reason.find(GetParam().phrase), std::string::npos) << errors[0].reason;
}

const QueueCase kQueueCases[] = {
    {"ApiVersion", [](DLQueue& q) { q.api_version = "v1"; }, "apiVersion", "dljob.io/v1alpha1"},
    {"Kind", [](DLQueue& q) { q.kind = "DLJob"; }, "kind", "must be DLQueue"},
    {"NameRequired", [](DLQueue& q) { q.metadata.name = ""; }, "metadata.name", "required"},
    {"NameNotADnsLabel", [](DLQueue& q) { q.metadata.name = "Team_A"; }, "metadata.name",
     "DNS label"},
    {"NameTooLong", [](DLQueue& q) { q.metadata.name = std::string(64, 'q'); }, "metadata.name",
     "at most 63"},
    {"Namespace", [](DLQueue& q) { q.metadata.namespace_ = "team-a"; }, "metadata.namespace",
     "cluster-scoped"},
    {"LabelValue", [](DLQueue& q) { q.metadata.labels["team"] = "a b"; }, "metadata.labels.team",
     "value must be"},
    {"CohortNotADnsLabel", [](DLQueue& q) { q.spec.cohort = "Team_A"; }, "spec.cohort",
     "must be a DNS label"},
    {"CohortEndsWithADash", [](DLQueue& q) { q.spec.cohort = "ml-"; }, "spec.cohort",
     "must be a DNS label"},
    {"CohortTooLong", [](DLQueue& q) { q.spec.cohort = std::string(64, 'c'); }, "spec.cohort",
     "at most 63 characters, got 64"},
    {"NoQuotas", [](DLQueue& q) { q.spec.quotas.clear(); }, "spec.quotas", "at least one quota"},
    {"NominalRequired", [](DLQueue& q) { q.spec.quotas[0].nominal.reset(); },
     "spec.quotas[0].nominal", "required"},
    {"NominalNegative", [](DLQueue& q) { q.spec.quotas[0].nominal = -1; }, "spec.quotas[0].nominal",
     "zero or more GPUs, got -1"},
    {"BorrowingLimitNegative", [](DLQueue& q) { q.spec.quotas[1].borrowing_limit = -4; },
     "spec.quotas[1].borrowingLimit", "zero or more GPUs, got -4"},
    {"ProductNotALabelValue", [](DLQueue& q) { q.spec.quotas[0].gpu_product = "A100 80GB"; },
     "spec.quotas[0].gpuProduct", "value must be"},
    {"DuplicateProduct",
     [](DLQueue& q) {
       q.spec.quotas.push_back(QueueQuota{"NVIDIA-A100-SXM4-80GB", 1, std::nullopt});
     },
     "spec.quotas[2].gpuProduct",
     "duplicate quota for gpuProduct \"NVIDIA-A100-SXM4-80GB\" (also spec.quotas[0])"},
    {"DuplicateAnyProduct",
     [](DLQueue& q) {
       q.spec.quotas.push_back(QueueQuota{"", 1, std::nullopt});
     },
     "spec.quotas[2].gpuProduct", "duplicate quota for any product (gpuProduct \"\")"},
};

INSTANTIATE_TEST_SUITE_P(Rules, DLQueueRule, ::testing::ValuesIn(kQueueCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(DLQueueValidation, ReportsEveryProblemAtOnce) {
  DLQueue q = ValidQueue();
  q.kind = "Queue";
  q.spec.quotas[0].nominal = -1;
  q.spec.quotas[1].borrowing_limit = -1;
  EXPECT_EQ(Validate(q).size(), 3u) << JoinFieldErrors(Validate(q));
}

}  // namespace
}  // namespace dljob
