// A standby replica's way to the leader's log archive. The chart's default archive is an emptyDir
// per replica: only the leader's holds job logs, yet the metrics Service sends /logs to any ready
// replica (the API server's service proxy picks one at random), so half the asks of a 2-replica
// install found nothing. A standby whose own archive has no such log passes the request on once:
// it reads the Lease's holder (the leader's identity, its pod's name by default), that pod's IP,
// and GETs http://<ip>:<port><path> with the caller's bearer token, which the leader checks again,
// and kForwardedHeader, so a request is passed on at most once (never back and forth around a
// change of leader). With a shared archive (a ReadWriteMany claim, a bucket) nothing is passed on:
// every replica finds the log itself.
//
// Thread-safe when `api` and `http` are.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "http/client.h"
#include "kube/api.h"
#include "operator/app/endpoints.h"

namespace dljob::op {

// On a request a replica passed on; its value is "1".
inline constexpr char kForwardedHeader[] = "X-Dljob-Forwarded";

struct LeaderAddress {
  std::string lease_namespace;  // the Lease, and the leader's pod, live here
  std::string lease_name;
  std::string self;  // this replica's identity: never asked
  int port = 0;      // the metrics port, the same on every replica
};

// "http://<leader pod IP>:<port>". NotFound when the Lease has no holder or this replica holds it,
// or no pod has the holder's name (an identity that is not a pod name); Unavailable when the pod
// has no IP yet or the API server cannot be asked.
Result<std::string> LeaderUrl(kube::Api& api, const LeaderAddress& where);

using ClientFactory =
    std::function<Result<std::unique_ptr<http::Client>>(const std::string& base_url)>;

// The leader's answer to GET `path` with `token` (any status it gives, passed back as it is), or
// why there is none (LeaderUrl's errors; Unavailable when the leader did not answer).
Result<EndpointAnswer> AskLeader(kube::Api& api, const LeaderAddress& where,
                                 const ClientFactory& clients, const std::string& path,
                                 const std::string& token);

}  // namespace dljob::op
