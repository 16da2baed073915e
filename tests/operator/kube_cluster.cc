#include "tests/operator/kube_cluster.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>

#include "base/base64.h"
#include "base/env.h"
#include "base/json_fields.h"
#include "jobs/child_names.h"
#include "kube/config.h"
#include "kube/http_api.h"
#include "tests/operator/e2e_jobs.h"

namespace dljob::testing {
namespace {

const kube::Resource kNamespaces{"", "v1", "namespaces", false, "Namespace"};
const kube::Resource kServiceAccounts{"", "v1", "serviceaccounts", true, "ServiceAccount"};
const kube::Resource kCrds{"apiextensions.k8s.io", "v1", "customresourcedefinitions", false,
                           "CustomResourceDefinition"};
const char* const kCrdNames[] = {"dljobs.dljob.io", "dlqueues.dljob.io"};
constexpr char kRanksMount[] = "/dljob-e2e";

// The ranks of NewJob's jobs (see the header): files under /dljob-e2e/<pod IP>/ say what to do.
constexpr char kRankLoop[] = R"sh(d=/dljob-e2e/$(hostname -i | cut -d' ' -f1)
r=${OMPI_COMM_WORLD_RANK:-0}
n=0
while :; do
  while [ -e "$d/say.$r.$n" ]; do cat "$d/say.$r.$n"; n=$((n + 1)); done
  if [ -e "$d/kill" ]; then kill 1; fi
  if [ -e "$d/exit" ]; then exit "$(cat "$d/exit")"; fi
  sleep 0.2
done)sh";

CommandResult Kubectl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"kubectl"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, {{"KUBECONFIG", KubeCluster::KubeconfigPath()}});
}

Result<std::unique_ptr<kube::Api>> ConnectAdmin() {
  std::string path = KubeCluster::KubeconfigPath();
  if (access(path.c_str(), R_OK) != 0) {
    return Status::FailedPrecondition("no kubeconfig at " + path +
                                      ": no cluster is up; start one with 'sudo bash "
                                      "scripts/cluster/kube-up.sh' (or set KUBECONFIG)");
  }
  Result<kube::Config> config = kube::LoadKubeconfig(path);
  if (!config.ok()) return config.status();
  return kube::MakeApi(*config);
}

bool Established(kube::Api& api, const std::string& crd) {
  kube::ApiResult<Json> got = api.Get(kCrds, "", crd);
  if (!got.ok()) return false;
  const Json& conditions = FieldOf(FieldOf(*got, "status"), "conditions");
  if (!conditions.is_array()) return false;
  for (const Json& c : conditions) {
    if (StringAt(c, "type") == "Established") return StringAt(c, "status") == "True";
  }
  return false;
}

bool NodeReady(const Json& node) {
  const Json& conditions = FieldOf(FieldOf(node, "status"), "conditions");
  if (!conditions.is_array()) return false;
  for (const Json& c : conditions) {
    if (StringAt(c, "type") == "Ready") return StringAt(c, "status") == "True";
  }
  return false;
}

int GpusOf(const Json& node) {
  try {
    return std::stoi(StringAt(FieldOf(FieldOf(node, "status"), "allocatable"), "nvidia.com/gpu"));
  } catch (const std::exception&) {
    return 0;
  }
}

std::string Field(const Json& j, const char* a, const char* b) {
  return StringAt(FieldOf(j, a), b);
}

}  // namespace

std::string KubeCluster::KubeconfigPath() {
  if (const char* k = std::getenv("KUBECONFIG"); k && *k) return k;
  const char* dir = std::getenv("DLJOB_KUBE_DIR");
  return std::string(dir && *dir ? dir : "/var/lib/dljob-kube") + "/kubeconfig";
}

Status KubeCluster::EnsureCrds(bool* installed) {
  *installed = false;
  Result<std::unique_ptr<kube::Api>> api = ConnectAdmin();
  if (!api.ok()) return api.status();
  bool present = true;
  for (const char* crd : kCrdNames) present = present && (*api)->Get(kCrds, "", crd).ok();
  if (!present) {
    CommandResult r = Kubectl({"apply", "-f", SourceDir() + "/charts/dljob/crds/"});
    if (r.exit_code != 0) {
      return Status::Unavailable("kubectl apply -f charts/dljob/crds/ failed: " + r.err + r.out);
    }
    *installed = true;
  }
  bool ready = WaitFor(
      [&] {
        return std::all_of(std::begin(kCrdNames), std::end(kCrdNames),
                           [&](const char* crd) { return Established(**api, crd); });
      },
      kWaitMs);
  return ready ? Status::Ok()
               : Status::Unavailable("the DLJob and DLQueue CRDs never became Established");
}

