// The field tables (dljob_fields.h) against a DLJob with every field set: the job sets every
// row (checked by walking the tables), round-trips through YAML, JSON and the tree, encodes to a
// fixed document, rejects an unknown key in every object, and every row is in the CRD.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "jobs/codec.h"
#include "jobs/crd.h"
#include "jobs/dljob_fields.h"
#include "jobs/field_path.h"
#include "jobs/testing/field_table_walk.h"

namespace dljob {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
using testing::CollectStructs;
using testing::ExpectEverySet;
using testing::ExpectStructInCrd;
using testing::StructObject;

// When a field is added, set it here and in kEveryFieldYaml.
DLJob EveryFieldJob() {
  DLJob j;
  ObjectMeta& m = j.metadata;
  m.name = "resnet50";
  m.generate_name = "resnet50-";
  m.namespace_ = "team-a";
  m.labels = {{"team", "vision"}};
  m.annotations = {{"dljob.io/note", "nightly"}};
  m.uid = "0b6c";
  m.resource_version = "42";
  m.generation = 3;
  m.creation_timestamp = "2024-05-01T10:00:00Z";
  m.other = {{"finalizers", {"dljob.io/cleanup"}}};
  DLJobSpec& s = j.spec;
  s.image = "trainer:cuda";
  s.command = {"dljob-train", "--model=resnet50"};
  s.env = {EnvVar{.name = "NCCL_DEBUG", .value = "WARN"}};
  s.working_dir = "/work";
  s.gpus = 16;
  s.gpus_per_worker = 8;
  s.resources = {.cpu_per_gpu = "8", .memory_per_gpu = "60Gi"};
  s.data = {DataVolume{.name = "imagenet",
                       .source = "oss://datasets/imagenet",
                       .mount_path = "/data",
                       .read_only = true,
                       .cache = CacheSpec{.medium = "LocalSSD", .path = "/mnt/cache"},
                       .secret_name = "oss-keys"}};
  s.checkpoint = CheckpointSpec{.source = "pvc:ckpt-claim/resnet50",
                                .mount_path = "/checkpoint",
                                .every_steps = 500,
                                .every_seconds = 1800,
                                .keep = 2};
  s.elastic = ElasticSpec{.min_gpus = 8, .max_gpus = 16};
  s.mpi = {.implementation = "OpenMPI", .slots_per_worker = 8, .ssh_port = 2222};
  s.run_policy = {.backoff_limit = 2,
                  .active_deadline_seconds = 86400,
                  .progress_deadline_seconds = 600,
                  .ttl_seconds_after_finished = 3600,
                  .clean_pod_policy = "Running",
                  .suspend = false};
  NodeSelectorTerm term{.match_expressions = {{"gpu-memory", "Gt", {"40000"}}}};
  NodeAffinity node_affinity{.required_during_scheduling_ignored_during_execution =
                                 NodeSelector{{term}}};
  s.scheduling = {.queue = "research",
                  .priority = 5,
                  .topology = "Pack",
                  .node_selector = {{"gpu", "a100"}},
                  .tolerations = {Toleration{.key = "gpu",
                                             .operator_ = "Equal",
                                             .value = "yes",
                                             .effect = "NoExecute",
                                             .toleration_seconds = 30}},
                  .affinity = Affinity{.node_affinity = node_affinity}};
  DLJobStatus& st = j.status;
  st.phase = JobPhase::kRunning;
  st.conditions = {Condition{.type = "Running",
                             .status = "True",
                             .reason = "AllWorkersReady",
                             .message = "2 of 2 workers ready",
                             .last_transition_time = "2024-05-01T10:01:00Z"}};
  st.workers = WorkerCounts{.desired = 2, .ready = 2, .failed = 1};
  st.placement = {PlacementEntry{.node = "node-a", .gpus = 8}};
  st.restarts = 1;
  st.preemptions = 2;
  st.resizes = 3;
  st.spec_restarts = 1;
  st.disruption_restarts = 1;
  st.observed_generation = 3;
  st.attained_gpu_seconds = 7200;
  st.throughput = Throughput{.images_per_sec = 2950.5,
                             .per_gpu_images_per_sec = 184.25,
                             .step = 100,
                             .total_steps = 1000,
                             .epoch = 1,
                             .loss = 2.5,
                             .accuracy = 0.75,
                             .updated_at = "2024-05-01T10:02:00Z",
                             .words_per_sec = 8000.5,
                             .per_gpu_words_per_sec = 4000.25,
                             .perplexity = 143.5};
  st.start_estimate = StartEstimateStatus{
      .time = "2024-05-01T10:00:20Z",
      .basis = "Progress",
      .assumption = "when train-a ends in about 12 min, from its steps and images/sec"};
  st.start_time = "2024-05-01T10:00:30Z";
  st.completion_time = "2024-05-01T12:00:00Z";
  return j;
}

// EveryFieldJob() as EncodeYaml writes it: every key in table order.
constexpr char kEveryFieldYaml[] = R"(apiVersion: dljob.io/v1alpha1
kind: DLJob
metadata:
  name: resnet50
  generateName: resnet50-
  namespace: team-a
  labels:
    team: vision
  annotations:
    dljob.io/note: nightly
  uid: 0b6c
  resourceVersion: "42"
  generation: 3
  creationTimestamp: 2024-05-01T10:00:00Z
  finalizers:
    - dljob.io/cleanup
spec:
  image: trainer:cuda
  command:
    - dljob-train
    - --model=resnet50
  env:
    - name: NCCL_DEBUG
      value: WARN
  workingDir: /work
  gpus: 16
  gpusPerWorker: 8
  resources:
    cpuPerGpu: "8"
    memoryPerGpu: 60Gi
  data:
    - name: imagenet
      source: oss://datasets/imagenet
      mountPath: /data
      readOnly: true
      cache:
        medium: LocalSSD
        path: /mnt/cache
      secretName: oss-keys
  checkpoint:
    source: pvc:ckpt-claim/resnet50
    mountPath: /checkpoint
    everySteps: 500
    everySeconds: 1800
    keep: 2
  elastic:
    minGpus: 8
    maxGpus: 16
  mpi:
    implementation: OpenMPI
    slotsPerWorker: 8
    sshPort: 2222
  runPolicy:
    backoffLimit: 2
    activeDeadlineSeconds: 86400
    progressDeadlineSeconds: 600
    ttlSecondsAfterFinished: 3600
    cleanPodPolicy: Running
    suspend: false
  scheduling:
    queue: research
    priority: 5
    topology: Pack
    nodeSelector:
      gpu: a100
    tolerations:
      - key: gpu
        operator: Equal
        value: yes
        effect: NoExecute
        tolerationSeconds: 30
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
            - matchExpressions:
                - key: gpu-memory
                  operator: Gt
                  values:
                    - "40000"
status:
  phase: Running
  conditions:
    - type: Running
      status: "True"
      reason: AllWorkersReady
      message: "2 of 2 workers ready"
      lastTransitionTime: 2024-05-01T10:01:00Z
  workers:
    desired: 2
    ready: 2
    failed: 1
  placement:
    - node: node-a
      gpus: 8
  restarts: 1
  preemptions: 2
  resizes: 3
  attainedGpuSeconds: 7200
  specRestarts: 1
  disruptionRestarts: 1
  observedGeneration: 3
  throughput:
    imagesPerSec: 2950.5
    perGpuImagesPerSec: 184.25
    step: 100
    totalSteps: 1000
    epoch: 1
    loss: 2.5
    accuracy: 0.75
    updatedAt: 2024-05-01T10:02:00Z
    wordsPerSec: 8000.5
    perGpuWordsPerSec: 4000.25
    perplexity: 143.5
  startEstimate:
    time: 2024-05-01T10:00:20Z
    basis: Progress
    assumption: "when train-a ends in about 12 min, from its steps and images/sec"
  startTime: 2024-05-01T10:00:30Z
  completionTime: 2024-05-01T12:00:00Z
)";

