// Fault injection for the test API server: "the next N requests matching (method, path prefix)
// answer HTTP code C", and latencies added before API requests are served — to all of them, or
// to those of one client (User-Agent), method or path prefix, so that one operator replica can be
// made slow while the other is not. Set through /_test/faults and /_test/latency
// (test_control.h); consulted by the REST handler before it serves a request. Thread-safe (one
// mutex).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "tests/apiserver/api_errors.h"

namespace dljob::apiserver {

struct FaultRule {
  std::string method;       // "GET", "POST", …; "" or "*" matches any
  std::string path_prefix;  // "/api/v1/namespaces/a/pods"; "" matches any
  int code = 500;           // 409, 410, 429, 500, 503, …
  int count = 1;            // how many matching requests fail
  std::string message;      // default: "injected fault"
};

// Requests matching every filter that is set wait `latency` before they are served.
struct LatencyRule {
  std::chrono::milliseconds latency{0};
  std::string user_agent;   // the request's User-Agent, exactly; "" matches any
  std::string method;       // "GET", …; "" or "*" matches any
  std::string path_prefix;  // "" matches any
};

class Faults {
 public:
  void Add(FaultRule rule);
  void Clear();  // every fault and every latency
  // The error to answer instead of serving the request, consuming one use of the first rule that
  // matches; nullopt when none does.
  std::optional<ApiError> Take(const std::string& method, const std::string& path);
  size_t pending() const;

  // Sets the latency of the requests the rule's filters match, replacing a rule with the same
  // filters; a latency of 0 removes it.
  void SetLatency(LatencyRule rule);
  // The latency of the most recently set rule that matches the request; 0 when none does.
  std::chrono::milliseconds LatencyFor(const std::string& method, const std::string& path,
                                       const std::string& user_agent) const;

 private:
  mutable Mutex mu_;
  std::vector<FaultRule> rules_ GUARDED_BY(mu_);
  std::vector<LatencyRule> latencies_ GUARDED_BY(mu_);  // the most recent last
};

}  // namespace dljob::apiserver
