// ControlClient: the test API server's simulation and fault-injection API (/_test, described in
// tests/apiserver/test_control.h) as typed calls, for end-to-end tests.
//
// Each call is one HTTP request on a fresh loopback connection. Calls return a Status: OK when the
// server answered 2xx, otherwise the HTTP status and body, so a failing test says what the server
// refused. Thread-safe (no shared state beyond the port).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace dljob::testing {

struct PodStatusUpdate {
  std::string phase;  // Pending | Running | Succeeded | Failed
  bool ready = false;
  int exit_code = 0;  // for Succeeded / Failed
  std::string reason;
  std::string message;
};

// One injected failure: the next `count` requests whose method matches ("*" for any) and whose
// path starts with `path_prefix` are answered with `code` (409 as a Conflict, 429 with
// Retry-After, 5xx as server errors).
struct Fault {
  std::string method = "*";
  std::string path_prefix;
  int code = 500;
  int count = 1;
};

// An injected latency: API requests matching every filter given ("" matches any) wait this long
// before they are served (answered 504, and not applied, once their own `timeout` passes).
struct Latency {
  int milliseconds = 0;  // 0 removes the rule with these filters
  std::string user_agent;
  std::string method;
  std::string path_prefix;
};

// A write the server applied (tests/apiserver/write_log.h), in the order answered.
struct AppliedWrite {
  int64_t seq = 0;
  std::string user_agent;
  std::string method;
  std::string target;
  std::string applied_at;
};

class ControlClient {
 public:
  explicit ControlClient(int port) : port_(port) {}

  // Adds a Ready node with `gpus` nvidia.com/gpu (a node change makes the operator look again).
  Status AddNode(const std::string& name, int gpus) const;
  // Stops (`running` false) or starts again the node's kubelet (/_test/nodes/{name}/kubelet).
  Status SetKubelet(const std::string& node, bool running) const;
  Status SetPodStatus(const std::string& ns, const std::string& pod,
                      const PodStatusUpdate& s) const;
  Status AppendLog(const std::string& ns, const std::string& pod, const std::string& text) const;
  // `message`: the Status message the server answers with ("": its "injected fault").
  Status AddFault(const Fault& fault, const std::string& message = "") const;
  Status ClearFaults() const;  // also clears injected latency
  // Webhook calls to Service ns/name (any port) go to `address` ("127.0.0.1:PORT").
  Status RouteService(const std::string& ns, const std::string& name,
                      const std::string& address) const;
  Status DropWatches() const;  // ends every open watch and followed log now
  Status Compact() const;      // older resourceVersions answer 410 Gone from now on
  Status SetLatency(const Latency& latency) const;
  Result<std::vector<AppliedWrite>> Writes() const;
  Result<nlohmann::json> Info() const;

 private:
  Result<std::string> Send(const std::string& method, const std::string& path,
                           const std::string& body, const std::string& content_type) const;
  int port_;
};

}  // namespace dljob::testing
