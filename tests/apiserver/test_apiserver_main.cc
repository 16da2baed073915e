// dljob-test-apiserver: the test Kubernetes API server as a program, for end-to-end tests and for
// trying dljob without a cluster. It serves RestHandler (rest_handler.h) over HttpServer
// (http_server.h) on loopback, plain HTTP, until SIGINT or SIGTERM.
//
//   dljob-test-apiserver --port 0 --port-file /tmp/port --kubeconfig-out /tmp/kubeconfig
//       --nodes 2 --gpus-per-node 8  (one command line)
//   KUBECONFIG=/tmp/kubeconfig kubectl apply -f examples/resnet-job.yaml
//
// The kubeconfig is written before the port file, and both only once the server accepts
// connections, so a parent that waits for the port file can use either at once.
#include <signal.h>

#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/env.h"
#include "base/time_format.h"
#include "http/http_server.h"
#include "tests/apiserver/rest_handler.h"
#include "tests/apiserver/sim_objects.h"

namespace dljob::apiserver {
namespace {

struct Flags {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string port_file;
  std::vector<std::string> crds = {"charts/dljob/crds/dljob.io_dljobs.yaml",
                                   "charts/dljob/crds/dljob.io_dlqueues.yaml"};
  int nodes = 0;
  int gpus_per_node = 8;
  std::string kubeconfig_out;
  int kubelet_delay_ms = -1;
  bool graceful_pod_deletion = true;
  int log_delay_ms = 0;
  std::vector<std::string> service_routes;
};

std::string Kubeconfig(const std::string& server) {
  return "apiVersion: v1\n"
         "kind: Config\n"
         "clusters:\n"
         "- name: dljob-test\n"
         "  cluster:\n"
         "    server: " +
         server +
         "\n"
         "users:\n"
         "- name: dljob-test\n"
         "  user: {}\n"
         "contexts:\n"
         "- name: dljob-test\n"
         "  context:\n"
         "    cluster: dljob-test\n"
         "    user: dljob-test\n"
         "    namespace: default\n"
         "current-context: dljob-test\n";
}

Status AddNodes(RestHandler& handler, const Flags& flags) {
  std::optional<ResourceType> nodes = handler.registry().Find("", "v1", "nodes");
  if (!nodes) return Status::Internal("the registry has no v1 nodes");
  std::string now = FormatRfc3339(std::chrono::system_clock::now());
  for (int i = 0; i < flags.nodes; ++i) {
    NodeSpec spec;
    spec.name = "gpu-node-" + std::to_string(i);
    spec.gpus = flags.gpus_per_node;
    ApiResult<Json> created = handler.store().Create(*nodes, "", SimulatedNode(spec, now));
    if (!created.ok()) {
      return Status::Internal("cannot create node " + spec.name + ": " + created.error().message);
    }
  }
  return Status::Ok();
}

int Run(const Flags& flags) {
  // Block the stop signals before any thread starts, so only sigwait() below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  RestOptions options;
  options.crd_files = flags.crds;
  options.server_address = flags.host;
  options.graceful_pod_deletion = flags.graceful_pod_deletion;
  options.log_delay = std::chrono::milliseconds(flags.log_delay_ms);
  Result<std::unique_ptr<RestHandler>> handler = RestHandler::Create(options);
  if (!handler.ok()) {
    std::fprintf(stderr, "dljob-test-apiserver: %s\n", handler.status().message().c_str());
    return 1;
  }
  RestHandler& rest = **handler;
  for (const std::string& route : flags.service_routes) {
    if (Status s = rest.services().SetFromFlag(route); !s.ok()) {
      std::fprintf(stderr, "dljob-test-apiserver: %s\n", s.message().c_str());
      return 1;
    }
  }
  if (Status s = AddNodes(rest, flags); !s.ok()) {
    std::fprintf(stderr, "dljob-test-apiserver: --nodes: %s\n", s.message().c_str());
    return 1;
  }
  if (flags.kubelet_delay_ms >= 0) {
    rest.kubelet().Enable(std::chrono::milliseconds(flags.kubelet_delay_ms));
  }

  http::HttpServerOptions server_options;
  server_options.host = flags.host;
  server_options.port = flags.port;
  http::HttpServer server(rest.AsHandler(), server_options);
  if (Status s = server.Start(); !s.ok()) {
    std::fprintf(stderr, "dljob-test-apiserver: %s (choose another --port, or 0)\n",
                 s.message().c_str());
    return 1;
  }
  std::string host =
      flags.host.find(':') != std::string::npos ? "[" + flags.host + "]" : flags.host;
  std::string url = "http://" + host + ":" + std::to_string(server.port());
  if (!flags.kubeconfig_out.empty()) {
    if (Status s = DefaultEnv().WriteFileAtomically(flags.kubeconfig_out, Kubeconfig(url));
        !s.ok()) {
      std::fprintf(stderr, "dljob-test-apiserver: --kubeconfig-out: %s\n", s.message().c_str());
      return 1;
    }
  }
  if (!flags.port_file.empty()) {
    if (Status s =
            DefaultEnv().WriteFileAtomically(flags.port_file, std::to_string(server.port()) + "\n");
        !s.ok()) {
      std::fprintf(stderr, "dljob-test-apiserver: --port-file: %s\n", s.message().c_str());
      return 1;
    }
  }
  std::printf("dljob-test-apiserver: serving %s (Ctrl-C stops)\n", url.c_str());
  std::fflush(stdout);

  int signal = 0;
  sigwait(&stop_signals, &signal);
  rest.Shutdown();  // ends watches and followed logs, so their connections can finish
  server.Stop();
  std::printf("dljob-test-apiserver: stopped\n");
  return 0;
}

}  // namespace
}  // namespace dljob::apiserver

