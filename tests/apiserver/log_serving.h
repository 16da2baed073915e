// How a pod's log is served from PodLogs (pod_logs.h), as a kubelet serves it: by the test API
// server's pods/log (rest_pods.cc) and by dljob-sim-nodes' kubelet endpoint
// (tests/sim_nodes/kubelet_logs.h), one definition for both.
//
// Without follow, the log as far as it has arrived, in one response. With follow, a chunked stream
// of what has arrived and then of every later append, ending once the pod has finished and every
// line was sent (Unread), when the client goes, or when the caller says to stop. timestamps puts
// each line's time first; tailLines keeps the last lines of what was there at the start.
// Thread-safe as PodLogs is; ServePodLog blocks for as long as the stream lasts.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "http/http.h"
#include "tests/apiserver/pod_logs.h"
#include "tests/apiserver/rest_path.h"

namespace dljob::apiserver {

struct LogRequest {
  bool follow = false;
  bool timestamps = false;
  int64_t tail_lines = -1;  // -1: every line
};

// The request's follow, timestamps and tailLines; nullopt with `error` set when tailLines is not
// an integer (a 400).
std::optional<LogRequest> ParseLogRequest(const QueryParams& query, std::string& error);

// What a followed log asks its server between looks.
struct LogFollow {
  std::function<bool()> finished;  // the pod has finished or is gone
  std::function<bool()> go_on;     // false: stop now (the server is stopping)
  // The longest wait for more before looking again (appends to this log and PodLogs::Wake end it
  // sooner).
  std::function<std::chrono::milliseconds()> idle;
};

void ServePodLog(const PodLogs& logs, const std::string& key, const LogRequest& request,
                 const LogFollow& follow, http::ResponseWriter& out);

}  // namespace dljob::apiserver
