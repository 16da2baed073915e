#include "operator/app/leader_logs.h"

#include <chrono>

#include "http/http.h"
#include "kube/object_fields.h"

namespace dljob::op {

Result<std::string> LeaderUrl(kube::Api& api, const LeaderAddress& where) {
  const std::string lease_ref = where.lease_namespace + "/" + where.lease_name;
  kube::ApiResult<kube::Json> lease =
      api.Get(kube::resources::kLeases, where.lease_namespace, where.lease_name);
  if (!lease.ok()) return lease.error().ToStatus().WithContext("reading Lease " + lease_ref);
  const std::string holder = lease->value("/spec/holderIdentity"_json_pointer, std::string());
  if (holder.empty()) return Status::NotFound("Lease " + lease_ref + " has no holder");
  if (holder == where.self) return Status::NotFound("this replica holds Lease " + lease_ref);
  kube::ApiResult<kube::Json> pod = api.Get(kube::resources::kPods, where.lease_namespace, holder);
  if (!pod.ok()) {
    if (pod.error().IsNotFound()) {
      return Status::NotFound("the leader \"" + holder + "\" is not a pod in " +
                              where.lease_namespace);
    }
    return pod.error().ToStatus().WithContext("reading the leader's pod " + holder);
  }
  const std::string ip = pod->value("/status/podIP"_json_pointer, std::string());
  if (ip.empty()) return Status::Unavailable("the leader's pod " + holder + " has no IP yet");
  // An IPv6 address goes in brackets in a URL.
  const std::string host = ip.find(':') == std::string::npos ? ip : "[" + ip + "]";
  return "http://" + host + ":" + std::to_string(where.port);
}

Result<EndpointAnswer> AskLeader(kube::Api& api, const LeaderAddress& where,
                                 const ClientFactory& clients, const std::string& path,
                                 const std::string& token) {
  Result<std::string> url = LeaderUrl(api, where);
  if (!url.ok()) return url.status();
  Result<std::unique_ptr<http::Client>> client = clients(*url);
  if (!client.ok()) return client.status();
  http::ClientRequest request;
  request.target = path;
  request.headers = {{kForwardedHeader, "1"}};
  if (!token.empty()) request.headers.push_back({"Authorization", "Bearer " + token});
  request.total_timeout = std::chrono::seconds(30);
  http::ClientResult<http::ClientResponse> response = (*client)->Send(request);
  if (!response.ok()) return response.error().ToStatus().WithContext("asking the leader");
  EndpointAnswer answer;
  answer.status = response->status;
  if (std::string type = http::HeaderValue(response->headers, "Content-Type"); !type.empty()) {
    answer.content_type = std::move(type);
  }
  answer.body = std::move(response->body);
  return answer;
}

}  // namespace dljob::op
