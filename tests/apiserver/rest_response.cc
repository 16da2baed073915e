// See rest_response.h.
#include "tests/apiserver/rest_response.h"

#include <cctype>

namespace dljob::apiserver {

void RespondJson(ResponseWriter& out, int status, const nlohmann::json& body) {
  out.Respond(status, {{"Content-Type", "application/json"}}, body.dump() + "\n");
}

namespace {

void AddWarningHeaders(HttpHeaders& headers, const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) {
    std::string quoted = "\"";
    for (char c : w) {
      if (c == '"' || c == '\\') quoted += '\\';
      quoted += c;
    }
    headers.emplace_back("Warning", "299 - " + quoted + "\"");
  }
}

}  // namespace

void RespondJson(ResponseWriter& out, int status, const nlohmann::json& body,
                 const std::vector<std::string>& warnings) {
  HttpHeaders headers = {{"Content-Type", "application/json"}};
  AddWarningHeaders(headers, warnings);
  out.Respond(status, headers, body.dump() + "\n");
}

void RespondError(ResponseWriter& out, const ApiError& error, const nlohmann::json& details,
                  const std::vector<std::string>& warnings) {
  HttpHeaders headers = {{"Content-Type", "application/json"}};
  if (error.http == 429) headers.emplace_back("Retry-After", "1");
  AddWarningHeaders(headers, warnings);
  nlohmann::json body = StatusBody(error);
  if (!details.is_null()) body["details"] = details;
  out.Respond(error.http, headers, body.dump() + "\n");
}

std::string RequestHeader(const HttpRequest& request, std::string_view name) {
  for (const auto& [key, value] : request.headers) {
    if (key.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < key.size() && same; ++i) {
      same = std::tolower(static_cast<unsigned char>(key[i])) ==
             std::tolower(static_cast<unsigned char>(name[i]));
    }
    if (same) return value;
  }
  return "";
}

}  // namespace dljob::apiserver
