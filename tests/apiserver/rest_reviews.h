// TokenReview and SubjectAccessReview for the test API server: what an operator that serves
// something only to the users Kubernetes allows (kube-rbac-proxy style: dljob-operator's /logs)
// asks the server. The real server answers from its authenticators and authorizers; this one
// models a small, stated part of them:
//
//   POST /apis/authentication.k8s.io/v1/tokenreviews
//     A token is authenticated when a Secret of type kubernetes.io/service-account-token holds it
//     in data.token (the legacy service-account token Secret; here the test writes the token
//     itself, any string, where the real token controller writes a signed JWT the server then
//     verifies). The user is system:serviceaccount:<ns>:<annotation
//     kubernetes.io/service-account.name>, uid the annotation kubernetes.io/service-account.uid,
//     groups system:serviceaccounts, system:serviceaccounts:<ns>, system:authenticated — as the
//     real server names a service account. Any other token: authenticated false with an error.
//     Not modelled: client certificates, OIDC, bound (projected) tokens, audiences, expiry.
//   POST /apis/authorization.k8s.io/v1/subjectaccessreviews
//     RBAC as the real authorizer evaluates it (plugin/pkg/auth/authorizer/rbac): the user (and
//     groups) of spec; ClusterRoleBindings, then the RoleBindings of the request's namespace; a
//     subject is a User by name, a Group among spec.groups, or a ServiceAccount
//     (system:serviceaccount:<ns>:<name>, the binding's namespace when the subject names none);
//     a binding's roleRef a ClusterRole, or a Role of the binding's namespace; a rule matches by
//     verbs, apiGroups, resources ("pods/log" for a subresource; "*" and "*/log" as wildcards)
//     and resourceNames. The group system:masters is allowed everything. The answer's reason
//     names the binding, as the real one does. Not modelled: nonResourceAttributes (denied),
//     aggregated ClusterRoles, the other authorizers (Node, webhooks).
// The RBAC kinds (roles, rolebindings, clusterroles, clusterrolebindings of
// rbac.authorization.k8s.io/v1) are stored as plain objects (RbacTypes). Pure functions, except
// ServeReview which reads the store; thread-safe.
#pragma once

#include <vector>

#include "tests/apiserver/object_store.h"
#include "tests/apiserver/resource_types.h"
#include "tests/apiserver/rest_path.h"
#include "tests/apiserver/rest_response.h"

namespace dljob::apiserver {

// roles, rolebindings, clusterroles, clusterrolebindings (rbac.authorization.k8s.io/v1).
std::vector<ResourceType> RbacTypes();

// The TokenReview status for `token`, given the Secrets of every namespace.
Json ReviewToken(const std::string& token, const std::vector<Json>& secrets);

// The objects RBAC is decided from.
struct RbacObjects {
  std::vector<Json> roles, role_bindings, cluster_roles, cluster_role_bindings;
};
// The SubjectAccessReview status ({allowed, reason}) for a review's spec.
Json ReviewAccess(const Json& spec, const RbacObjects& rbac);

// Answers a POST of a TokenReview or SubjectAccessReview; false when `path` is neither.
bool ServeReview(const HttpRequest& request, const RestPath& path, const ObjectStore& store,
                 const ResourceRegistry& registry, ResponseWriter& out);

}  // namespace dljob::apiserver