int main(int argc, char** argv) {
  dljob::apiserver::Flags flags;
  CLI::App app{"dljob-test-apiserver: a Kubernetes API server for tests (plain HTTP, loopback)",
               "dljob-test-apiserver"};
  app.add_option("--host", flags.host, "Numeric loopback address to listen on")
      ->capture_default_str();
  app.add_option("--port", flags.port, "Port to listen on; 0 picks a free one")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  app.add_option("--port-file", flags.port_file, "Write the chosen port to this file when ready");
  app.add_option("--crd", flags.crds, "CustomResourceDefinition YAML to serve (repeatable)")
      ->capture_default_str();
  app.add_option("--nodes", flags.nodes, "Simulated GPU nodes to create (gpu-node-0, ...)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--gpus-per-node", flags.gpus_per_node, "nvidia.com/gpu on each simulated node")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--kubeconfig-out", flags.kubeconfig_out,
                 "Write a kubeconfig that points at this server");
  app.add_option("--kubelet-delay-ms", flags.kubelet_delay_ms,
                 "Simulate kubelets: bound pods turn Running after this delay (default: off)");
  app.add_flag("--graceful-pod-deletion,!--no-graceful-pod-deletion", flags.graceful_pod_deletion,
               "With simulated kubelets: deleting a running pod marks it Terminating "
               "(deletionTimestamp) and its kubelet removes it after the delay, as on a cluster "
               "(default; --graceful-pod-deletion=false or --no-graceful-pod-deletion: pods go "
               "at once)");
  app.add_option("--log-delay-ms", flags.log_delay_ms,
                 "Pod log text reaches readers this long after it is written, as through a "
                 "node's log pipeline; a followed log still ends only after its last line "
                 "(default: 0, at once)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--service-route", flags.service_routes,
                 "Send admission webhook calls for a Service to an address: "
                 "<namespace>/<name>[:<port>]=<host>:<port> (repeatable; without one, a call to "
                 "a Service's port P goes to 127.0.0.1:P)");
  CLI11_PARSE(app, argc, argv);
  return dljob::apiserver::Run(flags);
}
