// See kubelet_logs.h.
#include "tests/sim_nodes/kubelet_logs.h"

#include <chrono>

#include "base/clock.h"
#include "kube/object_fields.h"
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
  const apiserver::QueryParams query = apiserver::ParseQuery(request.query);
  int64_t tail = -1;
  if (query.count("tailLines")) {
    try {
      tail = std::stoll(query.at("tailLines"));
    } catch (...) {
      return RespondText(out, 400, "tailLines: must be an integer");
    }
  }
  const bool stamped = apiserver::QueryFlag(query, "timestamps");
  auto serve = [&](size_t offset, const std::string& text) {
    return stamped ? logs_.Stamped(key, offset, text) : text;
  };
  std::string text = logs_.Read(key);
  if (!apiserver::QueryFlag(query, "follow")) {
    return out.Respond(200, {{"Content-Type", "text/plain"}},
                       apiserver::TailLines(serve(0, text), tail));
  }
  out.StartStream(200, {{"Content-Type", "text/plain"}});
  size_t offset = text.size();
  if (!text.empty() && !out.Write(apiserver::TailLines(serve(0, text), tail))) return;
  while (out.Connected()) {
    const bool finished = Finished(key);
    std::string more = logs_.Read(key, offset);  // read after the check: no line is lost
    if (!more.empty() && !out.Write(serve(offset, more))) return;
    offset += more.size();
    if (finished && !logs_.Unread(key, offset)) return;
    // Woken by its own pod's lines and end; the second is for a client gone (Connected()).
    logs_.WaitForMore(key, offset, std::chrono::steady_clock::now() + std::chrono::seconds(1));
  }
}

}  // namespace dljob::sim_nodes
