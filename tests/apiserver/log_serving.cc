// See log_serving.h.
#include "tests/apiserver/log_serving.h"

namespace dljob::apiserver {

std::optional<LogRequest> ParseLogRequest(const QueryParams& query, std::string& error) {
  LogRequest r;
  r.follow = QueryFlag(query, "follow");
  r.timestamps = QueryFlag(query, "timestamps");
  if (auto it = query.find("tailLines"); it != query.end()) {
    try {
      size_t used = 0;
      r.tail_lines = std::stoll(it->second, &used);
      if (used != it->second.size()) throw std::invalid_argument("trailing characters");
    } catch (...) {
      error = "tailLines: must be an integer";
      return std::nullopt;
    }
  }
  return r;
}

void ServePodLog(const PodLogs& logs, const std::string& key, const LogRequest& request,
                 const LogFollow& follow, http::ResponseWriter& out) {
  // The log from `offset` on as served: with each line's time first when asked for.
  auto serve = [&](size_t offset, const std::string& text) {
    return request.timestamps ? logs.Stamped(key, offset, text) : text;
  };
  std::string text = logs.Read(key);
  if (!request.follow) {
    return out.Respond(200, {{"Content-Type", "text/plain"}},
                       TailLines(serve(0, text), request.tail_lines));
  }
  out.StartStream(200, {{"Content-Type", "text/plain"}});
  size_t offset = text.size();
  if (!text.empty() && !out.Write(TailLines(serve(0, text), request.tail_lines))) return;
  while (follow.go_on() && out.Connected()) {
    const bool finished = follow.finished();
    std::string more = logs.Read(key, offset);  // read after the check: no line is lost
    if (!more.empty() && !out.Write(serve(offset, more))) return;
    offset += more.size();
    if (finished && !logs.Unread(key, offset)) return;  // every line sent, as a kubelet does
    logs.WaitForMore(key, offset, std::chrono::steady_clock::now() + follow.idle());
  }
}

}  // namespace dljob::apiserver
