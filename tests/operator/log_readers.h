// Who may read a job's archived log, for the operator's end-to-end cases on both servers: a
// service account's bearer token (E2eCluster::ServiceAccountToken), the namespaced grant of
// `get pods/log` that /logs asks the API server about, and a GET of /logs with a token.
// Thread-compatible; the test's thread.
#pragma once

#include <string>

#include "base/status.h"
#include "http/testing/http_test_client.h"
#include "kube/api.h"

namespace dljob::testing {

// A Role in `ns` allowing get on pods and pods/log, bound to the service account `sa` of `ns`.
Status GrantPodLogs(kube::Api& api, const std::string& ns, const std::string& sa);

// GET /logs/<ns>/<job> on the operator's metrics port, with `token` ("" for none) as a bearer
// token in `header` (Authorization, or the header `dljob logs` uses through the service proxy).
http::testing::ClientResponse FetchLogs(int port, const std::string& ns, const std::string& job,
                                        const std::string& token,
                                        const std::string& header = "Authorization");

}  // namespace dljob::testing