Status KubeCluster::DeleteCrds() {
  CommandResult r = Kubectl({"delete", "--wait=true", "-f", SourceDir() + "/charts/dljob/crds/"});
  return r.exit_code == 0
             ? Status::Ok()
             : Status::Unavailable("kubectl delete -f charts/dljob/crds/ failed: " + r.err + r.out);
}

Result<std::unique_ptr<KubeCluster>> KubeCluster::Start(int nodes_used) {
  static std::atomic<int> started{0};
  std::unique_ptr<KubeCluster> c(new KubeCluster());
  c->kubeconfig_ = KubeconfigPath();
  Result<std::unique_ptr<kube::Api>> api = ConnectAdmin();
  if (!api.ok()) return api.status();
  c->api_ = std::move(*api);

  kube::ApiResult<Json> nodes = kube::ListAll(*c->api_, kube::resources::kNodes, "");
  if (!nodes.ok()) {
    return Status::Unavailable("no cluster answers at " + c->kubeconfig_ + " (" +
                               nodes.error().ToString() +
                               "); start one with 'sudo bash scripts/cluster/kube-up.sh'");
  }
  // The Ready nodes with GPUs, by name: the first is the one a single-node case's jobs use.
  std::vector<const Json*> ready;
  for (const Json& n : (*nodes)["items"]) {
    if (NodeReady(n) && GpusOf(n) > 0) ready.push_back(&n);
  }
  std::sort(ready.begin(), ready.end(),
            [](const Json* a, const Json* b) { return NameOf(*a) < NameOf(*b); });
  if (ready.size() < static_cast<size_t>(nodes_used)) {
    return Status::FailedPrecondition(
        "these shared operator cases need " + std::to_string(nodes_used) +
        " Ready node(s) with nvidia.com/gpu; this cluster has " + std::to_string(ready.size()) +
        " of " + std::to_string((*nodes)["items"].size()) + " node(s)" +
        (nodes_used > 1 ? "; start one with 'sudo bash scripts/cluster/kube-up.sh --nodes " +
                              std::to_string(nodes_used) + "'"
                        : "; restart it with scripts/cluster/kube-up.sh"));
  }
  c->gpus_ = GpusOf(*ready[0]);
  for (const Json* n : ready) c->cluster_gpus_ += GpusOf(*n);
  if (nodes_used == 1) c->pinned_node_ = NameOf(*ready[0]);
  for (int i = 1; i < nodes_used; ++i) {
    if (GpusOf(*ready[i]) != c->gpus_) {
      return Status::FailedPrecondition("the cases need nodes of as many GPUs each; " +
                                        NameOf(*ready[0]) + " has " + std::to_string(c->gpus_) +
                                        ", " + NameOf(*ready[i]) + " " +
                                        std::to_string(GpusOf(*ready[i])));
    }
  }

  kube::ListOptions chart;
  chart.label_selector = "app.kubernetes.io/name=dljob-operator";
  kube::ApiResult<Json> operators =
      kube::ListAll(*c->api_, kube::resources::kPods, "dljob-system", chart);
  if (operators.ok() && !(*operators)["items"].empty()) {
    return Status::FailedPrecondition(
        "the chart's dljob-operator runs in dljob-system; these cases start their own operator "
        "and the two would share the node's GPUs: remove it first (kubectl delete -f "
        "charts/manifests/dljob.yaml)");
  }
  for (const char* crd : kCrdNames) {
    if (!Established(*c->api_, crd)) {
      return Status::FailedPrecondition(std::string("the CRD ") + crd +
                                        " is not installed (KubeCluster::EnsureCrds)");
    }
  }

  c->ns_ = "dljob-e2e-" + std::to_string(getpid()) + "-" + std::to_string(++started);
  Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", c->ns_}}}};
  if (kube::ApiResult<Json> made = c->api_->Create(kNamespaces, "", ns); !made.ok()) {
    c->ns_.clear();
    return Status::Unavailable("cannot create a namespace: " + made.error().ToString());
  }
  // Pods are refused until the namespace's default ServiceAccount exists.
  if (!WaitFor([&] { return c->api_->Get(kServiceAccounts, c->ns_, "default").ok(); }, kWaitMs)) {
    return Status::Unavailable("namespace " + c->ns_ + " never got its default ServiceAccount");
  }
  c->ranks_dir_ = c->dir_.path() + "/ranks";
  std::filesystem::create_directories(c->ranks_dir_);
  return c;
}

