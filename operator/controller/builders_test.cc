#include "operator/controller/builders.h"

#include <gtest/gtest.h>

#include "jobs/codec.h"
#include "jobs/defaults.h"
#include "operator/controller/graceful_stop.h"

namespace dljob::controller {
namespace {

using json = nlohmann::json;

DLJob ResNetJob() {
  DecodeResult d = ReadJobFile("examples/resnet-job.yaml");
  EXPECT_TRUE(d.ok()) << JoinFieldErrors(d.errors);
  ApplyDefaults(d.job);
  d.job.metadata.uid = "uid-1";
  return d.job;
}

json Find(const json& list, const std::string& name) {
  for (const json& item : list) {
    if (item.value("name", "") == name) return item;
  }
  return nullptr;
}

TEST(Names, FollowTheJob) {
  DLJob job = ResNetJob();
  EXPECT_EQ(WorkerName(job, 1), "resnet50-worker-1");
  EXPECT_EQ(LauncherName(job), "resnet50-launcher");
  EXPECT_EQ(ServiceName(job), "resnet50-worker");
  EXPECT_EQ(WorkerCount(job), 2);  // 16 GPUs / 8 per worker
}

TEST(NewWorkerService, IsHeadlessAndSelectsTheWorkers) {
  EXPECT_EQ(NewWorkerService(ResNetJob()), json::parse(R"({
    "apiVersion": "v1", "kind": "Service",
    "metadata": {"name": "resnet50-worker", "namespace": "team-a",
                 "labels": {"team": "vision", "dljob.io/job-name": "resnet50"},
                 "ownerReferences": [{"apiVersion": "dljob.io/v1alpha1", "kind": "DLJob",
                                      "name": "resnet50", "uid": "uid-1", "controller": true,
                                      "blockOwnerDeletion": true}]},
    "spec": {"clusterIP": "None", "publishNotReadyAddresses": true,
             "selector": {"dljob.io/job-name": "resnet50", "dljob.io/role": "worker"}}})"));
}

TEST(Hostfile, OneLinePerWorkerWithTheConfiguredClusterDomain) {
  BuildOptions options;
  options.cluster_domain = "corp.example";
  EXPECT_EQ(Hostfile(ResNetJob(), options),
            "resnet50-worker-0.resnet50-worker.team-a.svc.corp.example slots=8\n"
            "resnet50-worker-1.resnet50-worker.team-a.svc.corp.example slots=8\n");
  json cm = NewConfigMap(ResNetJob(), options);
  EXPECT_EQ(cm["metadata"]["name"], "resnet50-config");
  EXPECT_EQ(cm["data"]["hostfile"], Hostfile(ResNetJob(), options));
}

TEST(NewWorkerPod, RequestsItsGpusAndRunsSshd) {
  Result<json> pod = NewWorkerPod(ResNetJob(), 1, BuildOptions{});
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  const json& meta = (*pod)["metadata"];
  EXPECT_EQ(meta["name"], "resnet50-worker-1");
  EXPECT_EQ(meta["labels"]["dljob.io/role"], "worker");
  EXPECT_EQ(meta["labels"]["dljob.io/replica-index"], "1");
  EXPECT_EQ(meta["ownerReferences"][0]["uid"], "uid-1");
  const json& spec = (*pod)["spec"];
  EXPECT_EQ(spec["schedulerName"], "dljob-scheduler");
  EXPECT_EQ(spec["restartPolicy"], "Never");
  EXPECT_EQ(spec["hostname"], "resnet50-worker-1");
  EXPECT_EQ(spec["subdomain"], "resnet50-worker");
  EXPECT_EQ(spec["nodeSelector"]["nvidia.com/gpu.product"], "NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(
      spec["tolerations"][0],
      json::parse(R"({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"})"));
  const json& c = spec["containers"][0];
  EXPECT_EQ(c["image"], "registry.example.com/dljob/trainer:cuda");
  EXPECT_EQ(c["command"], json(WorkerEntrypoint({"/usr/sbin/sshd", "-D", "-e", "-p", "2222"})));
  EXPECT_EQ(spec["terminationGracePeriodSeconds"], kDefaultTerminationGraceSeconds);
  EXPECT_EQ(c["resources"], json::parse(R"({
      "limits": {"nvidia.com/gpu": 8, "cpu": "64", "memory": "480Gi"},
      "requests": {"cpu": "64", "memory": "480Gi"}})"));
  EXPECT_EQ(c["readinessProbe"]["tcpSocket"]["port"], 2222);
  EXPECT_EQ(c["env"][0], json::parse(R"({"name": "NCCL_DEBUG", "value": "WARN"})"));
  // The example caches its oss:// dataset on the node's NVMe: an init container fills the cache,
  // and the trainer reads this dataset's directory of it.
  EXPECT_EQ(c["volumeMounts"][0]["name"], "cache-imagenet");
  EXPECT_EQ(c["volumeMounts"][0]["mountPath"], "/data/imagenet");
  EXPECT_EQ(c["volumeMounts"][0]["readOnly"], true);
  EXPECT_EQ(spec["volumes"][0]["hostPath"]["path"], "/mnt/nvme/dljob-cache");
  ASSERT_EQ(spec["initContainers"].size(), 1u);
  const json& init = spec["initContainers"][0];
  EXPECT_EQ(init["image"], c["image"]);
  EXPECT_EQ(init["command"][4], "oss://dljob-datasets/imagenet/train");
  EXPECT_EQ(init["command"][6],
            "/dljob/cache/" + c["volumeMounts"][0]["subPath"].get<std::string>());
}

TEST(NewWorkerPod, HasNoInitContainersWithoutACache) {
  DLJob job = ResNetJob();
  job.spec.data[0].cache.reset();
  Result<json> pod = NewWorkerPod(job, 0, BuildOptions{});
  ASSERT_TRUE(pod.ok());
  EXPECT_FALSE((*pod)["spec"].contains("initContainers"));
  EXPECT_EQ((*pod)["spec"]["volumes"][0]["csi"]["volumeAttributes"]["bucket"], "dljob-datasets");
  EXPECT_EQ(
      (*pod)["spec"]["containers"][0]["volumeMounts"][0],
      json::parse(R"({"name": "data-imagenet", "mountPath": "/data/imagenet", "readOnly": true})"));
}

TEST(NewWorkerPod, CarriesTheRequiredNodeAffinityAsAPodSpecAffinity) {
  DLJob job = ResNetJob();
  Result<json> pod = NewWorkerPod(job, 0, BuildOptions{});
  ASSERT_TRUE(pod.ok());
  EXPECT_FALSE((*pod)["spec"].contains("affinity"));
  job.spec.scheduling.affinity = Affinity{.node_affinity = NodeAffinity{}};  // requires nothing
  EXPECT_FALSE(NewWorkerPod(job, 0, BuildOptions{})->at("spec").contains("affinity"));

  job.spec.scheduling.affinity =
      Affinity{.node_affinity = NodeAffinity{
                   .required_during_scheduling_ignored_during_execution = NodeSelector{{
                       NodeSelectorTerm{{{"nvidia.com/gpu.memory", "Gt", {"40000"}},
                                         {"dljob.io/draining", "DoesNotExist", {}}}},
                       NodeSelectorTerm{{{"topology.kubernetes.io/zone", "In", {"z1", "z2"}}}},
                       NodeSelectorTerm{},
                   }}}};
  const json want =
      json::parse(R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "nvidia.com/gpu.memory", "operator": "Gt",
                               "values": ["40000"]},
                              {"key": "dljob.io/draining", "operator": "DoesNotExist"}]},
        {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                               "values": ["z1", "z2"]}]},
        {}]}}})");
  pod = NewWorkerPod(job, 1, BuildOptions{});
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ((*pod)["spec"]["affinity"], want);
  EXPECT_EQ(NewLauncherPod(job)["spec"]["affinity"], want);  // as its nodeSelector does
}

