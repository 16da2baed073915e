// See log_access.h.
#include "operator/app/log_access.h"

#include "storage/objstore/sigv4.h"

namespace dljob::op {
namespace {

using kube::Json;

const kube::Resource kTokenReviews{"authentication.k8s.io", "v1", "tokenreviews", false,
                                   "TokenReview"};
const kube::Resource kSubjectAccessReviews{"authorization.k8s.io", "v1", "subjectaccessreviews",
                                           false, "SubjectAccessReview"};

AccessDecision Unavailable(const std::string& what, const kube::ApiError& e) {
  return {503, "cannot check who may read this log: " + what + ": " + e.ToString() + "; try again",
          ""};
}

}  // namespace

std::string BearerToken(const std::string& header_value) {
  const std::string scheme = "Bearer ";
  if (header_value.size() <= scheme.size()) return "";
  for (size_t i = 0; i < scheme.size(); ++i) {  // the scheme is case-insensitive (RFC 7235)
    if (std::tolower(static_cast<unsigned char>(header_value[i])) !=
        std::tolower(static_cast<unsigned char>(scheme[i])))
      return "";
  }
  std::string token = header_value.substr(scheme.size());
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.pop_back();
  while (!token.empty() && token.front() == ' ') token.erase(token.begin());
  return token;
}

LogAccess::LogAccess(kube::Api& api, const Clock& clock, std::chrono::seconds ttl)
    : api_(api), clock_(clock), ttl_(ttl) {}

AccessDecision LogAccess::Check(const std::string& token, const std::string& ns) {
  if (token.empty()) {
    return {401,
            "Unauthorized: send a bearer token (Authorization: Bearer <token>); `dljob logs` "
            "does this for you",
            ""};
  }
  const std::string key = storage::Sha256Hex(token) + "/" + ns;
  const Clock::MonotonicTime now = clock_.MonotonicNow();
  {
    MutexLock lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end() && now < it->second.until) return it->second.decision;
    // Forget what has expired, so the cache holds only the last ttl's callers.
    for (auto e = cache_.begin(); e != cache_.end();) {
      e = now < e->second.until ? std::next(e) : cache_.erase(e);
    }
  }
  AccessDecision d = Review(token, ns);
  if (d.status != 503) {
    MutexLock lock(mu_);
    cache_[key] = Cached{d, now + ttl_};
  }
  return d;
}

AccessDecision LogAccess::Review(const std::string& token, const std::string& ns) {
  Json review = {{"apiVersion", "authentication.k8s.io/v1"},
                 {"kind", "TokenReview"},
                 {"spec", {{"token", token}}}};
  kube::ApiResult<Json> reviewed = api_.Create(kTokenReviews, "", review);
  if (!reviewed.ok()) return Unavailable("TokenReview", reviewed.error());
  const Json status = reviewed->value("status", Json::object());
  if (!status.value("authenticated", false)) {
    std::string why = status.value("error", std::string());
    return {401,
            "Unauthorized: the API server did not accept the token" +
                (why.empty() ? std::string() : " (" + why + ")"),
            ""};
  }
  const Json user = status.value("user", Json::object());
  const std::string name = user.value("username", std::string());
  Json sar = {
      {"apiVersion", "authorization.k8s.io/v1"},
      {"kind", "SubjectAccessReview"},
      {"spec",
       {{"user", name},
        {"resourceAttributes",
         {{"namespace", ns}, {"verb", "get"}, {"resource", "pods"}, {"subresource", "log"}}}}}};
  if (user.contains("uid")) sar["spec"]["uid"] = user["uid"];
  if (user.contains("groups")) sar["spec"]["groups"] = user["groups"];
  if (user.contains("extra")) sar["spec"]["extra"] = user["extra"];
  kube::ApiResult<Json> answered = api_.Create(kSubjectAccessReviews, "", sar);
  if (!answered.ok()) return Unavailable("SubjectAccessReview", answered.error());
  const Json verdict = answered->value("status", Json::object());
  if (!verdict.value("allowed", false) || verdict.value("denied", false)) {
    std::string reason = verdict.value("reason", std::string());
    return {403,
            "Forbidden: User \"" + name + "\" cannot get resource \"pods/log\" in namespace \"" +
                ns + "\"" + (reason.empty() ? std::string() : " (" + reason + ")"),
            name};
  }
  return {200, "", name};
}

}  // namespace dljob::op