KubeCluster::~KubeCluster() {
  if (ns_.empty() || !api_) return;
  // Deleting the namespace takes the jobs' pods with it; wait, so the next test finds the node's
  // GPUs free (a kubelet refuses a pod whose GPUs another still holds).
  api_->Delete(kNamespaces, "", ns_);
  bool gone = WaitFor([&] { return Absent(*api_, kNamespaces, "", ns_); }, kWaitMs);
  if (!gone) std::fprintf(stderr, "KubeCluster: namespace %s is still there\n", ns_.c_str());
}

std::unique_ptr<OperatorProcess> KubeCluster::StartOperator(const std::vector<std::string>& args) {
  std::string id = "operator-" + std::to_string(++operators_started_);
  return StartOperatorAt({kubeconfig_, dir_.path(), id, ns_}, args);
}

Json KubeCluster::NewJob(const std::string& name, int gpus, int gpus_per_worker,
                         int backoff_limit) {
  Json job = testing::NewJob(name, gpus, gpus_per_worker, backoff_limit);
  job["metadata"]["namespace"] = ns_;
  job["spec"]["command"] = {"sh", "-c", kRankLoop};
  job["spec"]["data"] = Json::array(
      {{{"name", "e2e-ranks"}, {"source", "hostPath:" + ranks_dir_}, {"mountPath", kRanksMount}}});
  if (!pinned_node_.empty()) {
    job["spec"]["scheduling"]["nodeSelector"] = {{"kubernetes.io/hostname", pinned_node_}};
  }
  return job;
}

Result<std::string> KubeCluster::WorkerAddress(const std::string& job, int64_t index) {
  std::string name = WorkerName(job, index);
  std::string address;
  bool found = WaitFor(
      [&] {
        kube::ApiResult<Json> pod = api_->Get(kube::resources::kPods, ns_, name);
        if (!pod.ok() || IsDeleting(*pod) || PodPhase(*pod) != "Running") return false;
        address = Field(*pod, "status", "podIP");
        return !address.empty();
      },
      wait_ms());
  if (!found) return Status::NotFound("no Running worker " + name + " with an address in " + ns_);
  return address;
}

Status KubeCluster::Put(const std::string& address, const std::string& name,
                        const std::string& text) {
  std::string dir = ranks_dir_ + "/" + address;
  if (Status s = DefaultEnv().CreateDirs(dir); !s.ok()) return s;
  return DefaultEnv().WriteFileAtomically(dir + "/" + name, text);
}

Status KubeCluster::Say(const std::string& job, int rank, const std::string& line) {
  std::optional<Json> got = GetJob(*api_, job);
  if (!got) return Status::NotFound("no DLJob " + job + " in " + ns_);
  int per_worker = (*got)["spec"].value("gpusPerWorker", 1);
  Result<std::string> address = WorkerAddress(job, rank / std::max(per_worker, 1));
  if (!address.ok()) return address.status();
  int& n = said_[*address + "/" + std::to_string(rank)];
  return Put(*address, "say." + std::to_string(rank) + "." + std::to_string(n++), line + "\n");
}

Status KubeCluster::EndTraining(const std::string& job, int exit_code) {
  std::optional<Json> got = GetJob(*api_, job);
  if (!got) return Status::NotFound("no DLJob " + job + " in " + ns_);
  int per_worker = std::max((*got)["spec"].value("gpusPerWorker", 1), 1);
  // The run's workers: an elastic job's current size, else its spec's.
  int workers = got->value("/status/workers/desired"_json_pointer,
                           (*got)["spec"].value("gpus", 0) / per_worker);
  for (int i = 0; i < workers; ++i) {
    Result<std::string> address = WorkerAddress(job, i);
    if (!address.ok()) return address.status();
    if (Status s = Put(*address, "exit", std::to_string(exit_code) + "\n"); !s.ok()) return s;
  }
  return Status::Ok();
}

