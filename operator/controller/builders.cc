#include "operator/controller/builders.h"

#include <map>
#include <tuple>
#include <vector>

#include "base/json_fields.h"
#include "jobs/checkpoint_env.h"
#include "jobs/defaults.h"
#include "jobs/quantity.h"
#include "operator/controller/dataset_cache.h"
#include "operator/controller/graceful_stop.h"

namespace dljob::controller {
namespace {

using json = nlohmann::json;

json Labels(const DLJob& job, const std::string& role) {
  json labels = json::object();
  for (const auto& [k, v] : job.metadata.labels) labels[k] = v;
  labels[kJobNameLabel] = job.metadata.name;
  if (!role.empty()) labels[kRoleLabel] = role;
  return labels;
}

json Metadata(const DLJob& job, const std::string& name, const std::string& role) {
  return {{"name", name},
          {"namespace", job.metadata.namespace_},
          {"labels", Labels(job, role)},
          {"ownerReferences", json::array({OwnerReference(job)})}};
}

// The directory spec.checkpoint is mounted at in rank 0's pod.
std::string CheckpointDir(const CheckpointSpec& c) {
  return c.mount_path.value_or(kDefaultCheckpointMountPath);
}

// What the job sets in every rank's environment besides spec.env (mpirun -x passes each on).
std::vector<EnvVar> JobEnv(const DLJob& job) {
  std::vector<EnvVar> env = {{"DLJOB_JOB_NAME", job.metadata.name}};
  if (const std::optional<CheckpointSpec>& c = job.spec.checkpoint) {
    for (EnvVar& e : CheckpointEnv(*c, CheckpointDir(*c))) env.push_back(std::move(e));
  }
  return env;
}

json EnvList(const DLJob& job) {
  json env = json::array();
  for (const EnvVar& e : job.spec.env) env.push_back({{"name", e.name}, {"value", e.value}});
  for (const EnvVar& e : JobEnv(job)) env.push_back({{"name", e.name}, {"value", e.value}});
  return env;
}

json SshVolume(const DLJob& job) {
  return {{"name", "ssh"},
          {"secret",
           {{"secretName", SshSecretName(job)},
            {"defaultMode", 0600},
            {"items", json::array({{{"key", "id_rsa"}, {"path", "id_rsa"}},
                                   {{"key", "authorized_keys"}, {"path", "authorized_keys"}}})}}}};
}

Result<json> Resources(const DLJob& job) {
  int64_t gpus = job.spec.gpus_per_worker.value_or(1);
  json limits = {{"nvidia.com/gpu", gpus}};
  json requests = json::object();
  const ResourcesSpec& r = job.spec.resources;
  for (auto [name, per_gpu, path] :
       {std::tuple{"cpu", r.cpu_per_gpu, "spec.resources.cpuPerGpu"},
        std::tuple{"memory", r.memory_per_gpu, "spec.resources.memoryPerGpu"}}) {
    if (!per_gpu) continue;
    Result<std::string> total = MultiplyQuantity(*per_gpu, gpus);
    if (!total.ok())
      return Status::InvalidArgument(std::string(path) + ": " + total.status().message());
    limits[name] = *total;
    requests[name] = *total;
  }
  json out = {{"limits", limits}};
  if (!requests.empty()) out["requests"] = requests;
  return out;
}

// spec.scheduling.affinity's required node affinity as a pod's spec.affinity; null when it
// requires nothing.
json PodAffinity(const SchedulingSpec& s) {
  if (!s.affinity || !s.affinity->node_affinity) return nullptr;
  const std::optional<NodeSelector>& required =
      s.affinity->node_affinity->required_during_scheduling_ignored_during_execution;
  if (!required) return nullptr;
  json terms = json::array();
  for (const NodeSelectorTerm& term : required->node_selector_terms) {
    json t = json::object();
    for (const NodeSelectorRequirement& r : term.match_expressions) {
      json x = {{"key", r.key}, {"operator", r.operator_}};
      if (!r.values.empty()) x["values"] = r.values;
      t["matchExpressions"].push_back(std::move(x));
    }
    terms.push_back(std::move(t));
  }
  return {{"nodeAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", terms}}}}}};
}

void AddScheduling(const DLJob& job, json& pod_spec) {
  const SchedulingSpec& s = job.spec.scheduling;
  if (!s.node_selector.empty()) pod_spec["nodeSelector"] = s.node_selector;
  if (json affinity = PodAffinity(s); !affinity.is_null()) pod_spec["affinity"] = affinity;
  if (s.tolerations.empty()) return;
  json tolerations = json::array();
  for (const Toleration& t : s.tolerations) {
    json x = json::object();
    if (!t.key.empty()) x["key"] = t.key;
    if (!t.operator_.empty()) x["operator"] = t.operator_;
    if (!t.value.empty()) x["value"] = t.value;
    if (!t.effect.empty()) x["effect"] = t.effect;
    if (t.toleration_seconds) x["tolerationSeconds"] = *t.toleration_seconds;
    tolerations.push_back(std::move(x));
  }
  pod_spec["tolerations"] = std::move(tolerations);
}

}  // namespace

