// REST wire format of the Kubernetes API: request paths, query strings, error bodies.
//
// Pure functions, no I/O; HttpApi composes them into Requests. Paths follow the API server's
// layout: core resources under /api/v1, group resources under /apis/{group}/{version}; namespaced
// ones under /namespaces/{ns} unless listed across all namespaces (ns == ""). Path segments and
// query values are percent-encoded. Thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "kube/api.h"

namespace dljob::kube::rest {

// RFC 3986 percent-encoding of everything but unreserved characters (A-Z a-z 0-9 - . _ ~).
std::string PercentEncode(std::string_view s);

// /api/v1/namespaces/{ns}/pods, /apis/dljob.io/v1alpha1/dljobs (ns "" or cluster-scoped).
std::string CollectionPath(const Resource& r, const std::string& ns);
// CollectionPath + /{name}[/{subresource}].
std::string ObjectPath(const Resource& r, const std::string& ns, const std::string& name,
                       const std::string& subresource = "");

// Appends "key=value" pairs; the first one gets '?', the rest '&'.
class Query {
 public:
  Query& Add(std::string_view key, std::string_view value);
  Query& AddIf(bool cond, std::string_view key, std::string_view value) {
    return cond ? Add(key, value) : *this;
  }
  const std::string& str() const { return s_; }

 private:
  std::string s_;
};

// labelSelector, fieldSelector, resourceVersion, limit, continue.
std::string ListQuery(const ListOptions& o);
// watch=true, labelSelector, fieldSelector, resourceVersion, timeoutSeconds, allowWatchBookmarks.
// `timeout_seconds` replaces o.timeout_seconds (HttpApi always asks for an explicit one).
std::string WatchQuery(const ListOptions& o, int timeout_seconds);
// container, follow, sinceSeconds, tailLines.
std::string LogQuery(const LogOptions& o);

// The metav1.DeleteOptions body for DELETE.
Json DeleteBody(const DeleteOptions& o);
// The v1.Binding body for POST pods/{pod}/binding.
Json BindingBody(const std::string& ns, const std::string& pod, const std::string& node);

// An ApiError from a non-2xx answer: reason and message from a metav1.Status body; for any other
// body, the reason Kubernetes uses for that code ("NotFound", "TooManyRequests", …) and the body's
// first 256 bytes as the message.
ApiError DecodeError(int http, std::string_view body);
// The reason Kubernetes gives for a bare HTTP code ("" when it has none).
std::string ReasonForCode(int http);

// How long the server asked us to wait: the Retry-After header (delta-seconds) or, failing that,
// a Status body's details.retryAfterSeconds. std::nullopt when neither says.
std::optional<std::chrono::seconds> RetryAfter(std::string_view header_value,
                                               std::string_view body);

}  // namespace dljob::kube::rest