TEST(NewWorkerPod, ABadQuantityNamesItsField) {
  DLJob job = ResNetJob();
  job.spec.resources.memory_per_gpu = "1e3";
  Result<json> pod = NewWorkerPod(job, 0, BuildOptions{});
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.status().message().rfind("spec.resources.memoryPerGpu: ", 0), 0u);
}

TEST(NewLauncherPod, RunsMpirunOverTheHostfileWithTheJobsEnv) {
  DLJob job = ResNetJob();
  std::vector<std::string> want = {
      "mpirun",
      "--allow-run-as-root",
      "-np",
      "16",
      "--hostfile",
      "/etc/dljob/hostfile",
      "--tag-output",
      "--bind-to",
      "none",
      "--mca",
      "plm_rsh_args",
      "-p 2222 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
      "-x",
      "NCCL_DEBUG",
      "-x",
      "DLJOB_JOB_NAME",
      "dljob-train",
      "--model=resnet50",
      "--batch_size=64",
      "--data_name=imagenet",
      "--data_dir=/data/imagenet",
      "--variable_update=allreduce",
      "--use_fp16"};
  EXPECT_EQ(LauncherCommand(job), want);
  json pod = NewLauncherPod(job);
  EXPECT_EQ(pod["metadata"]["name"], "resnet50-launcher");
  EXPECT_EQ(pod["metadata"]["labels"]["dljob.io/role"], "launcher");
  EXPECT_EQ(pod["spec"]["containers"][0]["command"], json(LauncherEntrypoint(want)));
  EXPECT_EQ(pod["spec"]["terminationGracePeriodSeconds"], kDefaultTerminationGraceSeconds);
  EXPECT_FALSE(pod["spec"]["containers"][0].contains("resources")) << "the launcher needs no GPU";
  EXPECT_EQ(pod["spec"]["volumes"][0]["configMap"]["name"], "resnet50-config");
}

