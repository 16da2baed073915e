#include "bench/bench_kube.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include "kube/config.h"
#include "kube/http_api.h"
#include "testing/wait.h"

namespace dljob::bench {

RssSampler::RssSampler(pid_t pid, double every_seconds, std::function<std::pair<int, int>()> counts)
    : thread_([this, pid, every_seconds, counts = std::move(counts)] {
        const auto start = Clock::now();
        while (sampling_) {
          auto [first, second] = counts();
          samples_.push_back(
              {Seconds(Clock::now() - start), StatusKiB(pid, "VmRSS"), first, second});
          for (int i = 0; i < every_seconds * 10 && sampling_; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
          }
        }
      }) {}

void RssSampler::Stop() {
  sampling_ = false;
  if (thread_.joinable()) thread_.join();
}

std::string RssSampler::Table(const char* title, const char* first_name,
                              const char* second_name) const {
  char line[128];
  std::snprintf(line, sizeof line, "%8s %10s %9s %9s\n", "t (s)", "RSS (MiB)", first_name,
                second_name);
  std::string out = std::string(title) + ":\n" + line;
  for (const Sample& m : samples_) {
    std::snprintf(line, sizeof line, "%8.0f %10.1f %9d %9d\n", m.t, m.rss_kib / 1024.0, m.first,
                  m.second);
    out += line;
  }
  return out;
}

namespace {

using kube::Json;

volatile std::sig_atomic_t g_stop = 0;
extern "C" void OnStopSignal(int) { g_stop = 1; }

const kube::Resource kNamespaceResource{"", "v1", "namespaces", false, "Namespace"};
const kube::Resource kServiceAccountResource{"", "v1", "serviceaccounts", true, "ServiceAccount"};

std::unique_ptr<kube::Api> Connect(const std::string& kubeconfig) {
  auto config = kube::LoadKubeconfig(kubeconfig);
  if (!config.ok()) {
    std::fprintf(stderr, "bench: %s: %s\n", kubeconfig.c_str(), config.status().message().c_str());
    return nullptr;
  }
  kube::ApiOptions options;
  options.qps = 5000;
  options.burst = 5000;
  options.user_agent = "dljob-bench";
  auto api = kube::MakeApi(*config, options);
  if (!api.ok()) {
    std::fprintf(stderr, "bench: %s: %s\n", kubeconfig.c_str(), api.status().message().c_str());
    return nullptr;
  }
  return std::move(*api);
}

// "sim-node-10" → ("sim-node-", 10) so that names sort by their number.
std::pair<std::string, long> NameKey(const std::string& name) {
  size_t digits = name.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1]))) --digits;
  if (digits == name.size() || name.size() - digits > 15) return {name, -1};
  return {name.substr(0, digits), std::stol(name.substr(digits))};
}

}  // namespace

