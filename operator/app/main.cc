// dljob-operator: runs DLJobs on a Kubernetes cluster. See operator_app.h for what it does and
// options.h for its flags (the Helm chart's Deployment passes them).
//
// The edges live here: reading the kubeconfig or the pod's service account, the HTTP endpoint
// (/metrics, /healthz, /readyz, /logs), and signals. SIGTERM or SIGINT stops it cleanly (a leader
// releases its Lease so a standby takes over at once); losing the Lease exits with status 1.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <thread>

#include "base/env.h"
#include "http/http_server.h"
#include "http/socket_client.h"
#include "kube/config.h"
#include "kube/http_api.h"
#include "operator/app/allocator.h"
#include "operator/app/leader_logs.h"
#include "operator/app/log_access.h"
#include "operator/app/log_archive_store.h"
#include "operator/app/operator_app.h"
#include "operator/app/webhook_server.h"
#include "operator/metrics/log_archive.h"

namespace dljob::op {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string HostName() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? buf : "dljob-operator";
}

// "dljob-operator/<identity>": the server's audit log (and the test API server's request log)
// tell the replicas apart by it. Characters a header token may not hold become '_'.
std::string UserAgent(const std::string& identity) {
  std::string out = "dljob-operator/";
  for (char c : identity) {
    bool token = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
    out += token ? c : '_';
  }
  return out;
}

int Fail(const std::string& message, const std::string& hint = "") {
  std::fprintf(stderr, "dljob-operator: error: %s\n", message.c_str());
  if (!hint.empty()) std::fprintf(stderr, "  %s\n", hint.c_str());
  return 1;
}

// /logs reads the archive, never this replica's memory, so every replica answers the same (a
// standby asks the leader for what its own archive lacks, once: leader_logs.h).
http::Handler EndpointHandler(OperatorApp& app, const LogsEndpoint& logs) {
  LogsEndpoint passed_on = logs;  // for a request another replica passed on: never again
  passed_on.leader = nullptr;
  return [&app, &logs, passed_on](const http::HttpRequest& request, http::ResponseWriter& out) {
    std::string token = BearerToken(http::HeaderValue(request.headers, "Authorization"));
    if (token.empty()) token = BearerToken(http::HeaderValue(request.headers, kLogTokenHeader));
    const bool forwarded = !http::HeaderValue(request.headers, kForwardedHeader).empty();
    EndpointAnswer a = ServeEndpoint(
        request.method, request.path, [&app] { return app.State(); }, forwarded ? passed_on : logs,
        token);
    http::HttpHeaders headers = {{"Content-Type", a.content_type}};
    if (a.status == 401) headers.push_back({"WWW-Authenticate", "Bearer realm=\"dljob-operator\""});
    out.Respond(a.status, headers, request.method == "HEAD" ? std::string() : a.body);
  };
}

// A client for the leader's metrics port: plain HTTP inside the cluster's network, as the API
// server's proxy reaches it.
Result<std::unique_ptr<http::Client>> PlainHttpClient(const std::string& base_url) {
  http::ClientOptions options;
  options.base_url = base_url;
  Result<std::unique_ptr<http::SocketClient>> client = http::SocketClient::Create(options);
  if (!client.ok()) return client.status();
  return std::unique_ptr<http::Client>(std::move(client).value());
}

// The archive of --log-archive, with the keys of --log-archive-secret read once through `api`.
Result<ArchiveLocation> OpenArchive(const OperatorOptions& options, kube::Api& api) {
  std::map<std::string, std::string> keys;
  if (!options.log_archive_secret.empty()) {
    const std::string& ref = options.log_archive_secret;
    const size_t slash = ref.find('/');
    const std::string ns =
        slash == std::string::npos ? options.lease_namespace : ref.substr(0, slash);
    const std::string name = slash == std::string::npos ? ref : ref.substr(slash + 1);
    kube::ApiResult<kube::Json> secret = api.Get(kube::resources::kSecrets, ns, name);
    if (!secret.ok()) {
      return secret.error().ToStatus().WithContext("--log-archive-secret: reading Secret " + ns +
                                                   "/" + name);
    }
    Result<std::map<std::string, std::string>> decoded =
        SecretKeys(*secret, "--log-archive-secret " + ns + "/" + name);
    if (!decoded.ok()) return decoded.status();
    keys = std::move(decoded).value();
  }
  return OpenLogArchiveStore(options.log_archive, keys, storage::ProcessEnv());
}