TEST(NewLauncherPod, ReachesTheWorkersWithoutClusterDns) {
  BuildOptions options;
  options.cluster_domain = "corp.example";
  json pod = NewLauncherPod(ResNetJob(), options, {"10.1.0.5", "10.1.0.6"});
  EXPECT_EQ(pod["spec"]["hostAliases"], json::parse(R"([
      {"ip": "10.1.0.5", "hostnames": ["resnet50-worker-0.resnet50-worker.team-a.svc.corp.example",
                                       "resnet50-worker-0"]},
      {"ip": "10.1.0.6", "hostnames": ["resnet50-worker-1.resnet50-worker.team-a.svc.corp.example",
                                       "resnet50-worker-1"]}])"));
  // The names mapped are the hostfile's.
  for (int64_t i = 0; i < 2; ++i) {
    EXPECT_NE(Hostfile(ResNetJob(), options).find(WorkerFqdn(ResNetJob(), i, options) + " "),
              std::string::npos);
  }
  // Open MPI keeps the FQDNs (it would cut them to "resnet50-worker-0" otherwise); only mpirun
  // needs it, so the ranks are not given it.
  EXPECT_EQ(Find(pod["spec"]["containers"][0]["env"], "OMPI_MCA_orte_keep_fqdn_hostnames"),
            json::parse(R"({"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"})"));
  for (const std::string& arg : LauncherCommand(ResNetJob())) {
    EXPECT_EQ(arg.find("OMPI_MCA"), std::string::npos) << arg;
  }
  EXPECT_FALSE(NewLauncherPod(ResNetJob(), options).contains("hostAliases"));
}

TEST(WorkerPodIps, InIndexOrderOnlyWhenEveryWorkerHasOne) {
  DLJob job = ResNetJob();
  auto worker = [&](int64_t i, const std::string& ip) {
    json pod = {{"metadata", {{"name", WorkerName(job, i)}}}, {"status", json::object()}};
    if (!ip.empty()) pod["status"]["podIP"] = ip;
    return pod;
  };
  EXPECT_EQ(WorkerPodIps(job, {worker(1, "10.0.0.2"), worker(0, "10.0.0.1")}),
            (std::vector<std::string>{"10.0.0.1", "10.0.0.2"}));
  EXPECT_EQ(WorkerPodIps(job, {worker(0, "10.0.0.1"), worker(1, "")}), std::vector<std::string>{});
  EXPECT_EQ(WorkerPodIps(job, {worker(0, "10.0.0.1")}), std::vector<std::string>{});
}