double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t end = stat.rfind(')');  // the command name may hold spaces
  if (end == std::string::npos) return -1;
  std::istringstream fields(stat.substr(end + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; fields >> field && i <= 15; ++i) {  // fields 14 and 15: utime, stime
    if (i >= 14) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

long StatusKiB(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

bool Must(const kube::ApiResult<Json>& r, const std::string& what) {
  if (r.ok()) return true;
  std::fprintf(stderr, "bench: %s: %s\n", what.c_str(), r.error().ToString().c_str());
  return false;
}

bool CreateRetrying(kube::Api& api, const kube::Resource& resource, const std::string& ns,
                    const Json& object, const std::string& what) {
  for (int attempt = 1;; ++attempt) {
    kube::ApiResult<Json> r = api.Create(resource, ns, object);
    if (r.ok()) return true;
    if (!r.error().IsRetryable() || attempt == 5) return Must(r, what);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

std::optional<BenchServer> StartTestServer(const std::string& dir, int nodes, int gpus_per_node,
                                           const std::string& program) {
  BenchServer server;
  server.kubeconfig = dir + "/kubeconfig";
  const std::string crds = dljob::testing::SourceDir() + "/charts/dljob/crds/";
  server.process = std::make_unique<dljob::testing::Background>(
      std::vector<std::string>{
          program.empty() ? dljob::testing::BinDir() + "/dljob-test-apiserver" : program, "--port",
          "0", "--port-file", dir + "/port", "--kubeconfig-out", server.kubeconfig, "--nodes",
          std::to_string(nodes), "--gpus-per-node", std::to_string(gpus_per_node),
          "--kubelet-delay-ms", "0", "--crd", crds + "dljob.io_dljobs.yaml", "--crd",
          crds + "dljob.io_dlqueues.yaml"},
      std::map<std::string, std::string>{}, dir + "/apiserver.out", dir + "/apiserver.err");
  if (!dljob::testing::WaitFor([&] { return std::ifstream(dir + "/port").good(); }, 30'000)) {
    std::fprintf(stderr, "bench: the test API server did not start (see %s/apiserver.err)\n",
                 dir.c_str());
    return std::nullopt;
  }
  server.api = Connect(server.kubeconfig);
  if (!server.api) return std::nullopt;
  return server;
}

std::optional<BenchServer> ConnectServer(const std::string& kubeconfig) {
  BenchServer server;
  server.kubeconfig = kubeconfig;
  server.real = true;
  server.api = Connect(kubeconfig);
  if (!server.api) return std::nullopt;
  if (!Must(server.api->List(kube::resources::kNodes, "", {}), "list nodes")) return std::nullopt;
  return server;
}

std::vector<GpuNode> ListGpuNodes(kube::Api& api) {
  std::vector<GpuNode> nodes;
  auto list = api.List(kube::resources::kNodes, "", {});
  if (!Must(list, "list nodes")) return nodes;
  for (const Json& node : (*list)["items"]) {
    if (node["spec"].value("unschedulable", false)) continue;
    const Json& allocatable = node["status"].value("allocatable", Json::object());
    const std::string gpus = allocatable.value("nvidia.com/gpu", "0");
    const int count = std::atoi(gpus.c_str());
    if (count > 0) nodes.push_back({node["metadata"].value("name", ""), count});
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const GpuNode& a, const GpuNode& b) { return NameKey(a.name) < NameKey(b.name); });
  return nodes;
}

bool CreateNamespace(kube::Api& api, const std::string& ns, bool wait_for_service_account) {
  if (!Must(api.Create(kNamespaceResource, "",
                       {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}}),
            "create namespace " + ns)) {
    return false;
  }
  if (!wait_for_service_account) return true;
  if (dljob::testing::WaitFor(
          [&] {
            auto sa = api.Get(kServiceAccountResource, ns, "default");
            return sa.ok() && !sa->value("secrets", Json::array()).empty();
          },
          60'000, 200)) {
    return true;
  }
  std::fprintf(stderr,
               "bench: namespace %s has no default ServiceAccount after 60 s: is "
               "kube-controller-manager running (apiserver-only.sh up --controller-manager)?\n",
               ns.c_str());
  return false;
}

void DeleteNamespace(kube::Api& api, const std::string& ns) {
  (void)api.Delete(kNamespaceResource, "", ns);
}

bool DeleteNamespaceAndWait(kube::Api& api, const std::string& ns, int limit_s) {
  DeleteNamespace(api, ns);
  const auto start = std::chrono::steady_clock::now();
  auto next_report = start + std::chrono::seconds(10);
  auto gone = [&] {
    auto got = api.Get(kNamespaceResource, "", ns);
    if (!got.ok() && got.error().IsNotFound()) return true;
    if (const auto now = std::chrono::steady_clock::now(); now >= next_report) {
      // One item and the count of the rest (metadata.remainingItemCount), not every pod.
      kube::ListOptions one;
      one.limit = 1;
      auto pods = api.List(kube::resources::kPods, ns, one);
      int64_t left = 0;
      if (pods.ok()) {
        left = static_cast<int64_t>(pods->value("items", Json::array()).size()) +
               pods->value("/metadata/remainingItemCount"_json_pointer, int64_t{0});
      }
      std::printf("  deleting namespace %s: %lld pods left after %lld s\n", ns.c_str(),
                  static_cast<long long>(left),
                  static_cast<long long>(
                      std::chrono::duration_cast<std::chrono::seconds>(now - start).count()));
      std::fflush(stdout);
      next_report = now + std::chrono::seconds(10);
    }
    return false;
  };
  if (dljob::testing::WaitFor(gone, limit_s * 1000, 500)) return true;
  std::fprintf(stderr, "bench: namespace %s is still being deleted after %d s; going on\n",
               ns.c_str(), limit_s);
  return false;
}

PhaseWatch::PhaseWatch(kube::Api& api, const kube::Resource& resource, std::string ns,
                       std::set<std::string> phases, Callback on_phase)
    : ns_(std::move(ns)),
      phases_(std::move(phases)),
      on_phase_(std::move(on_phase)),
      thread_([this, &api, resource](std::stop_token stop) { Run(api, resource, stop); }) {}

void PhaseWatch::Stop() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

std::optional<Clock::time_point> PhaseWatch::When(const std::string& name,
                                                  const std::string& phase) {
  MutexLock lock(mu_);
  auto object = first_.find(name);
  if (object == first_.end()) return std::nullopt;
  auto it = object->second.find(phase);
  if (it == object->second.end()) return std::nullopt;
  return it->second;
}

int PhaseWatch::Count(const std::string& phase) {
  MutexLock lock(mu_);
  auto it = counts_.find(phase);
  return it == counts_.end() ? 0 : it->second;
}

void PhaseWatch::Record(const Json& object) {
  auto status = object.find("status");
  if (status == object.end() || !status->is_object()) return;
  const std::string phase = status->value("phase", "");
  if (!phases_.contains(phase)) return;
  const Json& metadata = object["metadata"];
  const std::string name = metadata.value("name", "");
  const std::string uid = metadata.value("uid", "");
  {
    MutexLock lock(mu_);
    if (!uid_phases_.emplace(uid, phase).second) return;
    if (first_[name].emplace(phase, Clock::now()).second) ++counts_[phase];
  }
  if (on_phase_) on_phase_(object, phase);
}

void PhaseWatch::Run(kube::Api& api, const kube::Resource& resource, std::stop_token stop) {
  std::string rv;
  while (!stop.stop_requested()) {
    kube::ListOptions o;
    o.resource_version = rv;
    o.timeout_seconds = 5;  // so that Stop() does not wait long
    auto watch = api.Watch(resource, ns_, o);
    if (!watch.ok()) {
      rv.clear();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    for (;;) {
      auto event = (*watch)->Next();
      if (!event.ok() || !event->has_value()) break;
      const kube::WatchEvent& e = **event;
      if (e.type == kube::WatchEvent::Type::kError) {
        rv.clear();  // 410 Gone: start again from now (a missed phase is seen on the list)
        break;
      }
      if (e.object.contains("metadata")) {
        rv = e.object["metadata"].value("resourceVersion", rv);
      }
      if (e.type != kube::WatchEvent::Type::kBookmark) Record(e.object);
    }
  }
}

void StopOnSignals() {
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool StopRequested() { return g_stop != 0; }

bool WaitPrinting(const std::string& what, int total, const std::function<int()>& done,
                  int timeout_ms, dljob::testing::Background* watched) {
  int last_step = -1;
  auto last_print = Clock::now();
  bool exited = false;
  const bool ok = dljob::testing::WaitFor(
      [&] {
        if (g_stop) {
          std::fprintf(stderr, "bench: stopped by a signal\n");
          exited = true;
          return true;
        }
        if (watched != nullptr) {
          if (int code = watched->Wait(0); code != -1) {
            std::fprintf(stderr, "bench: the operator exited (status %d) before the run ended\n",
                         code);
            exited = true;
            return true;
          }
        }
        const int now = done();
        const int step = total > 0 ? now * 10 / total : 0;
        if (step != last_step || Clock::now() - last_print > std::chrono::seconds(10)) {
          std::printf("  %s: %d/%d\n", what.c_str(), now, total);
          std::fflush(stdout);
          last_step = step;
          last_print = Clock::now();
        }
        return now >= total;
      },
      timeout_ms);
  return ok && !exited;
}

}  // namespace dljob::bench
