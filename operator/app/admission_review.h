// The operator's validating admission webhook, as a pure function: an AdmissionReview request
// (admission.k8s.io/v1, or v1beta1) in, the AdmissionReview response out, in the request's
// version.
//
// POST /validate-dljob reviews DLJobs, /validate-dlqueue DLQueues (chart: templates/webhook.yaml).
// CREATE and UPDATE of the object are checked by the same code as `dljob validate`
// (jobs/document_check.h): decode the object the API server sends, default it, validate it; a
// refusal lists every problem, one "path: reason" per line, exactly as `dljob validate` prints
// them (without the file positions a JSON request has none of). The API server has already
// pruned (or, with fieldValidation=Strict, refused) fields the CRD does not know, so what arrives
// has none — and one that did arrive would be named by its path, as `dljob validate` names it.
// An UPDATE of a DLJob is also held to jobs/spec_update.h: a spec field the job cannot take in its
// phase is refused, each with why and what to do instead. An UPDATE that leaves the spec as it
// was (labels, finalizers, a deletion under way) is allowed without validating, so that an object
// stored before the webhook existed can still be labelled or deleted. Subresources (status) and
// other operations are allowed.
//
// A request that is not an AdmissionReview this webhook can answer gets HTTP 400 with the reason
// (the API server then applies the webhook's failurePolicy). Pure; thread-safe.
#pragma once

#include <string>

namespace dljob::op {

inline constexpr char kValidateDLJobPath[] = "/validate-dljob";
inline constexpr char kValidateDLQueuePath[] = "/validate-dlqueue";

struct AdmissionAnswer {
  int status = 200;  // 400: not a request this webhook answers; 404: an unknown path
  std::string content_type = "application/json";
  std::string body;  // the AdmissionReview, or the reason in plain text
};

// `path` is the request's path (kValidateDLJobPath or kValidateDLQueuePath), `body` its JSON.
AdmissionAnswer ReviewAdmission(const std::string& path, const std::string& body);

}  // namespace dljob::op
