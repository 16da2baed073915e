// The operator's own HTTP endpoints, as a pure function from a request to an answer:
//
//   GET /metrics               Prometheus text: per-job families (metrics/job_metrics.h) and the
//                              operator's own (leader, caches synced, work queue depth, logs
//                              being followed), then the job timing histograms
//   GET /healthz               200 while the process serves at all
//   GET /readyz                200 when leading with synced caches, or standing by; 503 while
//                              the leader's caches are still filling
//   GET /logs/<ns>/<job>       the job's archived launcher log (text/plain), read from the
//                              archive (LogsEndpoint::read) by whichever replica is asked, or by
//                              the leader when this replica's archive lacks it
//                              (LogsEndpoint::leader) — how `dljob logs` reads a job whose pods
//                              are gone, or that ran more than once. Only for a bearer
//                              token allowed to get pods/log in <ns> (LogsEndpoint::authorize,
//                              log_access.h): 401 without or with a bad token, 403 when not
//                              allowed, 404 when the archive has no such log
// /metrics, /healthz and /readyz need no token. Anything else is 404; methods other than GET and
// HEAD are 405. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "operator/app/log_access.h"
#include "operator/metrics/job_metrics.h"

namespace dljob::op {

// A snapshot of what the endpoints report, taken per request.
struct OperatorState {
  bool leader_elect = true;
  bool leading = false;
  bool synced = false;  // the leader's informers have listed once
  std::vector<nlohmann::json> jobs;
  std::map<std::string, metrics::LogCounts> logs;
  size_t queue_depth = 0;
  size_t following = 0;                  // launcher logs being followed
  std::vector<metrics::Family> timings;  // metrics::JobTimingHistograms, as observed so far
};

struct EndpointAnswer {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// What /logs needs; authorize and read both null when the operator keeps no archive (404 saying
// so). `leader`, when set, is asked for a log this replica's archive does not have (a standby's
// own emptyDir: leader_logs.h): its answer is passed back as it is; NotFound (no other leader) is
// this replica's 404, any other error a 503.
struct LogsEndpoint {
  std::function<AccessDecision(const std::string& token, const std::string& ns)> authorize;
  std::function<Result<std::string>(const std::string& ns, const std::string& job)> read;
  std::function<Result<EndpointAnswer>(const std::string& path, const std::string& token)> leader;
};

// `token`: the request's bearer token (BearerToken of its Authorization or kLogTokenHeader).
EndpointAnswer ServeEndpoint(const std::string& method, const std::string& path,
                             const std::function<OperatorState()>& state,
                             const LogsEndpoint& logs = {}, const std::string& token = "");

}  // namespace dljob::op