TEST(TrainingPods, MountNoServiceAccountToken) {
  Result<json> worker = NewWorkerPod(ResNetJob(), 0, BuildOptions{});
  ASSERT_TRUE(worker.ok());
  EXPECT_EQ((*worker)["spec"]["automountServiceAccountToken"], false);
  EXPECT_EQ(NewLauncherPod(ResNetJob())["spec"]["automountServiceAccountToken"], false);
}

TEST(BuildOptions, TheGracePeriodIsConfigurable) {
  BuildOptions options;
  options.termination_grace_seconds = 600;
  Result<json> worker = NewWorkerPod(ResNetJob(), 0, options);
  ASSERT_TRUE(worker.ok());
  EXPECT_EQ((*worker)["spec"]["terminationGracePeriodSeconds"], 600);
  EXPECT_EQ(NewLauncherPod(ResNetJob(), options)["spec"]["terminationGracePeriodSeconds"], 600);
}

// spec.checkpoint, one row per kind of source: worker 0 (rank 0's pod) gets the volume and the
// read-write mount, every pod the environment, mpirun passes it on, dljob-train its flags.
struct CheckpointCase {
  const char* name;
  CheckpointSpec checkpoint;
  json volume;  // worker 0's volume "checkpoint", without its name
  json mount;   // worker 0's mount of it
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::string> flags;  // appended to the dljob-train command
};

class CheckpointBuild : public ::testing::TestWithParam<CheckpointCase> {};

TEST_P(CheckpointBuild, MountsItOnRankZerosPodAndTellsTheWorkload) {
  const CheckpointCase& c = GetParam();
  DLJob job = ResNetJob();
  job.spec.checkpoint = c.checkpoint;
  ApplyDefaults(job);
  Result<json> worker0 = NewWorkerPod(job, 0, BuildOptions{});
  Result<json> worker1 = NewWorkerPod(job, 1, BuildOptions{});
  ASSERT_TRUE(worker0.ok()) << worker0.status().message();
  ASSERT_TRUE(worker1.ok()) << worker1.status().message();
  json volume = c.volume;
  volume["name"] = "checkpoint";
  EXPECT_EQ(Find((*worker0)["spec"]["volumes"], "checkpoint"), volume);
  json mount = c.mount;
  mount["name"] = "checkpoint";
  EXPECT_EQ(Find((*worker0)["spec"]["containers"][0]["volumeMounts"], "checkpoint"), mount);
  EXPECT_EQ(Find((*worker1)["spec"]["volumes"], "checkpoint"), nullptr);
  EXPECT_EQ(Find((*worker1)["spec"]["containers"][0]["volumeMounts"], "checkpoint"), nullptr);

  json launcher = NewLauncherPod(job);
  for (const json* container :
       {&(*worker0)["spec"]["containers"][0], &(*worker1)["spec"]["containers"][0],
        &launcher["spec"]["containers"][0]}) {
    for (const auto& [name, value] : c.env) {
      EXPECT_EQ(Find((*container)["env"], name), json({{"name", name}, {"value", value}})) << name;
    }
  }
  std::vector<std::string> cmd = LauncherCommand(job);
  for (const auto& [name, value] : c.env) {
    bool forwarded = false;
    for (size_t i = 0; i + 1 < cmd.size(); ++i) forwarded |= cmd[i] == "-x" && cmd[i + 1] == name;
    EXPECT_TRUE(forwarded) << "mpirun -x " << name;
  }
  std::vector<std::string> tail(cmd.end() - static_cast<std::ptrdiff_t>(c.flags.size()), cmd.end());
  EXPECT_EQ(tail, c.flags);
  EXPECT_EQ(cmd.end()[-static_cast<std::ptrdiff_t>(c.flags.size()) - 1], "--use_fp16")
      << "the flags follow the job's own command";
}