json OwnerReference(const DLJob& job) {
  return {{"apiVersion", kApiVersion}, {"kind", kKind},      {"name", job.metadata.name},
          {"uid", job.metadata.uid},   {"controller", true}, {"blockOwnerDeletion", true}};
}

json NewWorkerService(const DLJob& job) {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", Metadata(job, ServiceName(job), "")},
          {"spec",
           {{"clusterIP", "None"},
            // Workers must resolve one another before they are Ready (sshd comes up first).
            {"publishNotReadyAddresses", true},
            {"selector", {{kJobNameLabel, job.metadata.name}, {kRoleLabel, "worker"}}}}}};
}

std::string WorkerFqdn(const DLJob& job, int64_t index, const BuildOptions& options) {
  return WorkerName(job, index) + "." + ServiceName(job) + "." + job.metadata.namespace_ + ".svc." +
         options.cluster_domain;
}

std::string Hostfile(const DLJob& job, const BuildOptions& options) {
  std::string out;
  int64_t slots = job.spec.mpi.slots_per_worker.value_or(1);
  for (int64_t i = 0; i < WorkerCount(job); ++i) {
    out += WorkerFqdn(job, i, options) + " slots=" + std::to_string(slots) + "\n";
  }
  return out;
}

std::vector<std::string> WorkerPodIps(const DLJob& job, const std::vector<json>& workers) {
  std::map<std::string, std::string> by_name;
  for (const json& w : workers) {
    by_name[StringAt(FieldOf(w, "metadata"), "name")] = StringAt(FieldOf(w, "status"), "podIP");
  }
  std::vector<std::string> ips;
  for (int64_t i = 0; i < WorkerCount(job); ++i) {
    auto it = by_name.find(WorkerName(job, i));
    if (it == by_name.end() || it->second.empty()) return {};
    ips.push_back(it->second);
  }
  return ips;
}

json NewConfigMap(const DLJob& job, const BuildOptions& options) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", Metadata(job, ConfigMapName(job), "")},
          {"data", {{"hostfile", Hostfile(job, options)}}}};
}

json NewSshSecret(const DLJob& job, const std::string& private_key_pem,
                  const std::string& authorized_key) {
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"type", "Opaque"},
          {"metadata", Metadata(job, SshSecretName(job), "")},
          {"stringData", {{"id_rsa", private_key_pem}, {"authorized_keys", authorized_key}}}};
}

json NewDisruptionBudget(const DLJob& job, const std::string& api_version) {
  return {{"apiVersion", api_version},
          {"kind", "PodDisruptionBudget"},
          {"metadata", Metadata(job, job.metadata.name, "")},
          {"spec",
           {{"minAvailable", WorkerCount(job) + 1},
            {"selector", {{"matchLabels", {{kJobNameLabel, job.metadata.name}}}}}}}};
}

Result<json> NewWorkerPod(const DLJob& job, int64_t index, const BuildOptions& options) {
  Result<RenderedVolumes> data = RenderDataVolumes(job, options.volumes);
  if (!data.ok()) return data.status();
  if (index == 0) {  // rank 0's pod
    Result<RenderedVolumes> checkpoint = RenderCheckpointVolume(job, options.volumes);
    if (!checkpoint.ok()) return checkpoint.status();
    for (json& v : checkpoint->volumes) data->volumes.push_back(std::move(v));
    for (json& m : checkpoint->mounts) data->mounts.push_back(std::move(m));
  }
  Result<json> resources = Resources(job);
  if (!resources.ok()) return resources.status();
  int64_t port = job.spec.mpi.ssh_port.value_or(2222);
  json mounts = data->mounts;
  mounts.push_back({{"name", "ssh"}, {"mountPath", "/root/.ssh"}, {"readOnly", true}});
  mounts.push_back({{"name", "dshm"}, {"mountPath", "/dev/shm"}});  // NCCL needs a large shm
  json volumes = data->volumes;
  volumes.push_back(SshVolume(job));
  volumes.push_back({{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}}}});
  json container = {
      {"name", "worker"},
      {"image", job.spec.image},
      {"command", WorkerEntrypoint({"/usr/sbin/sshd", "-D", "-e", "-p", std::to_string(port)})},
      {"ports", json::array({{{"name", "ssh"}, {"containerPort", port}}})},
      {"env", EnvList(job)},
      {"resources", *resources},
      {"volumeMounts", mounts},
      {"readinessProbe", {{"tcpSocket", {{"port", port}}}, {"periodSeconds", 2}}}};
  if (!job.spec.working_dir.empty()) container["workingDir"] = job.spec.working_dir;
  json metadata = Metadata(job, WorkerName(job, index), "worker");
  metadata["labels"][kIndexLabel] = std::to_string(index);
  // Which dataset each cache init container copies, so the pod alone proves a warm cache.
  if (std::string sources = CacheSourcesAnnotation(job); !sources.empty()) {
    metadata["annotations"][kCacheSourcesAnnotation] = std::move(sources);
  }
  json spec = {{"hostname", WorkerName(job, index)},
               {"subdomain", ServiceName(job)},
               {"schedulerName", kSchedulerName},
               {"restartPolicy", "Never"},  // the operator restarts the whole job, not one pod
               {"automountServiceAccountToken", false},  // ranks never call the API server
               {"terminationGracePeriodSeconds", options.termination_grace_seconds},
               {"containers", json::array({container})},
               {"volumes", volumes}};
  // Caches are filled before sshd starts, so no rank can start on a half-copied dataset.
  if (!data->init_containers.empty()) spec["initContainers"] = data->init_containers;
  AddScheduling(job, spec);
  return json{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", metadata}, {"spec", spec}};
}