// --- Tests ------------------------------------------------------------------------------------

TEST(FieldTable, EveryFieldJobSetsEveryRow) { ExpectEverySet(EveryFieldJob(), ""); }

TEST(FieldTable, EveryFieldRoundTripsThroughYamlJsonAndTheTree) {
  const DLJob job = EveryFieldJob();
  DecodeResult yaml = DecodeYaml(EncodeYaml(job));
  ASSERT_TRUE(yaml.ok()) << JoinFieldErrors(yaml.errors);
  EXPECT_EQ(yaml.job, job);
  DecodeResult from_json = DecodeJson(EncodeJson(job));
  ASSERT_TRUE(from_json.ok()) << JoinFieldErrors(from_json.errors);
  EXPECT_EQ(from_json.job, job);
  DecodeResult tree = DecodeTree(EncodeTree(job));
  ASSERT_TRUE(tree.ok()) << JoinFieldErrors(tree.errors);
  EXPECT_EQ(tree.job, job);
}

TEST(FieldTable, EveryFieldDocumentDecodesAndEncodesBackUnchanged) {
  EXPECT_EQ(EncodeYaml(EveryFieldJob()), kEveryFieldYaml);
  DecodeResult decoded = DecodeYaml(kEveryFieldYaml);
  ASSERT_TRUE(decoded.ok()) << JoinFieldErrors(decoded.errors);
  EXPECT_EQ(decoded.job, EveryFieldJob());
  EXPECT_EQ(EncodeYaml(decoded.job), kEveryFieldYaml);
  std::string json_text = EncodeJson(decoded.job);
  EXPECT_EQ(EncodeJson(DecodeJson(json_text).job), json_text);
}

