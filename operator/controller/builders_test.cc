#include "operator/controller/builders.h"

#include <gtest/gtest.h>

#include "jobs/codec.h"
#include "jobs/defaults.h"

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
  EXPECT_EQ(c["command"], json::parse(R"(["/usr/sbin/sshd", "-D", "-e", "-p", "2222"])"));
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
  EXPECT_EQ(pod["spec"]["containers"][0]["command"], json(want));
  EXPECT_FALSE(pod["spec"]["containers"][0].contains("resources")) << "the launcher needs no GPU";
  EXPECT_EQ(pod["spec"]["volumes"][0]["configMap"]["name"], "resnet50-config");
}

TEST(NewSshSecret, HoldsTheKeyPairUnderFixedKeys) {
  json s = NewSshSecret(ResNetJob(), "PRIVATE", "ssh-rsa AAA");
  EXPECT_EQ(s["metadata"]["name"], "resnet50-ssh");
  EXPECT_EQ(s["stringData"]["id_rsa"], "PRIVATE");
  EXPECT_EQ(s["stringData"]["authorized_keys"], "ssh-rsa AAA");
}

}  // namespace
}  // namespace dljob::controller