std::vector<std::string> LauncherCommand(const DLJob& job) {
  std::vector<std::string> cmd = {
      "mpirun",
      "--allow-run-as-root",
      "-np",
      std::to_string(job.spec.gpus.value_or(1)),
      "--hostfile",
      kHostfilePath,
      "--tag-output",
      "--bind-to",
      "none",
      "--mca",
      "plm_rsh_args",
      "-p " + std::to_string(job.spec.mpi.ssh_port.value_or(2222)) +
          " -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"};
  for (const EnvVar& e : job.spec.env) {
    cmd.push_back("-x");
    cmd.push_back(e.name);
  }
  for (const EnvVar& e : JobEnv(job)) {
    cmd.push_back("-x");
    cmd.push_back(e.name);
  }
  const std::vector<std::string>& command = job.spec.command;
  if (const std::optional<CheckpointSpec>& c = job.spec.checkpoint) {
    for (std::string& arg : WithCheckpointFlags(command, *c, CheckpointDir(*c))) {
      cmd.push_back(std::move(arg));
    }
  } else {
    cmd.insert(cmd.end(), command.begin(), command.end());
  }
  return cmd;
}

json NewLauncherPod(const DLJob& job, const BuildOptions& options,
                    const std::vector<std::string>& worker_ips) {
  json env = EnvList(job);
  // Open MPI cuts "w-0.w.ns.svc.cluster.local" to "w-0" before it calls ssh unless told not to,
  // and a pod's DNS search path does not reach the headless Service's names (mpi-operator sets
  // the same). The launcher's own, not passed to the ranks.
  env.push_back({{"name", "OMPI_MCA_orte_keep_fqdn_hostnames"}, {"value", "true"}});
  json container = {
      {"name", "launcher"},
      {"image", job.spec.image},
      {"command", LauncherEntrypoint(LauncherCommand(job))},
      {"env", env},
      {"volumeMounts",
       json::array({{{"name", "hostfile"}, {"mountPath", "/etc/dljob"}, {"readOnly", true}},
                    {{"name", "ssh"}, {"mountPath", "/root/.ssh"}, {"readOnly", true}}})}};
  if (!job.spec.working_dir.empty()) container["workingDir"] = job.spec.working_dir;
  json volumes = json::array(
      {{{"name", "hostfile"}, {"configMap", {{"name", ConfigMapName(job)}}}}, SshVolume(job)});
  json spec = {{"schedulerName", kSchedulerName},
               {"restartPolicy", "Never"},
               {"automountServiceAccountToken", false},
               {"terminationGracePeriodSeconds", options.termination_grace_seconds},
               {"containers", json::array({container})},
               {"volumes", volumes}};
  // The hostfile's names (and their short forms) resolve from /etc/hosts, with or without
  // cluster DNS: the launcher is made only once every worker is Ready, so their addresses are
  // known, and they do not change while this launcher lives (a lost worker restarts the job).
  json aliases = json::array();
  for (size_t i = 0; i < worker_ips.size(); ++i) {
    const auto index = static_cast<int64_t>(i);
    aliases.push_back({{"ip", worker_ips[i]},
                       {"hostnames", {WorkerFqdn(job, index, options), WorkerName(job, index)}}});
  }
  if (!aliases.empty()) spec["hostAliases"] = std::move(aliases);
  AddScheduling(job, spec);
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", Metadata(job, LauncherName(job), "launcher")},
          {"spec", spec}};
}

}  // namespace dljob::controller
