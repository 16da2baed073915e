// Small helpers the REST layer's files share: JSON and Status answers, request headers.
// Pure (beyond writing to the ResponseWriter passed in); thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "http/http.h"
#include "tests/apiserver/api_errors.h"

namespace dljob::apiserver {

// The REST layer answers through http/'s seam.
using http::Handler;
using http::HeaderValue;
using http::HttpHeaders;
using http::HttpRequest;
using http::ResponseWriter;

void RespondJson(ResponseWriter& out, int status, const nlohmann::json& body);
// With a `Warning: 299 - "<text>"` header per warning (what kubectl prints as "Warning: <text>").
void RespondJson(ResponseWriter& out, int status, const nlohmann::json& body,
                 const std::vector<std::string>& warnings);
// A metav1.Status body with the error's code (and Retry-After on 429), `details` (a 422's
// causes) when it is not null, and Warning headers as RespondJson's.
void RespondError(ResponseWriter& out, const ApiError& error,
                  const nlohmann::json& details = nullptr,
                  const std::vector<std::string>& warnings = {});
// The first header named `name` (ASCII case-insensitive), or "".
std::string RequestHeader(const HttpRequest& request, std::string_view name);

}  // namespace dljob::apiserver
