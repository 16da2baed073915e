// See endpoints.h.
#include "operator/app/endpoints.h"

#include "operator/metrics/prometheus.h"

namespace dljob::op {
namespace {

// A Kubernetes name (DNS subdomain characters), which also keeps /logs inside the archive.
bool SafeName(const std::string& s) {
  if (s.empty() || s.size() > 253 || s == "." || s == "..") return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  }
  return true;
}

std::vector<metrics::Family> OperatorFamilies(const OperatorState& s) {
  using metrics::Family;
  using metrics::MetricType;
  return {
      Family{"dljob_operator_leader",
             "1 when this replica is the acting leader.",
             MetricType::kGauge,
             {{{}, s.leading ? 1.0 : 0.0, ""}}},
      Family{"dljob_operator_caches_synced",
             "1 once the leader's informers have listed.",
             MetricType::kGauge,
             {{{}, s.synced ? 1.0 : 0.0, ""}}},
      Family{"dljob_operator_workqueue_depth",
             "Jobs waiting to be reconciled.",
             MetricType::kGauge,
             {{{}, static_cast<double>(s.queue_depth), ""}}},
      Family{"dljob_operator_logs_following",
             "Launcher logs being followed now.",
             MetricType::kGauge,
             {{{}, static_cast<double>(s.following), ""}}},
  };
}

EndpointAnswer Text(int status, std::string body) {
  return EndpointAnswer{status, "text/plain; charset=utf-8", std::move(body)};
}

}  // namespace

EndpointAnswer ServeEndpoint(const std::string& method, const std::string& path,
                             const std::function<OperatorState()>& state, const LogsEndpoint& logs,
                             const std::string& token) {
  if (method != "GET" && method != "HEAD") return Text(405, "only GET is served here\n");
  if (path == "/healthz") return Text(200, "ok\n");
  if (path == "/readyz") {
    OperatorState s = state();
    if (!s.leading) return Text(200, s.leader_elect ? "ok: standing by\n" : "ok\n");
    return s.synced ? Text(200, "ok\n") : Text(503, "caches are still syncing\n");
  }
  if (path == "/metrics") {
    OperatorState s = state();
    std::vector<metrics::Family> families = OperatorFamilies(s);
    for (metrics::Family& f : metrics::JobFamilies(s.jobs, s.logs))
      families.push_back(std::move(f));
    for (metrics::Family& f : s.timings) families.push_back(std::move(f));
    Result<std::string> text = metrics::RenderText(families);
    // Only a defect in dljob's own families gets here (their tests render every one): say which.
    if (!text.ok()) return Text(500, "cannot export metrics: " + text.status().message() + "\n");
    return EndpointAnswer{200, metrics::kTextContentType, std::move(text).value()};
  }
  const std::string prefix = "/logs/";
  if (path.rfind(prefix, 0) == 0) {
    const std::string rest = path.substr(prefix.size());
    const size_t slash = rest.find('/');
    const std::string ns = rest.substr(0, slash);
    const std::string job = slash == std::string::npos ? "" : rest.substr(slash + 1);
    if (!SafeName(ns) || !SafeName(job)) {
      return Text(404, "use /logs/<namespace>/<job>\n");
    }
    if (!logs.read || !logs.authorize) {
      return Text(404, "this operator keeps no log archive (start it with --log-archive)\n");
    }
    // Before anything is read, and the same answer whether or not the job exists.
    AccessDecision access = logs.authorize(token, ns);
    if (access.status != 200) return Text(access.status, access.message + "\n");
    Result<std::string> log = logs.read(ns, job);
    if (log.ok()) return Text(200, std::move(log).value());
    if (log.status().code() == StatusCode::kNotFound) {
      const std::string none = "no archived log for DLJob " + ns + "/" + job;
      if (!logs.leader) return Text(404, none + "\n");
      Result<EndpointAnswer> from_leader = logs.leader(path, token);
      if (from_leader.ok()) return std::move(from_leader).value();
      if (from_leader.status().code() == StatusCode::kNotFound) return Text(404, none + "\n");
      return Text(503, none + " on this replica, and the leader could not be asked: " +
                           from_leader.status().message() + "\n");
    }
    return Text(503, "cannot read the log archive: " + log.status().message() + "\n");
  }
  return Text(404, "not found; try /metrics, /healthz, /readyz or /logs/<namespace>/<job>\n");
}

}  // namespace dljob::op