Result<std::string> KubeCluster::ServiceAccountToken(const std::string& sa) {
  const kube::Resource service_accounts{"", "v1", "serviceaccounts", true, "ServiceAccount"};
  kube::ApiResult<Json> account = api_->Create(
      service_accounts, ns(),
      {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", sa}}}});
  if (!account.ok() && !account.error().IsAlreadyExists()) {
    return account.error().ToStatus().WithContext("service account " + sa);
  }
  // The legacy token Secret: the token controller fills data.token with a token the server
  // authenticates (every version the reference cluster may run still does, for Secrets made so).
  const std::string name = sa + "-token";
  Json secret = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"type", "kubernetes.io/service-account-token"},
                 {"metadata",
                  {{"name", name}, {"annotations", {{"kubernetes.io/service-account.name", sa}}}}}};
  kube::ApiResult<Json> made = api_->Create(kube::resources::kSecrets, ns(), secret);
  if (!made.ok() && !made.error().IsAlreadyExists()) {
    return made.error().ToStatus().WithContext("the token Secret of " + sa);
  }
  std::string token;
  bool filled = WaitFor(
      [&] {
        kube::ApiResult<Json> s = api_->Get(kube::resources::kSecrets, ns(), name);
        if (!s.ok()) return false;
        std::optional<std::string> t =
            Base64Decode(s->value("/data/token"_json_pointer, std::string()));
        if (!t || t->empty()) return false;
        token = *t;
        return true;
      },
      wait_ms());
  if (!filled) return Status::Unavailable("the token controller did not fill Secret " + name);
  return token;
}

Status KubeCluster::FailWorker(const std::string& job, int index) {
  Result<std::string> address = WorkerAddress(job, index);
  if (!address.ok()) return address.status();
  return Put(*address, "kill", "");
}

namespace {

// scripts/cluster/kube-fault.sh ARGS... against the cluster of `kubeconfig`.
Status KubeFault(const std::string& kubeconfig, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"bash", SourceDir() + "/scripts/cluster/kube-fault.sh"};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = RunCommand(argv, {{"KUBECONFIG", kubeconfig}});
  if (r.exit_code == 0) return Status::Ok();
  std::string command = "scripts/cluster/kube-fault.sh";
  for (const std::string& a : args) command += " " + a;
  return Status::Unavailable(command + " failed: " + r.err + r.out);
}

}  // namespace

Status KubeCluster::RestartControlPlane(const std::string& part) {
  if (part == "kube-apiserver") return KubeFault(kubeconfig_, {"restart-apiserver"});
  if (part == "etcd") return KubeFault(kubeconfig_, {"restart-etcd"});
  return Status::InvalidArgument("no part " + part);
}

Status KubeCluster::StopKubelet(const std::string& node) {
  return KubeFault(kubeconfig_, {"stop-kubelet", node});
}

Status KubeCluster::StartKubelet(const std::string& node) {
  return KubeFault(kubeconfig_, {"start-kubelet", node});
}

Status KubeCluster::CutLauncherLog(const std::string& job) {
  std::string node;
  const bool placed = WaitFor(
      [&] {
        kube::ApiResult<Json> pod = api_->Get(kube::resources::kPods, ns_, LauncherName(job));
        node = pod.ok() && PodPhase(*pod) == "Running" ? NodeNameOf(*pod) : "";
        return !node.empty();
      },
      wait_ms());
  if (!placed) return Status::Unavailable("the launcher of " + job + " is not Running on a node");
  return KubeFault(kubeconfig_, {"restart-kubelet", node});
}

std::string KubeCluster::Diagnostics() const {
  std::string out = "--- pods in " + ns_ + " ---\n";
  kube::ApiResult<Json> pods = kube::ListAll(*api_, kube::resources::kPods, ns_);
  if (pods.ok()) {
    for (const Json& p : (*pods)["items"]) {
      out += NameOf(p) + " phase=" + PodPhase(p) + " node=" + NodeNameOf(p) +
             " ip=" + Field(p, "status", "podIP") + (IsDeleting(p) ? " deleting" : "");
      const Json& statuses = FieldOf(FieldOf(p, "status"), "containerStatuses");
      for (const Json& cs : statuses.is_array() ? statuses : Json::array()) {
        out += " [" + StringAt(cs, "name") + " " + cs.value("state", Json::object()).dump() + "]";
      }
      out += "\n";
    }
  }
  out += "--- events in " + ns_ + " ---\n";
  kube::ApiResult<Json> events = kube::ListAll(*api_, kube::resources::kEvents, ns_);
  if (events.ok()) {
    std::vector<Json> items = (*events)["items"].get<std::vector<Json>>();
    std::stable_sort(items.begin(), items.end(), [](const Json& a, const Json& b) {
      return StringAt(a, "lastTimestamp") < StringAt(b, "lastTimestamp");
    });
    for (const Json& e : items) {
      out += StringAt(e, "type") + " " + StringAt(e, "reason") + " " +
             Field(e, "involvedObject", "name") + ": " + StringAt(e, "message") + "\n";
    }
  }
  return out;
}

}  // namespace dljob::testing
