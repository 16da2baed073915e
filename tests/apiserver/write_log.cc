// See write_log.h.
#include "tests/apiserver/write_log.h"

namespace dljob::apiserver {
namespace {

// Reads `metadata.resourceVersion` of a JSON object without building it: the parse stops at that
// field, so a large spec or status after it is never read (this server's answers list keys in
// order, and "metadata" comes before "spec" and "status").
class ResourceVersionReader final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::string found;

  bool null() override { return Leaf(); }
  bool boolean(bool) override { return Leaf(); }
  bool number_integer(number_integer_t) override { return Leaf(); }
  bool number_unsigned(number_unsigned_t) override { return Leaf(); }
  bool number_float(number_float_t, const string_t&) override { return Leaf(); }
  bool binary(binary_t&) override { return Leaf(); }
  bool string(string_t& value) override {
    if (depth_ == 2 && in_metadata_ && key_ == "resourceVersion") {
      found = value;
      return false;  // done: stop the parse
    }
    return Leaf();
  }
  bool start_object(std::size_t) override { return Open(); }
  bool start_array(std::size_t) override { return Open(); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool key(string_t& value) override {
    if (depth_ <= 2) key_ = value;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  bool Leaf() { return true; }
  bool Open() {
    if (depth_ == 1) in_metadata_ = key_ == "metadata";
    ++depth_;
    return true;
  }
  bool Close() {
    --depth_;
    if (depth_ == 1) in_metadata_ = false;
    return true;
  }

  int depth_ = 0;
  bool in_metadata_ = false;
  std::string key_;
};

}  // namespace

std::string ResourceVersionOfBody(std::string_view body) {
  ResourceVersionReader reader;
  nlohmann::json::sax_parse(body, &reader, nlohmann::json::input_format_t::json,
                            /*strict=*/false);
  return reader.found;
}

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
    w.resource_version = ResourceVersionOfBody(body);
    w.applied_at = applied_at_();
    log_.Record(std::move(w));
  }
  out_.Respond(status, headers, body);
}

}  // namespace dljob::apiserver
