// WriteLog: the writes the test API server applied, in the order it answered them, with the client
// that sent each (its User-Agent) — so that a test can check what reached the cluster and when:
// that an operator replica that lost its lease wrote nothing after the new leader's first write.
//
// A write is a POST, PUT, PATCH or DELETE of the API (not /_test) answered 2xx; refused ones (4xx,
// 5xx, the 504 of a request whose `timeout` ran out) were not applied and are not logged. Each
// entry is recorded as its answer is handed to the connection, right after the store applied it;
// seq numbers the entries from 1 in that order. The log keeps the last `capacity` entries
// (dropped() counts the others). Read through GET /_test/writes (test_control.h).
//
// Thread-safety: every method may be called from many threads at once.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/mutex.h"
#include "http/http.h"

namespace dljob::apiserver {

struct AppliedWrite {
  int64_t seq = 0;
  std::string user_agent;
  std::string method;
  std::string target;            // path and query, as sent
  int code = 0;                  // the 2xx answered
  std::string resource_version;  // of the object answered, "" when the answer had none
  std::string applied_at;        // RFC 3339 with microseconds, by the server's clock

  nlohmann::json ToJson() const;
};

class WriteLog {
 public:
  explicit WriteLog(size_t capacity = 100'000) : capacity_(capacity) {}

  // Numbers the entry (seq) and keeps it.
  void Record(AppliedWrite write);
  std::vector<AppliedWrite> Entries() const;
  int64_t dropped() const;
  void Clear();

 private:
  const size_t capacity_;
  mutable Mutex mu_;
  std::deque<AppliedWrite> entries_ GUARDED_BY(mu_);
  int64_t next_seq_ GUARDED_BY(mu_) = 1;
  int64_t dropped_ GUARDED_BY(mu_) = 0;
};

// `metadata.resourceVersion` of the JSON object in `body`; "" when it has none or is not JSON.
std::string ResourceVersionOfBody(std::string_view body);

// Whether a request with this method changes the cluster.
bool IsWriteMethod(const std::string& method);

// A ResponseWriter that logs the write it answers, when it answers it 2xx, then passes the answer
// on to `out`. `applied_at` gives the time to stamp.
class WriteRecorder final : public http::ResponseWriter {
 public:
  WriteRecorder(http::ResponseWriter& out, WriteLog& log, const http::HttpRequest& request,
                std::function<std::string()> applied_at)
      : out_(out), log_(log), request_(request), applied_at_(std::move(applied_at)) {}

  void Respond(int status, const http::HttpHeaders& headers, std::string_view body) override;
  void StartStream(int status, const http::HttpHeaders& headers) override {
    out_.StartStream(status, headers);
  }
  bool Write(std::string_view data) override { return out_.Write(data); }
  bool Connected() override { return out_.Connected(); }

 private:
  http::ResponseWriter& out_;
  WriteLog& log_;
  const http::HttpRequest& request_;
  std::function<std::string()> applied_at_;
};

}  // namespace dljob::apiserver
