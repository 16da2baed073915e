// ReviewAdmission (admission_review.h): AdmissionReviews as the API server sends them, v1 and
// v1beta1, for DLJobs and DLQueues; creates, spec updates in each kind of phase, status and
// metadata-only updates; and requests it must not answer. The messages are the ones
// `dljob validate` prints: tests/admission_matches_validate_test.cc compares them with the CLI
// for every file in examples/invalid/.
#include "operator/app/admission_review.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jobs/codec.h"

namespace dljob::op {
namespace {

using nlohmann::json;

json Example(const std::string& file) {
  Result<std::string> text = ReadDocumentFile(file);
  EXPECT_TRUE(text.ok()) << text.status().message();
  Result<json> tree = YamlToJson(text.ok() ? *text : "");
  EXPECT_TRUE(tree.ok());
  return tree.ok() ? *tree : json();
}

json Review(const std::string& version, const std::string& operation, const json& object,
            const json& old_object = nullptr, const std::string& sub_resource = "") {
  json request = {{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
                  {"operation", operation},
                  {"object", object}};
  if (!old_object.is_null()) request["oldObject"] = old_object;
  if (!sub_resource.empty()) request["subResource"] = sub_resource;
  return {{"apiVersion", "admission.k8s.io/" + version},
          {"kind", "AdmissionReview"},
          {"request", request}};
}

json Answer(const std::string& path, const json& review) {
  AdmissionAnswer a = ReviewAdmission(path, review.dump());
  EXPECT_EQ(a.status, 200) << a.body;
  json out = json::parse(a.body, nullptr, false);
  EXPECT_EQ(out["apiVersion"], review["apiVersion"]);  // answered in the request's version
  EXPECT_EQ(out["kind"], "AdmissionReview");
  EXPECT_EQ(out["response"]["uid"], review["request"]["uid"]);
  return out["response"];
}

TEST(AdmissionReview, AValidJobIsAllowedInBothVersions) {
  for (const char* version : {"v1", "v1beta1"}) {
    json r =
        Answer(kValidateDLJobPath, Review(version, "CREATE", Example("examples/resnet-job.yaml")));
    EXPECT_EQ(r["allowed"], true) << r.dump();
    EXPECT_FALSE(r.contains("status"));
  }
  json q =
      Answer(kValidateDLQueuePath, Review("v1", "CREATE", Example("examples/queue-default.yaml")));
  EXPECT_EQ(q["allowed"], true) << q.dump();
}

TEST(AdmissionReview, AnInvalidJobIsDeniedWithEveryProblemByPath) {
  for (const char* version : {"v1", "v1beta1"}) {
    json r = Answer(kValidateDLJobPath,
                    Review(version, "CREATE", Example("examples/invalid/gpus-not-divisible.yaml")));
    EXPECT_EQ(r["allowed"], false);
    EXPECT_EQ(r["status"]["code"], 422);
    EXPECT_EQ(r["status"]["reason"], "Invalid");
    EXPECT_EQ(r["status"]["message"].get<std::string>().rfind(
                  "DLJob uneven is not valid (1 problem):\n"
                  "spec.gpusPerWorker: must divide spec.gpus (12) into whole workers, got 8 (",
                  0),
              0u)
        << r.dump();
  }
  json q = Answer(kValidateDLQueuePath,
                  Review("v1", "CREATE", Example("examples/invalid/queue-bad-quotas.yaml")));
  EXPECT_EQ(q["allowed"], false);
  EXPECT_EQ(q["status"]["message"].get<std::string>().rfind(
                "DLQueue team-a is not valid (2 problems):\n", 0),
            0u)
      << q.dump();
}

// The API server sends what it stores: server-set metadata and, on updates, the status.
json Stored(json job, const std::string& phase) {
  job["metadata"]["uid"] = "d5b5c2a8-3f0e-4c1e-9a51-3c2b8f2f6a10";
  job["metadata"]["resourceVersion"] = "4242";
  job["metadata"]["generation"] = 3;
  job["metadata"]["creationTimestamp"] = "2025-06-01T10:00:00Z";
  job["metadata"]["managedFields"] = json::array({{{"manager", "kubectl"}}});
  if (!phase.empty()) job["status"] = {{"phase", phase}};
  return job;
}

TEST(AdmissionReview, UpdatesAreHeldToWhatTheJobCanTakeInItsPhase) {
  json old_job = Stored(Example("examples/resnet-job.yaml"), "Running");
  json new_job = old_job;
  new_job["spec"]["image"] = "registry.example.com/dljob/trainer:v2";  // taken by a restart
  new_job["spec"]["runPolicy"]["backoffLimit"] = 5;
  EXPECT_EQ(Answer(kValidateDLJobPath, Review("v1", "UPDATE", new_job, old_job))["allowed"], true);
  new_job["spec"]["scheduling"]["queue"] = "team-b";
  json r = Answer(kValidateDLJobPath, Review("v1", "UPDATE", new_job, old_job));
  EXPECT_EQ(r["allowed"], false);
  EXPECT_EQ(r["status"]["message"],
            "DLJob resnet50 is not valid (1 problem):\n"
            "spec.scheduling.queue: cannot change while the job is Running (its GPUs are counted "
            "in its queue); set spec.runPolicy.suspend to true first (in this update or before), "
            "then change it: the job starts again with the new spec, from the start (no "
            "spec.checkpoint)");

  new_job["spec"]["runPolicy"]["suspend"] = true;  // the same change, suspending: allowed
  EXPECT_EQ(Answer(kValidateDLJobPath, Review("v1beta1", "UPDATE", new_job, old_job))["allowed"],
            true);
  // The gang's shape is fixed once the job has started, suspended or not.
  json suspended = Stored(Example("examples/resnet-job.yaml"), "Suspended");
  json edited = suspended;
  edited["spec"]["gpus"] = 8;
  json gang = Answer(kValidateDLJobPath, Review("v1", "UPDATE", edited, suspended));
  EXPECT_EQ(gang["allowed"], false);
  EXPECT_NE(gang["status"]["message"].get<std::string>().find(
                "spec.gpus: cannot change once the job has started (it is Suspended)"),
            std::string::npos)
      << gang.dump();
  // An update must still be valid as a whole.
  edited = suspended;
  edited["spec"]["command"] = json::array();
  json invalid = Answer(kValidateDLJobPath, Review("v1", "UPDATE", edited, suspended));
  EXPECT_EQ(invalid["allowed"], false);
  EXPECT_NE(invalid["status"]["message"].get<std::string>().find("spec.command: required"),
            std::string::npos)
      << invalid.dump();
}

// Labels, finalizers, a deletion, the status: none is judged, even on a job stored before the
// webhook existed that would not pass today.
TEST(AdmissionReview, WhatLeavesTheSpecAloneIsAllowed) {
  json old_job = Stored(Example("examples/invalid/gpus-not-divisible.yaml"), "Failed");
  json labelled = old_job;
  labelled["metadata"]["labels"]["team"] = "b";
  labelled["metadata"]["deletionTimestamp"] = "2025-06-01T11:00:00Z";
  EXPECT_EQ(Answer(kValidateDLJobPath, Review("v1", "UPDATE", labelled, old_job))["allowed"], true);
  json status = old_job;
  status["status"]["phase"] = "Running";
  status["spec"]["gpus"] = 7;  // a status update's object may differ: it is not judged at all
  EXPECT_EQ(
      Answer(kValidateDLJobPath, Review("v1", "UPDATE", status, old_job, "status"))["allowed"],
      true);
  EXPECT_EQ(Answer(kValidateDLJobPath, Review("v1", "DELETE", old_job, old_job))["allowed"], true);
}

TEST(AdmissionReview, RequestsItDoesNotAnswer) {
  json good = Review("v1", "CREATE", Example("examples/mnist-job.yaml"));
  EXPECT_EQ(ReviewAdmission("/validate-pods", good.dump()).status, 404);
  EXPECT_EQ(ReviewAdmission(kValidateDLJobPath, "{not json").status, 400);
  json v2 = good;
  v2["apiVersion"] = "admission.k8s.io/v2";
  AdmissionAnswer a = ReviewAdmission(kValidateDLJobPath, v2.dump());
  EXPECT_EQ(a.status, 400);
  EXPECT_NE(a.body.find("apiVersion \"admission.k8s.io/v2\""), std::string::npos) << a.body;
  json no_uid = good;
  no_uid["request"].erase("uid");
  EXPECT_EQ(ReviewAdmission(kValidateDLJobPath, no_uid.dump()).status, 400);
  json no_object = good;
  no_object["request"].erase("object");
  EXPECT_EQ(ReviewAdmission(kValidateDLJobPath, no_object.dump()).status, 400);
}

}  // namespace
}  // namespace dljob::op