int Main(int argc, char** argv) {
  ConfigureAllocator();  // before any thread starts
  ParsedArgs parsed = ParseOperatorArgs(std::vector<std::string>(argv + 1, argv + argc),
                                        Env("POD_NAME"), HostName(), getpid());
  if (auto* exit = std::get_if<std::pair<int, std::string>>(&parsed.result)) {
    std::fputs(exit->second.c_str(), exit->first == 0 ? stdout : stderr);
    return exit->first;
  }
  const OperatorOptions options = std::get<OperatorOptions>(parsed.result);

  // Block the stop signals before any thread starts (the informers and workers start their own), so
  // only the sigwait below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  Result<kube::Config> config = kube::LoadConfig({options.kubeconfig, options.context});
  if (!config.ok()) {
    return Fail(config.status().message(),
                "run in a pod with a service account, or pass --kubeconfig FILE");
  }
  kube::ApiOptions api_options;
  api_options.qps = options.qps;
  api_options.burst = options.burst;
  api_options.exec.interactive_allowed = false;  // a credential plugin has no one to ask here
  api_options.user_agent = UserAgent(options.identity);
  Result<std::unique_ptr<kube::Api>> api = kube::MakeApi(*config, api_options);
  if (!api.ok()) return Fail(api.status().message());
  std::fprintf(stderr, "dljob-operator: API server %s (%s); memory from %s\n",
               config->server.c_str(), config->source.c_str(), AllocatorName().c_str());
  // --trace-spans: every call through the API is timed against the job being reconciled.
  std::unique_ptr<kube::SpanFile> spans;
  std::unique_ptr<kube::Api> traced;
  if (!options.trace_spans.empty()) {
    Result<std::unique_ptr<kube::SpanFile>> opened = kube::SpanFile::Open(options.trace_spans);
    if (!opened.ok()) return Fail(opened.status().message(), "check --trace-spans");
    spans = std::move(opened).value();
    traced = std::make_unique<kube::TracedApi>(**api, *spans, RealClock());
    std::fprintf(stderr, "dljob-operator: writing spans to %s\n", options.trace_spans.c_str());
  }
  kube::Api& cluster = traced ? *traced : **api;

  std::optional<ArchiveLocation> archive;
  std::optional<metrics::LogArchive> archive_reader;
  LogAccess access(**api, RealClock());
  LogsEndpoint logs;
  if (!options.log_archive.empty()) {
    Result<ArchiveLocation> opened = OpenArchive(options, **api);
    if (!opened.ok())
      return Fail(opened.status().message(), "check --log-archive and --log-archive-secret");
    archive = std::move(opened).value();
    archive_reader.emplace(*archive->store, archive->prefix);
    std::fprintf(stderr, "dljob-operator: job logs archived in %s\n",
                 archive_reader->Where().c_str());
    logs.authorize = [&access](const std::string& token, const std::string& ns) {
      return access.Check(token, ns);
    };
    logs.read = [&archive_reader](const std::string& ns, const std::string& job) {
      return archive_reader->Read(ns, job);
    };
    if (options.leader_elect && options.metrics_port > 0) {
      const LeaderAddress where{options.lease_namespace, options.lease_name, options.identity,
                                options.metrics_port};
      logs.leader = [&api, where](const std::string& path, const std::string& token) {
        return AskLeader(**api, where, PlainHttpClient, path, token);
      };
    }
  }

  OperatorApp app(options, cluster, RealClock(), archive ? &*archive : nullptr, spans.get());
  std::unique_ptr<http::HttpServer> server;
  if (options.metrics_port >= 0) {
    http::HttpServerOptions so;
    so.host = options.metrics_address;
    so.port = options.metrics_port;
    server = std::make_unique<http::HttpServer>(EndpointHandler(app, logs), so);
    if (Status s = server->Start(); !s.ok()) {
      return Fail(s.message(), "choose another --metrics-port, or -1 for none");
    }
    if (!options.port_file.empty()) {
      // Atomically: a reader polling for the file never sees it empty.
      Status s = DefaultEnv().WriteFileAtomically(options.port_file,
                                                  std::to_string(server->port()) + "\n");
      if (!s.ok()) return Fail(s.message(), "check --port-file");
    }
    std::fprintf(stderr, "dljob-operator: serving /metrics /healthz /readyz /logs on %s:%d\n",
                 options.metrics_address.c_str(), server->port());
  }

  std::unique_ptr<http::HttpServer> webhook;  // on every replica, leading or not
  if (options.webhook_port >= 0) {
    Result<std::unique_ptr<http::HttpServer>> w = StartWebhook(options, **api, RealClock());
    if (!w.ok()) {
      return Fail(w.status().message(),
                  "check --webhook-* and the operator's RBAC for Secrets "
                  "and ValidatingWebhookConfigurations");
    }
    webhook = std::move(*w);
    if (!options.webhook_port_file.empty()) {
      Status s = DefaultEnv().WriteFileAtomically(options.webhook_port_file,
                                                  std::to_string(webhook->port()) + "\n");
      if (!s.ok()) return Fail(s.message(), "check --webhook-port-file");
    }
    std::fprintf(stderr, "dljob-operator: serving the admission webhook (HTTPS) on %s:%d\n",
                 options.metrics_address.c_str(), webhook->port());
  }

  std::jthread trimmer(ReturnFreeHeap);
  std::stop_source stop;
  std::atomic<int> code{0};
  std::thread runner([&] {
    code = app.Run(stop.get_token());
    // Lost leadership (or Run ended on its own): wake the signal wait below.
    kill(getpid(), SIGTERM);
  });
  int signal = 0;
  sigwait(&stop_signals, &signal);
  stop.request_stop();
  runner.join();
  if (server) server->Stop();
  if (webhook) webhook->Stop();
  return code;
}

}  // namespace
}  // namespace dljob::op

int main(int argc, char** argv) {
  try {
    return dljob::op::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dljob-operator: internal error: %s\n", e.what());
    return 1;
  }
}
