// FakeWriter: a ResponseWriter for REST-layer tests that records what the handler answered.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/apiserver/resource_types.h"
#include "tests/apiserver/rest_response.h"

namespace dljob::apiserver {

// A request for `target` ("/path?query"), as the HTTP server would hand it to a handler.
inline HttpRequest RequestFor(const std::string& method, const std::string& target,
                              const std::string& body = "", HttpHeaders headers = {}) {
  HttpRequest request;
  request.method = method;
  const size_t q = target.find('?');
  request.path = target.substr(0, q);
  if (q != std::string::npos) request.query = target.substr(q + 1);
  request.body = body;
  request.headers = std::move(headers);
  return request;
}

// Records what the handler answered; Connected() turns false after `max_writes` stream writes.
class FakeWriter : public ResponseWriter {
 public:
  explicit FakeWriter(int max_writes = 1 << 30) : max_writes_(max_writes) {}
  void Respond(int status, const HttpHeaders& headers, std::string_view body) override {
    status_ = status;
    headers_ = headers;
    body_ = std::string(body);
  }
  void StartStream(int status, const HttpHeaders& headers) override {
    status_ = status;
    headers_ = headers;
    streamed_ = true;
  }
  bool Write(std::string_view data) override {
    chunks_.emplace_back(data);
    return static_cast<int>(chunks_.size()) < max_writes_;
  }
  bool Connected() override { return static_cast<int>(chunks_.size()) < max_writes_; }

  Json json() const { return Json::parse(body_); }
  // Each line of the streamed body as JSON.
  std::vector<Json> Events() const {
    std::vector<Json> out;
    for (const std::string& c : chunks_) out.push_back(Json::parse(c));
    return out;
  }

  int status_ = 0;
  HttpHeaders headers_;
  std::string body_;
  bool streamed_ = false;
  std::vector<std::string> chunks_;
  int max_writes_;
};

}  // namespace dljob::apiserver
