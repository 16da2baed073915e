// See api_errors.h.
#include "tests/apiserver/api_errors.h"

namespace dljob::apiserver {
namespace {

std::string Quoted(const std::string& what, const std::string& name) {
  return what + " \"" + name + "\"";
}

}  // namespace

ApiError NotFoundError(const std::string& what, const std::string& name) {
  return {404, "NotFound", Quoted(what, name) + " not found"};
}

ApiError AlreadyExistsError(const std::string& what, const std::string& name) {
  return {409, "AlreadyExists", Quoted(what, name) + " already exists"};
}

ApiError GenerateNameConflictError(const std::string& what, const std::string& name) {
  return {409, "AlreadyExists",
          Quoted(what, name) +
              " already exists, the server was not able to generate a unique name for the object"};
}

ApiError ConflictError(const std::string& what, const std::string& name,
                       const std::string& detail) {
  return {409, "Conflict",
          "Operation cannot be fulfilled on " + Quoted(what, name) + ": " + detail};
}

ApiError StaleUpdateError(const std::string& what, const std::string& name) {
  return ConflictError(what, name,
                       "the object has been modified; please apply your changes to the latest "
                       "version and try again");
}

ApiError GoneError(const std::string& message) { return {410, "Expired", message}; }

ApiError BadRequestError(const std::string& message) { return {400, "BadRequest", message}; }

ApiError InvalidError(const std::string& kind, const std::string& name, const std::string& detail) {
  return {422, "Invalid", Quoted(kind, name) + " is invalid: " + detail};
}

ApiError MethodNotAllowedError(const std::string& message) {
  return {405, "MethodNotAllowed", message};
}

ApiError InternalError(const std::string& message) { return {500, "InternalError", message}; }

ApiError ErrorForCode(int code, const std::string& message) {
  std::string reason;
  switch (code) {
    case 400:
      reason = "BadRequest";
      break;
    case 401:
      reason = "Unauthorized";
      break;
    case 403:
      reason = "Forbidden";
      break;
    case 404:
      reason = "NotFound";
      break;
    case 405:
      reason = "MethodNotAllowed";
      break;
    case 409:
      reason = "Conflict";
      break;
    case 410:
      reason = "Expired";
      break;
    case 415:
      reason = "UnsupportedMediaType";
      break;
    case 422:
      reason = "Invalid";
      break;
    case 429:
      reason = "TooManyRequests";
      break;
    case 500:
      reason = "InternalError";
      break;
    case 503:
      reason = "ServiceUnavailable";
      break;
    case 504:
      reason = "Timeout";
      break;
    default:
      reason = code >= 500 ? "InternalError" : "BadRequest";
      break;
  }
  return {code, reason, message};
}

nlohmann::json StatusBody(const ApiError& error) {
  nlohmann::json body = {
      {"kind", "Status"},    {"apiVersion", "v1"},       {"metadata", nlohmann::json::object()},
      {"status", "Failure"}, {"message", error.message}, {"reason", error.reason},
      {"code", error.http}};
  if (error.reason.empty()) body.erase("reason");  // Go's omitempty (a webhook's refusal)
  return body;
}

nlohmann::json SuccessStatus(int code) {
  return {{"kind", "Status"},
          {"apiVersion", "v1"},
          {"metadata", nlohmann::json::object()},
          {"status", "Success"},
          {"code", code}};
}

}  // namespace dljob::apiserver
