// See kubelet_logs.h.
#include "tests/sim_nodes/kubelet_logs.h"

#include <chrono>

#include "base/clock.h"
#include "kube/object_fields.h"
#include "tests/apiserver/log_serving.h"
#include "tests/apiserver/rest_path.h"

namespace dljob::sim_nodes {
namespace {

using kube::Json;

void RespondText(http::ResponseWriter& out, int status, const std::string& text) {
  out.Respond(status, {{"Content-Type", "text/plain"}}, text + "\n");
}

}  // namespace

KubeletLogs::KubeletLogs(int port) : requested_port_(port) {}

KubeletLogs::~KubeletLogs() { Stop(); }

Status KubeletLogs::Start() {
  const WallTime now = RealClock().Now();
  const std::chrono::seconds year{365 * 24 * 3600};
  Result<http::CertificateAndKey> ca =
      http::MakeCertificateAuthority("dljob-sim-nodes kubelet CA", now, year);
  if (!ca.ok()) return ca.status().WithContext("the kubelet endpoint's CA");
  Result<http::CertificateAndKey> cert =
      http::IssueServingCertificate(*ca, {"localhost"}, {"127.0.0.1"}, now, year);
  if (!cert.ok()) return cert.status().WithContext("the kubelet endpoint's certificate");
  http::HttpServerOptions options;
  options.port = requested_port_;
  options.tls = *cert;
  server_ = std::make_unique<http::HttpServer>(
      [this](const http::HttpRequest& request, http::ResponseWriter& out) { Serve(request, out); },
      options);
  return server_->Start().WithContext("the kubelet endpoint");
}

int KubeletLogs::port() const { return server_ ? server_->port() : 0; }

void KubeletLogs::Stop() {
  logs_.Wake();  // followers return; the server's Stop joins them
  if (server_) server_->Stop();
}

void KubeletLogs::Started(const Json& pod) {
  const std::string key = kube::ObjectKey(pod);
  Pod p;
  for (const Json& c : pod["spec"].value("containers", Json::array())) {
    p.containers.insert(c.value("name", ""));
  }
  {
    MutexLock lock(mu_);
    pods_[key] = std::move(p);
  }
  logs_.Append(key, "dljob-sim-nodes: started on " + kube::NodeNameOf(pod) + "\n");
}

void KubeletLogs::Finished(const Json& pod, int exit_code) {
  const std::string key = kube::ObjectKey(pod);
  {
    MutexLock lock(mu_);
    auto it = pods_.find(key);
    if (it == pods_.end()) return;
    it->second.finished = true;
  }
  logs_.Append(key, "dljob-sim-nodes: exited with code " + std::to_string(exit_code) + "\n");
  logs_.Wake(key);
}

void KubeletLogs::Removed(const Json& pod) {
  const std::string key = kube::ObjectKey(pod);
  {
    MutexLock lock(mu_);
    if (pods_.erase(key) == 0) return;
  }
  logs_.Wake(key);
  logs_.Erase(key);
}

bool KubeletLogs::Finished(const std::string& key) const {
  MutexLock lock(mu_);
  auto it = pods_.find(key);
  return it == pods_.end() || it->second.finished;
}

void KubeletLogs::Serve(const http::HttpRequest& request, http::ResponseWriter& out) {
  // /containerLogs/{namespace}/{pod}/{container}
  constexpr std::string_view kPrefix = "/containerLogs/";
  if (request.method != "GET" || !request.path.starts_with(kPrefix)) {
    return RespondText(out, 404, "404 page not found");
  }
  std::vector<std::string> parts;
  std::string rest = request.path.substr(kPrefix.size());
  for (size_t start = 0;;) {
    size_t slash = rest.find('/', start);
    parts.push_back(rest.substr(start, slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (parts.size() != 3) return RespondText(out, 404, "404 page not found");
  const std::string key = parts[0] + "/" + parts[1];
  {
    MutexLock lock(mu_);
    auto it = pods_.find(key);
    if (it == pods_.end()) return RespondText(out, 404, "pod \"" + key + "\" not found");
    if (!it->second.containers.count(parts[2])) {
      return RespondText(
          out, 400, "container \"" + parts[2] + "\" is not valid for pod \"" + parts[1] + "\"");
    }
  }
  std::string error;
  std::optional<apiserver::LogRequest> log_request =
      apiserver::ParseLogRequest(apiserver::ParseQuery(request.query), error);
  if (!log_request) return RespondText(out, 400, error);
  apiserver::LogFollow follow;
  follow.finished = [&] { return Finished(key); };
  follow.go_on = [] {
    return true;
  };  // Stop() ends the streams: the server's Connected() turns false
  // Woken by its own pod's lines and end; the second is for a client gone (Connected()).
  follow.idle = [] { return std::chrono::milliseconds(1000); };
  apiserver::ServePodLog(logs_, key, *log_request, follow, out);
}

}  // namespace dljob::sim_nodes