const CheckpointCase kCheckpointCases[] = {
    {"PvcWithSubPath",
     {"pvc:ckpt-claim/resnet50", "/checkpoint", 500, std::nullopt, 2},
     json::parse(R"({"persistentVolumeClaim": {"claimName": "ckpt-claim", "readOnly": false}})"),
     json::parse(R"({"mountPath": "/checkpoint", "readOnly": false, "subPath": "resnet50"})"),
     {{"DLJOB_CHECKPOINT_DIR", "/checkpoint"},
      {"DLJOB_CHECKPOINT_EVERY_STEPS", "500"},
      {"DLJOB_CHECKPOINT_KEEP", "2"}},
     {"--checkpoint_dir=/checkpoint", "--checkpoint_every=500", "--checkpoint_keep=2"}},
    {"NasWithDefaults",
     {"nas://nas.example.com/export/ckpt", std::nullopt, std::nullopt, std::nullopt, std::nullopt},
     json::parse(R"({"nfs": {"server": "nas.example.com", "path": "/export/ckpt",
                             "readOnly": false}})"),
     json::parse(R"({"mountPath": "/dljob/checkpoint", "readOnly": false})"),
     {{"DLJOB_CHECKPOINT_DIR", "/dljob/checkpoint"},
      {"DLJOB_CHECKPOINT_EVERY_STEPS", "500"},
      {"DLJOB_CHECKPOINT_KEEP", "3"}},
     {"--checkpoint_dir=/dljob/checkpoint", "--checkpoint_every=500", "--checkpoint_keep=3"}},
    {"HostPathEverySeconds",
     {"hostPath:/mnt/ckpt", std::nullopt, std::nullopt, 900, 1},
     json::parse(R"({"hostPath": {"path": "/mnt/ckpt", "type": "DirectoryOrCreate"}})"),
     json::parse(R"({"mountPath": "/dljob/checkpoint", "readOnly": false})"),
     {{"DLJOB_CHECKPOINT_DIR", "/dljob/checkpoint"},
      {"DLJOB_CHECKPOINT_EVERY_SECONDS", "900"},
      {"DLJOB_CHECKPOINT_KEEP", "1"}},
     {"--checkpoint_dir=/dljob/checkpoint", "--checkpoint_every=0",
      "--checkpoint_every_seconds=900", "--checkpoint_keep=1"}},
};

INSTANTIATE_TEST_SUITE_P(Sources, CheckpointBuild, ::testing::ValuesIn(kCheckpointCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(CheckpointBuild, NoCheckpointNoVolumeNoVariables) {
  DLJob job = ResNetJob();
  Result<json> worker0 = NewWorkerPod(job, 0, BuildOptions{});
  ASSERT_TRUE(worker0.ok());
  EXPECT_EQ(Find((*worker0)["spec"]["volumes"], "checkpoint"), nullptr);
  EXPECT_EQ(Find((*worker0)["spec"]["containers"][0]["env"], "DLJOB_CHECKPOINT_DIR"), nullptr);
  EXPECT_EQ(LauncherCommand(job).back(), "--use_fp16");
}

TEST(CheckpointBuild, AnOssSourceNamesItsField) {
  DLJob job = ResNetJob();
  job.spec.checkpoint =
      CheckpointSpec{"oss://bucket/ckpt", std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  Result<json> worker0 = NewWorkerPod(job, 0, BuildOptions{});
  ASSERT_FALSE(worker0.ok());
  EXPECT_EQ(worker0.status().message().rfind("spec.checkpoint.source: ", 0), 0u);
}

TEST(NewSshSecret, HoldsTheKeyPairUnderFixedKeys) {
  json s = NewSshSecret(ResNetJob(), "PRIVATE", "ssh-rsa AAA");
  EXPECT_EQ(s["metadata"]["name"], "resnet50-ssh");
  EXPECT_EQ(s["stringData"]["id_rsa"], "PRIVATE");
  EXPECT_EQ(s["stringData"]["authorized_keys"], "ssh-rsa AAA");
}

}  // namespace
}  // namespace dljob::controller
