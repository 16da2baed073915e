// See admission_review.h.
#include "operator/app/admission_review.h"

#include <nlohmann/json.hpp>

#include "jobs/codec.h"
#include "jobs/dlqueue_codec.h"
#include "jobs/document_check.h"
#include "jobs/spec_update.h"

namespace dljob::op {
namespace {

using nlohmann::json;

AdmissionAnswer BadRequest(const std::string& why) {
  return {400, "text/plain", "not an AdmissionReview this webhook answers: " + why + "\n"};
}

// "path: reason" per line, as `dljob validate` prints them, without file positions.
std::string ProblemLines(const FieldErrors& errors) {
  std::string out;
  for (const FieldError& e : errors) {
    FieldError bare = e;
    bare.line = bare.column = 0;
    out += (out.empty() ? "" : "\n") + bare.ToString();
  }
  return out;
}

// The problems of the object under review; empty when it may be admitted.
FieldErrors JobProblems(const json& request) {
  DecodeResult decoded = DecodeTree(request["object"]);
  const bool update = request.value("operation", "") == "UPDATE";
  if (!update) return CheckDecodedJob(decoded);
  const json old_object = request.value("oldObject", json::object());
  // An update that leaves the spec alone (metadata, a deletion under way) is not judged again.
  if (request["object"].value("spec", json()) == old_object.value("spec", json())) return {};
  FieldErrors errors = CheckDecodedJob(decoded);
  if (!errors.empty()) return errors;
  return CheckSpecUpdate(DecodeTree(old_object).job, decoded.job);
}

FieldErrors QueueProblems(const json& request) {
  const json& object = request["object"];
  const json old_object = request.value("oldObject", json::object());
  if (request.value("operation", "") == "UPDATE" &&
      object.value("spec", json()) == old_object.value("spec", json())) {
    return {};
  }
  return CheckDecodedQueue(DecodeQueueTree(object));
}

}  // namespace

AdmissionAnswer ReviewAdmission(const std::string& path, const std::string& body) {
  const bool jobs = path == kValidateDLJobPath;
  if (!jobs && path != kValidateDLQueuePath) {
    return {404, "text/plain", "no webhook at " + path + "\n"};
  }
  json review = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (review.is_discarded() || !review.is_object()) return BadRequest("the body is not JSON");
  const std::string api_version = review.value("apiVersion", "");
  if (api_version != "admission.k8s.io/v1" && api_version != "admission.k8s.io/v1beta1") {
    return BadRequest("apiVersion \"" + api_version +
                      "\" (expected admission.k8s.io/v1 or admission.k8s.io/v1beta1)");
  }
  if (review.value("kind", "") != "AdmissionReview")
    return BadRequest("kind is not AdmissionReview");
  const json request = review.value("request", json());
  if (!request.is_object() || !request.contains("uid") || !request["uid"].is_string()) {
    return BadRequest("request.uid is missing");
  }
  json response = {{"uid", request["uid"]}, {"allowed", true}};
  const std::string operation = request.value("operation", "");
  const bool judged =
      (operation == "CREATE" || operation == "UPDATE") && request.value("subResource", "").empty();
  if (judged) {
    if (!request.contains("object") || !request["object"].is_object()) {
      return BadRequest("request.object is missing");
    }
    FieldErrors errors = jobs ? JobProblems(request) : QueueProblems(request);
    if (!errors.empty()) {
      const json& meta = request["object"].value("metadata", json::object());
      std::string name = meta.value("name", meta.value("generateName", ""));
      response["allowed"] = false;
      response["status"] = {
          {"code", 422},
          {"reason", "Invalid"},
          {"message", std::string(jobs ? kKind : kQueueKind) + " " + name + " is not valid (" +
                          std::to_string(errors.size()) +
                          (errors.size() == 1 ? " problem" : " problems") + "):\n" +
                          ProblemLines(errors)},
      };
    }
  }
  json answer = {{"apiVersion", api_version}, {"kind", "AdmissionReview"}, {"response", response}};
  return {200, "application/json", answer.dump()};
}

}  // namespace dljob::op
