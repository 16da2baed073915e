// See prometheus_process.h.
#include "tests/operator/prometheus_process.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/env.h"
#include "http/testing/http_test_client.h"
#include "kube/rest.h"

namespace dljob::testing {
namespace {

// A loopback port nothing listens on now (bound to 0 and released), for a program that cannot be
// told to pick its own and say which; -1 when no socket could be bound.
int UnusedLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

std::string ScrapeConfig(const std::string& job_name, const std::vector<std::string>& targets) {
  std::string list;
  for (const std::string& t : targets) list += (list.empty() ? "'" : ", '") + t + "'";
  return "global:\n"
         "  scrape_interval: 1s\n"
         "  scrape_timeout: 1s\n"
         "  evaluation_interval: 1s\n"
         "scrape_configs:\n"
         "  - job_name: " +
         job_name +
         "\n"
         "    static_configs:\n"
         "      - targets: [" +
         list + "]\n";
}

http::testing::ClientResponse Get(int port, const std::string& target) {
  return http::testing::Fetch(
      port, "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
}

}  // namespace

Result<std::unique_ptr<PrometheusProcess>> PrometheusProcess::Start(
    const std::string& job_name, const std::vector<std::string>& targets, int timeout_ms) {
  CommandResult version = RunCommand({"prometheus", "--version"});
  if (version.exit_code != 0) {
    return Status::FailedPrecondition(
        "prometheus is not installed (`prometheus --version` exited " +
        std::to_string(version.exit_code) + ": " + version.err +
        "); scripts/dev/setup.sh installs Debian's package `prometheus`");
  }
  std::unique_ptr<PrometheusProcess> p(new PrometheusProcess());
  const std::string config = p->dir_.path() + "/prometheus.yml";
  if (Status s = DefaultEnv().WriteFileAtomically(config, ScrapeConfig(job_name, targets));
      !s.ok()) {
    return s;
  }
  // The port is free when picked but could be taken before Prometheus binds it: then it exits,
  // and it is started again on another.
  for (int attempt = 0; attempt < 3; ++attempt) {
    p->port_ = UnusedLoopbackPort();
    if (p->port_ < 0) return Status::Internal("no loopback port to give Prometheus");
    p->process_ = std::make_unique<Background>(
        std::vector<std::string>{"prometheus", "--config.file=" + config,
                                 "--storage.tsdb.path=" + p->dir_.path() + "/data",
                                 "--web.listen-address=127.0.0.1:" + std::to_string(p->port_)},
        std::map<std::string, std::string>{}, p->dir_.path() + "/out", p->dir_.path() + "/err");
    bool exited = false;
    bool ready = WaitFor(
        [&] {
          exited = p->process_->Wait(0) >= 0;
          return !exited && Get(p->port_, "/-/ready").status == 200;
        },
        timeout_ms);
    if (ready) return p;
    if (!exited) break;
  }
  return Status::Unavailable(
      "prometheus did not get ready on 127.0.0.1:" + std::to_string(p->port_) + ":\n" + p->Log());
}

Result<nlohmann::json> PrometheusProcess::GetData(const std::string& target) const {
  http::testing::ClientResponse r = Get(port_, target);
  if (r.status == 0) return Status::Unavailable("prometheus did not answer GET " + target);
  nlohmann::json body = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    return Status::Internal("GET " + target + ": " + std::to_string(r.status) + " " + r.body);
  }
  if (body.value("status", "") != "success") {
    return Status::InvalidArgument("GET " + target + ": " + body.value("errorType", "") + ": " +
                                   body.value("error", ""));
  }
  return body["data"];
}

Result<nlohmann::json> PrometheusProcess::Query(const std::string& expr) const {
  Result<nlohmann::json> data = GetData("/api/v1/query?query=" + kube::rest::PercentEncode(expr));
  if (!data.ok()) return data.status();
  return (*data).value("result", nlohmann::json::array());
}

Result<nlohmann::json> PrometheusProcess::LabelValues(const std::string& label,
                                                      const std::string& selector) const {
  std::string target = "/api/v1/label/" + kube::rest::PercentEncode(label) + "/values";
  if (!selector.empty()) target += "?match[]=" + kube::rest::PercentEncode(selector);
  return GetData(target);
}

std::string PrometheusProcess::Log() const {
  return ReadFile(dir_.path() + "/err") + ReadFile(dir_.path() + "/out");
}

}  // namespace dljob::testing
