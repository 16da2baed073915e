// See admission_review.h.
#include "tests/apiserver/admission_review.h"

#include <algorithm>
#include <cctype>

#include "base/json_fields.h"
#include "tests/apiserver/field_errors.h"

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

bool SameHeaderName(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::vector<std::string> HeaderValues(const http::HttpHeaders& headers, const std::string& name) {
  std::vector<std::string> out;
  for (const auto& [key, value] : headers) {
    if (SameHeaderName(key, name)) out.push_back(value);
  }
  return out;
}

// The Go json error for a body that does not parse, as far as it can be told without Go.
std::string GoJsonError(const std::string& body) {
  size_t first = body.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "unexpected end of JSON input";
  char c = body[first];
  if (std::string("{[\"tfn-0123456789").find(c) == std::string::npos) {
    return "invalid character " + std::string(1, '\'') + c + "' looking for beginning of value";
  }
  return "unexpected end of JSON input";
}

std::string JsonTypeName(const Json& value) {
  if (value.is_array()) return "array";
  if (value.is_string()) return "string";
  if (value.is_number()) return "number";
  if (value.is_boolean()) return "bool";
  return "object";
}

// client-go's message for an HTTP error whose body is not a Status (NewGenericServerResponse).
std::string GenericServerResponse(int status, const std::string& text) {
  switch (status) {
    case 400:
      return "the server rejected our request for an unknown reason";
    case 401:
      return "the server has asked for the client to provide credentials";
    case 404:
      return "the server could not find the requested resource";
    case 405:
      return "the server does not allow this method on the requested resource";
    case 409:
      return "the server reported a conflict";
    case 422:
      return "the server rejected our request due to an error in our request";
    case 429:
      return "the server has received too many requests and has asked us to try again later";
    case 503:
      return "the server is currently unable to handle the request";
    case 504:
      return "the server was unable to return a response in the time allotted, but may still be "
             "processing the request";
    default:
      if (status >= 500) {
        return "an error on the server (" + GoQuote(text) +
               ") has prevented the request from succeeding";
      }
      return "the server responded with the status code " + std::to_string(status) +
             " but did not return more information";
  }
}

std::string MediaType(const std::string& content_type) {
  std::string media = content_type.substr(0, content_type.find(';'));
  media.erase(0, media.find_first_not_of(' '));
  while (!media.empty() && media.back() == ' ') media.pop_back();
  for (char& c : media) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return media;
}

WebhookVerdict Failed(std::string why) {
  WebhookVerdict v;
  v.kind = WebhookVerdict::Kind::kCallFailed;
  v.failure = std::move(why);
  return v;
}

// apiserver's webhook errors.ToStatusErr.
WebhookVerdict Denied(const std::string& hook_name, const Json& result) {
  WebhookVerdict v;
  v.kind = WebhookVerdict::Kind::kDenied;
  const Json& code = FieldOf(result, "code");
  int http = code.is_number_integer() ? code.get<int>() : 0;
  v.denial.http = http < 400 ? 400 : http;
  v.denial.reason = StringAt(result, "reason");
  std::string denied_by = "admission webhook " + GoQuote(hook_name) + " denied the request";
  if (std::string message = StringAt(result, "message"); !message.empty()) {
    v.denial.message = denied_by + ": " + message;
  } else if (!v.denial.reason.empty()) {
    v.denial.message = denied_by + ": " + v.denial.reason;
  } else {
    v.denial.message = denied_by + " without explanation";
  }
  if (const Json& details = FieldOf(result, "details"); details.is_object()) v.details = details;
  return v;
}

}  // namespace

Json UserInfoOf(const http::HttpHeaders& headers) {
  std::vector<std::string> users = HeaderValues(headers, "Impersonate-User");
  if (users.empty() || users.front().empty()) {
    return {{"username", "system:anonymous"}, {"groups", {"system:unauthenticated"}}};
  }
  const std::string& user = users.front();
  std::vector<std::string> groups = HeaderValues(headers, "Impersonate-Group");
  const std::string sa_prefix = "system:serviceaccount:";
  if (groups.empty() && user.rfind(sa_prefix, 0) == 0) {
    std::string rest = user.substr(sa_prefix.size());
    groups = {"system:serviceaccounts", "system:serviceaccounts:" + rest.substr(0, rest.find(':'))};
  }
  if (user != "system:anonymous" &&
      std::none_of(groups.begin(), groups.end(), [](const std::string& g) {
        return g == "system:authenticated" || g == "system:unauthenticated";
      })) {
    groups.push_back("system:authenticated");
  }
  Json info = {{"username", user}, {"groups", groups}};
  std::vector<std::string> uids = HeaderValues(headers, "Impersonate-Uid");
  if (!uids.empty() && !uids.front().empty()) info["uid"] = uids.front();
  return info;
}

std::string ReviewVersionFor(const ValidatingWebhook& hook) {
  for (const std::string& v : hook.admission_review_versions) {
    if (v == "v1" || v == "v1beta1") return v;
  }
  return "";
}