TEST(FieldTable, EveryObjectReportsAnUnknownKeyAtItsPath) {
  const json tree = EncodeTree(EveryFieldJob());
  std::vector<StructObject> objects;
  CollectStructs<DLJob>(tree, json::json_pointer(), "", objects);
  ASSERT_EQ(objects.size(), 24u);  // the job, metadata, spec and status, and 20 nested
  for (const StructObject& o : objects) {
    SCOPED_TRACE(o.path);
    json bad = tree;
    bad[o.at]["zzzUnknown"] = 1;
    DecodeResult r = DecodeTree(bad);
    if (o.keeps_unknown_keys) {
      EXPECT_TRUE(r.ok()) << JoinFieldErrors(r.errors);
      EXPECT_EQ(r.job.metadata.other["zzzUnknown"], 1);
    } else {
      ASSERT_EQ(r.errors.size(), 1u) << JoinFieldErrors(r.errors);
      EXPECT_EQ(r.errors[0].path, JoinField(o.path, "zzzUnknown"));
      EXPECT_EQ(r.errors[0].reason, "unknown field");
    }
  }
}

TEST(FieldTable, EveryRowIsInTheCrdWithItsType) {
  ojson crd = DLJobCrd();
  ExpectStructInCrd<DLJob>(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"], "");
}

TEST(FieldTable, FieldNamesComeFromTheRows) {
  static_assert(FieldName(&RunPolicy::backoff_limit) == "backoffLimit");
  static_assert(FieldName(&Toleration::operator_) == "operator");
  EXPECT_EQ(FieldNames<MpiSpec>(),
            (std::vector<std::string_view>{"implementation", "slotsPerWorker", "sshPort"}));
  EXPECT_TRUE(IsFieldName<ObjectMeta>("resourceVersion"));
  EXPECT_FALSE(IsFieldName<ObjectMeta>("other"));
}

}  // namespace
}  // namespace dljob
