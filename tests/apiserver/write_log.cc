// See write_log.h.
#include "tests/apiserver/write_log.h"

namespace dljob::apiserver {

nlohmann::json AppliedWrite::ToJson() const {
  return {{"seq", seq},
          {"userAgent", user_agent},
          {"method", method},
          {"target", target},
          {"code", code},
          {"resourceVersion", resource_version},
          {"appliedAt", applied_at}};
}

void WriteLog::Record(AppliedWrite write) {
  MutexLock lock(mu_);
  write.seq = next_seq_++;
  entries_.push_back(std::move(write));
  while (entries_.size() > capacity_) {
    entries_.pop_front();
    ++dropped_;
  }
}

std::vector<AppliedWrite> WriteLog::Entries() const {
  MutexLock lock(mu_);
  return {entries_.begin(), entries_.end()};
}

int64_t WriteLog::dropped() const {
  MutexLock lock(mu_);
  return dropped_;
}

void WriteLog::Clear() {
  MutexLock lock(mu_);
  entries_.clear();
  dropped_ = 0;
}

bool IsWriteMethod(const std::string& method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
}

void WriteRecorder::Respond(int status, const http::HttpHeaders& headers, std::string_view body) {
  if (status >= 200 && status < 300) {
    AppliedWrite w;
    w.user_agent = http::HeaderValue(request_.headers, "User-Agent");
    w.method = request_.method;
    w.target = request_.path + (request_.query.empty() ? "" : "?" + request_.query);
    w.code = status;
    nlohmann::json answer = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (answer.is_object()) {
      nlohmann::json meta = answer.value("metadata", nlohmann::json::object());
      if (meta.is_object()) w.resource_version = meta.value("resourceVersion", "");
    }
    w.applied_at = applied_at_();
    log_.Record(std::move(w));
  }
  out_.Respond(status, headers, body);
}

}  // namespace dljob::apiserver
