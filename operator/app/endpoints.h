// The operator's own HTTP endpoints, as a pure function from a request to an answer:
//
//   GET /metrics               Prometheus text: per-job families (metrics/job_metrics.h) and the
//                              operator's own (leader, caches synced, work queue depth, logs
//                              being followed), then the job timing histograms
//   GET /healthz               200 while the process serves at all
//   GET /readyz                200 when leading with synced caches, or standing by; 503 while
//                              the leader's caches are still filling
//   GET /logs/<ns>/<job>       the job's archived launcher log (text/plain), 404 when none —
//                              how `dljob logs` reads a job whose pods are gone
// Anything else is 404; methods other than GET and HEAD are 405. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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
  std::string log_archive_dir;
};

struct EndpointAnswer {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

EndpointAnswer ServeEndpoint(const std::string& method, const std::string& path,
                             const std::function<OperatorState()>& state);

}  // namespace dljob::op
