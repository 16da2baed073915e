// See rest.h.
#include "kube/rest.h"

#include <charconv>
#include <cstdio>

namespace dljob::kube::rest {

std::string PercentEncode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

std::string CollectionPath(const Resource& r, const std::string& ns) {
  std::string path = r.group.empty() ? "/api/" + r.version : "/apis/" + r.group + "/" + r.version;
  if (r.namespaced && !ns.empty()) path += "/namespaces/" + PercentEncode(ns);
  return path + "/" + r.plural;
}

std::string ObjectPath(const Resource& r, const std::string& ns, const std::string& name,
                       const std::string& subresource) {
  std::string path = CollectionPath(r, ns) + "/" + PercentEncode(name);
  if (!subresource.empty()) path += "/" + subresource;
  return path;
}

Query& Query::Add(std::string_view key, std::string_view value) {
  s_ += s_.empty() ? '?' : '&';
  s_ += key;
  s_ += '=';
  s_ += PercentEncode(value);
  return *this;
}

namespace {

void AddSelectors(Query& q, const ListOptions& o) {
  q.AddIf(!o.label_selector.empty(), "labelSelector", o.label_selector);
  q.AddIf(!o.field_selector.empty(), "fieldSelector", o.field_selector);
  q.AddIf(!o.resource_version.empty(), "resourceVersion", o.resource_version);
}

}  // namespace

std::string ListQuery(const ListOptions& o) {
  Query q;
  AddSelectors(q, o);
  q.AddIf(o.limit > 0, "limit", std::to_string(o.limit));
  q.AddIf(!o.continue_token.empty(), "continue", o.continue_token);
  return q.str();
}

std::string WatchQuery(const ListOptions& o, int timeout_seconds) {
  Query q;
  q.Add("watch", "true");
  AddSelectors(q, o);
  q.AddIf(timeout_seconds > 0, "timeoutSeconds", std::to_string(timeout_seconds));
  q.AddIf(o.allow_bookmarks, "allowWatchBookmarks", "true");
  return q.str();
}

std::string LogQuery(const LogOptions& o) {
  Query q;
  q.AddIf(!o.container.empty(), "container", o.container);
  q.AddIf(o.follow, "follow", "true");
  if (o.since_seconds) q.Add("sinceSeconds", std::to_string(*o.since_seconds));
  if (o.tail_lines) q.Add("tailLines", std::to_string(*o.tail_lines));
  q.AddIf(o.timestamps, "timestamps", "true");
  return q.str();
}

Json DeleteBody(const DeleteOptions& o) {
  Json body = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (!o.propagation_policy.empty()) body["propagationPolicy"] = o.propagation_policy;
  if (!o.precondition_uid.empty()) body["preconditions"] = {{"uid", o.precondition_uid}};
  if (o.grace_period_seconds) body["gracePeriodSeconds"] = *o.grace_period_seconds;
  return body;
}

Json BindingBody(const std::string& ns, const std::string& pod, const std::string& node) {
  return {{"apiVersion", "v1"},
          {"kind", "Binding"},
          {"metadata", {{"name", pod}, {"namespace", ns}}},
          {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
}

std::string ReasonForCode(int http) {
  switch (http) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 406:
      return "NotAcceptable";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 413:
      return "RequestEntityTooLarge";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "";
  }
}

ApiError DecodeError(int http, std::string_view body) {
  ApiError error;
  error.http = http;
  Json status = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (status.is_object() && status["kind"] == "Status") {
    if (status["reason"].is_string()) error.reason = status["reason"];
    if (status["message"].is_string()) error.message = status["message"];
  }
  if (error.reason.empty()) error.reason = ReasonForCode(http);
  if (error.message.empty()) {
    std::string_view head = body.substr(0, 256);
    error.message = head.empty() ? "the server answered " + std::to_string(http) + " with no body"
                                 : std::string(head);
  }
  return error;
}

std::optional<std::chrono::seconds> RetryAfter(std::string_view header_value,
                                               std::string_view body) {
  while (!header_value.empty() && header_value.front() == ' ') header_value.remove_prefix(1);
  while (!header_value.empty() && header_value.back() == ' ') header_value.remove_suffix(1);
  if (!header_value.empty()) {
    int64_t seconds = 0;
    auto [end, ec] =
        std::from_chars(header_value.data(), header_value.data() + header_value.size(), seconds);
    if (ec == std::errc() && end == header_value.data() + header_value.size() && seconds >= 0) {
      return std::chrono::seconds(seconds);
    }
  }
  Json status = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (status.is_object() && status["details"].is_object()) {
    const Json& after = status["details"]["retryAfterSeconds"];
    if (after.is_number_integer() && after.get<int64_t>() >= 0) {
      return std::chrono::seconds(after.get<int64_t>());
    }
  }
  return std::nullopt;
}

}  // namespace dljob::kube::rest
