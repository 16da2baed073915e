// The discovery documents (/version, /api, /apis, /apis/{group}, /api/v1, /apis/{group}/{version})
// built from the resource registry, in the real API server's JSON shapes (APIVersions,
// APIGroupList, APIGroup, APIResourceList) so kubectl and client libraries can map kinds to
// resources. Subresources appear as "pods/status", "pods/binding", "pods/log".
// Pure functions of the types passed in; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tests/apiserver/resource_types.h"

namespace dljob::apiserver {

Json VersionInfo();
Json ApiVersions(const std::string& server_address);
Json GroupList(const std::vector<ResourceType>& types);
// nullopt when no type is in `group`.
std::optional<Json> GroupDocument(const std::vector<ResourceType>& types, const std::string& group);
// nullopt when no type is in group/version.
std::optional<Json> ResourceList(const std::vector<ResourceType>& types, const std::string& group,
                                 const std::string& version);

}  // namespace dljob::apiserver
