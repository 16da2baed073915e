// See log_readers.h.
#include "tests/operator/log_readers.h"

namespace dljob::testing {

Status GrantPodLogs(kube::Api& api, const std::string& ns, const std::string& sa) {
  const kube::Resource roles{"rbac.authorization.k8s.io", "v1", "roles", true, "Role"};
  const kube::Resource bindings{"rbac.authorization.k8s.io", "v1", "rolebindings", true,
                                "RoleBinding"};
  kube::Json role = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "Role"},
      {"metadata", {{"name", sa + "-logs"}}},
      {"rules", {{{"apiGroups", {""}}, {"resources", {"pods", "pods/log"}}, {"verbs", {"get"}}}}}};
  kube::Json binding = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "RoleBinding"},
      {"metadata", {{"name", sa + "-logs"}}},
      {"roleRef",
       {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", sa + "-logs"}}},
      {"subjects", {{{"kind", "ServiceAccount"}, {"name", sa}, {"namespace", ns}}}}};
  if (auto r = api.Create(roles, ns, role); !r.ok()) return r.error().ToStatus();
  if (auto b = api.Create(bindings, ns, binding); !b.ok()) return b.error().ToStatus();
  return Status::Ok();
}

http::testing::ClientResponse FetchLogs(int port, const std::string& ns, const std::string& job,
                                        const std::string& token, const std::string& header) {
  std::string request = "GET /logs/" + ns + "/" + job + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!token.empty()) request += header + ": Bearer " + token + "\r\n";
  request += "Connection: close\r\n\r\n";
  return http::testing::Fetch(port, request);
}

}  // namespace dljob::testing
