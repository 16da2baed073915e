#include "tests/operator/control_client.h"

#include "http/testing/http_test_client.h"

namespace dljob::testing {

using nlohmann::json;

Result<std::string> ControlClient::Send(const std::string& method, const std::string& path,
                                        const std::string& body,
                                        const std::string& content_type) const {
  std::string request = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!body.empty() || method == "POST") {
    request += "Content-Type: " + content_type + "\r\n";
    request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  request += "Connection: close\r\n\r\n" + body;
  http::testing::ClientResponse r = http::testing::Fetch(port_, request);
  if (r.status == 0) {
    return Status::Unavailable(method + " " + path + ": no answer from the test API server");
  }
  if (r.status < 200 || r.status > 299) {
    return Status::Internal(method + " " + path + ": HTTP " + std::to_string(r.status) + ": " +
                            r.body);
  }
  return r.body;
}

Status ControlClient::AddNode(const std::string& name, int gpus) const {
  json body = {{"name", name}, {"gpus", gpus}};
  return Send("POST", "/_test/nodes", body.dump(), "application/json").status();
}

Status ControlClient::SetKubelet(const std::string& node, bool running) const {
  json body = {{"running", running}};
  return Send("POST", "/_test/nodes/" + node + "/kubelet", body.dump(), "application/json")
      .status();
}

Status ControlClient::SetPodStatus(const std::string& ns, const std::string& pod,
                                   const PodStatusUpdate& s) const {
  json body = {{"phase", s.phase}, {"ready", s.ready}};
  if (s.phase == "Succeeded" || s.phase == "Failed") body["exitCode"] = s.exit_code;
  if (!s.reason.empty()) body["reason"] = s.reason;
  if (!s.message.empty()) body["message"] = s.message;
  return Send("POST", "/_test/pods/" + ns + "/" + pod + "/status", body.dump(), "application/json")
      .status();
}

Status ControlClient::AppendLog(const std::string& ns, const std::string& pod,
                                const std::string& text) const {
  return Send("POST", "/_test/pods/" + ns + "/" + pod + "/log", text, "text/plain").status();
}

Status ControlClient::AddFault(const Fault& f, const std::string& message) const {
  json body = {
      {"method", f.method}, {"pathPrefix", f.path_prefix}, {"code", f.code}, {"count", f.count}};
  if (!message.empty()) body["message"] = message;
  return Send("POST", "/_test/faults", body.dump(), "application/json").status();
}

Status ControlClient::ClearFaults() const {
  return Send("DELETE", "/_test/faults", "", "").status();
}

Status ControlClient::RouteService(const std::string& ns, const std::string& name,
                                   const std::string& address) const {
  nlohmann::json route = {{"namespace", ns}, {"name", name}, {"port", 0}, {"address", address}};
  return Send("POST", "/_test/services", route.dump(), "application/json").status();
}

Status ControlClient::DropWatches() const {
  return Send("POST", "/_test/watches/drop", "{}", "application/json").status();
}

Status ControlClient::Compact() const {
  return Send("POST", "/_test/compact", "{}", "application/json").status();
}

Status ControlClient::SetLatency(const Latency& l) const {
  json body = {{"milliseconds", l.milliseconds},
               {"userAgent", l.user_agent},
               {"method", l.method},
               {"pathPrefix", l.path_prefix}};
  return Send("POST", "/_test/latency", body.dump(), "application/json").status();
}

Result<std::vector<AppliedWrite>> ControlClient::Writes() const {
  Result<std::string> body = Send("GET", "/_test/writes", "", "");
  if (!body.ok()) return body.status();
  json parsed = json::parse(*body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object() || !parsed["writes"].is_array()) {
    return Status::Internal("GET /_test/writes: not a write log: " + *body);
  }
  std::vector<AppliedWrite> out;
  for (const json& w : parsed["writes"]) {
    out.push_back({w.value("seq", int64_t{0}), w.value("userAgent", ""), w.value("method", ""),
                   w.value("target", ""), w.value("appliedAt", "")});
  }
  return out;
}

Result<json> ControlClient::Info() const {
  Result<std::string> body = Send("GET", "/_test/info", "", "");
  if (!body.ok()) return body.status();
  json parsed = json::parse(*body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Status::Internal("GET /_test/info: not JSON: " + *body);
  return parsed;
}

}  // namespace dljob::testing