Json AdmissionReviewRequest(const AdmissionAttributes& request, const ReviewContext& context,
                            const std::string& uid, const std::string& version) {
  Json kind = {{"group", request.group}, {"version", request.version}, {"kind", request.kind}};
  Json resource = {
      {"group", request.group}, {"version", request.version}, {"resource", request.resource}};
  Json review = {{"uid", uid},
                 {"kind", kind},
                 {"resource", resource},
                 {"requestKind", kind},
                 {"requestResource", resource},
                 {"operation", request.operation},
                 {"userInfo", context.user_info},
                 {"object", request.object ? *request.object : Json(nullptr)},
                 {"oldObject", request.old_object ? *request.old_object : Json(nullptr)},
                 {"dryRun", context.dry_run},
                 {"options", context.options}};
  // Go's omitempty.
  if (!request.subresource.empty()) {
    review["subResource"] = request.subresource;
    review["requestSubResource"] = request.subresource;
  }
  if (!request.name.empty()) review["name"] = request.name;
  if (!request.ns.empty()) review["namespace"] = request.ns;
  return {{"apiVersion", "admission.k8s.io/" + version},
          {"kind", "AdmissionReview"},
          {"request", std::move(review)}};
}

WebhookVerdict ReadWebhookAnswer(const std::string& hook_name, const std::string& uid,
                                 const std::string& version, int status,
                                 const std::string& content_type, const std::string& body) {
  const std::string media = MediaType(content_type);
  const bool json_media = media.empty() || media == "application/json";
  if (status < 200 || status > 206) {
    Json parsed = json_media ? Json::parse(body, nullptr, false) : Json();
    if (parsed.is_object() && StringAt(parsed, "kind") == "Status" &&
        !StringAt(parsed, "message").empty()) {
      return Failed("failed to call webhook: " + StringAt(parsed, "message"));
    }
    std::string text = media == "text/plain" ? body.substr(0, 2048) : "unknown";
    if (media == "text/plain") {
      text.erase(0, text.find_first_not_of(" \t\r\n"));
      text.erase(text.find_last_not_of(" \t\r\n") + 1);
    }
    return Failed("failed to call webhook: " + GenericServerResponse(status, text));
  }
  if (!json_media) {
    return Failed("failed to call webhook: serializer for " + content_type + " doesn't exist");
  }
  if (body.empty()) {
    return Failed(
        "failed to call webhook: 0-length response with status code: " + std::to_string(status) +
        " and content type: " + (content_type.empty() ? "application/json" : content_type));
  }
  Json review = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (review.is_discarded()) {
    return Failed("failed to call webhook: couldn't get version/kind; json parse error: " +
                  GoJsonError(body));
  }
  if (!review.is_object()) {
    return Failed(
        "failed to call webhook: couldn't get version/kind; json parse error: json: cannot "
        "unmarshal " +
        JsonTypeName(review) +
        " into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; "
        "Kind string \"json:\\\"kind,omitempty\\\"\" }");
  }
  const Json& response = FieldOf(review, "response");
  if (!response.is_null() && !response.is_object()) {
    return Failed("failed to call webhook: json: cannot unmarshal " + JsonTypeName(response) +
                  " into Go struct field AdmissionReview.response of type v1.AdmissionResponse");
  }
  const Json& allowed = FieldOf(response, "allowed");
  if (!allowed.is_null() && !allowed.is_boolean()) {
    return Failed("failed to call webhook: json: cannot unmarshal " + JsonTypeName(allowed) +
                  " into Go struct field AdmissionResponse.response.allowed of type bool");
  }
  const std::string invalid = "received invalid webhook response: ";
  if (response.is_null()) return Failed(invalid + "webhook response was absent");
  if (version == "v1") {
    if (StringAt(response, "uid") != uid) {
      return Failed(invalid + "expected response.uid=" + GoQuote(uid) + ", got " +
                    GoQuote(StringAt(response, "uid")));
    }
    std::string api_version = StringAt(review, "apiVersion");
    size_t slash = api_version.find('/');
    std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
    std::string ver = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
    if (api_version != "admission.k8s.io/v1" || StringAt(review, "kind") != "AdmissionReview") {
      return Failed(invalid +
                    "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, "
                    "got " +
                    group + "/" + ver + ", Kind=" + StringAt(review, "kind"));
    }
    if (!StringAt(response, "patch").empty()) {
      return Failed(invalid + "validating webhook may not return response.patch");
    }
    if (!FieldOf(response, "patchType").is_null()) {
      return Failed(invalid + "validating webhook may not return response.patchType");
    }
  }
  std::vector<std::string> warnings;
  if (const Json& w = FieldOf(response, "warnings"); w.is_array()) {
    for (const Json& text : w) {
      if (text.is_string()) warnings.push_back(text.get<std::string>());
    }
  }
  WebhookVerdict verdict = allowed.is_boolean() && allowed.get<bool>()
                               ? WebhookVerdict{WebhookVerdict::Kind::kAllowed, {}, {}, {}, {}}
                               : Denied(hook_name, FieldOf(response, "status"));
  verdict.warnings = std::move(warnings);
  return verdict;
}

ApiError CallFailedError(const std::string& hook_name, const std::string& failure, Json* details) {
  std::string error = "failed calling webhook " + GoQuote(hook_name) + ": " + failure;
  if (details) *details = {{"causes", {{{"message", error}}}}};
  return InternalError("Internal error occurred: " + error);
}

}  // namespace dljob::apiserver
