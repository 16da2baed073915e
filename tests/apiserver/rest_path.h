// What a request path and query mean to the REST layer: which discovery document, or which
// resource, namespace, object and subresource. Pure functions; thread-safe.
//
//   /api/v1/pods                                   list across namespaces
//   /api/v1/namespaces/{ns}/pods[/{name}[/{sub}]]  namespaced
//   /api/v1/nodes[/{name}[/{sub}]]                 cluster-scoped
//   /api/v1/namespaces/{name}[/status]             the namespace object itself
//   /apis/{group}/{version}/...                    the same under a group
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace dljob::apiserver {

struct RestPath {
  enum class Kind {
    kUnknown,
    kVersion,       // /version
    kApiVersions,   // /api
    kGroupList,     // /apis
    kGroup,         // /apis/{group}
    kResourceList,  // /api/v1, /apis/{group}/{version}
    kResource,      // a resource, object or subresource
  };
  Kind kind = Kind::kUnknown;
  std::string group;
  std::string version;
  std::string ns;  // from /namespaces/{ns}/..., "" otherwise
  std::string plural;
  std::string name;
  std::string subresource;
};

RestPath ParseRestPath(std::string_view path);

// Query parameters, percent-decoded ('+' is a space); a later repeat wins.
using QueryParams = std::map<std::string, std::string>;
QueryParams ParseQuery(std::string_view query);
std::string PercentDecode(std::string_view text);

// "true", "1" (as the real server reads boolean parameters).
bool QueryFlag(const QueryParams& query, const std::string& key);

}  // namespace dljob::apiserver
