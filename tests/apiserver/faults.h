// Fault injection for the test API server: "the next N requests matching (method, path prefix)
// answer HTTP code C", and a latency added to every API response. Set through /_test/faults and
// /_test/latency (test_control.h); consulted by the REST handler before it serves a request.
// Thread-safe (one mutex).
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

class Faults {
 public:
  void Add(FaultRule rule);
  void Clear();
  // The error to answer instead of serving the request, consuming one use of the first rule that
  // matches; nullopt when none does.
  std::optional<ApiError> Take(const std::string& method, const std::string& path);
  size_t pending() const;

  void set_latency(std::chrono::milliseconds latency);
  std::chrono::milliseconds latency() const;

 private:
  mutable Mutex mu_;
  std::vector<FaultRule> rules_ GUARDED_BY(mu_);
  std::chrono::milliseconds latency_ GUARDED_BY(mu_){0};
};

}  // namespace dljob::apiserver
