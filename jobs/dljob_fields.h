// The DLJob API's field tables (field_table.h): for every struct of dljob_types.h, each field's
// JSON name and what the CRD says about it. The codec (decode, encode, unknown-field check) and
// the CRD schema are generated from these rows, in this order; validation names its paths and
// allowed values from here too.
//
// To add a field: add the member to dljob_types.h and one row here (the build fails until the
// row exists), then a value for it in field_table_test.cc's every-field job.
//
// Constant tables; thread-safe.
#pragma once

#include <string_view>
#include <tuple>

#include "jobs/dljob_types.h"
#include "jobs/field_table.h"

namespace dljob {

// Allowed values of the string fields that take one of a fixed set (CRD enums).
inline constexpr std::string_view kCacheMedia[] = {"LocalSSD"};
inline constexpr std::string_view kMpiImplementations[] = {"OpenMPI"};
inline constexpr std::string_view kCleanPodPolicies[] = {"All", "Running", "None"};
inline constexpr std::string_view kTopologies[] = {"Pack", "Spread"};
inline constexpr std::string_view kTolerationOperators[] = {"Exists", "Equal"};
inline constexpr std::string_view kTaintEffects[] = {"", "NoSchedule", "PreferNoSchedule",
                                                     "NoExecute"};
inline constexpr std::string_view kNodeSelectorOperators[] = {"In",           "NotIn", "Exists",
                                                              "DoesNotExist", "Gt",    "Lt"};
inline constexpr std::string_view kConditionStatuses[] = {"True", "False", "Unknown"};
// What a start estimate rests on, firmest first (scheduler/queue/start_estimate.h's EstimateBasis,
// in its order, names its values from here).
inline constexpr std::string_view kStartEstimateBases[] = {"Now", "Progress", "TimeLimit",
                                                           "Unknown"};

template <>
struct FieldTable<ObjectMeta> {
  using T = ObjectMeta;
  static constexpr std::tuple kFields{
      Field("name", &T::name),
      Field("generateName", &T::generate_name),
      Field("namespace", &T::namespace_),
      Field("labels", &T::labels),
      Field("annotations", &T::annotations),
      Field("uid", &T::uid),
      Field("resourceVersion", &T::resource_version),
      Field("generation", &T::generation),
      Field("creationTimestamp", &T::creation_timestamp),
  };
  static constexpr auto kRest = &T::other;
};

template <>
struct FieldTable<EnvVar> {
  using T = EnvVar;
  static constexpr std::tuple kFields{Field("name", &T::name), Field("value", &T::value)};
};

template <>
struct FieldTable<ResourcesSpec> {
  using T = ResourcesSpec;
  static constexpr std::tuple kFields{
      Field("cpuPerGpu", &T::cpu_per_gpu, Info().Quantity()),
      Field("memoryPerGpu", &T::memory_per_gpu, Info().Quantity()),
  };
};

template <>
struct FieldTable<CacheSpec> {
  using T = CacheSpec;
  static constexpr std::tuple kFields{
      Field("medium", &T::medium,
            Info().Describe("Where the node-local copy lives.").OneOf(kCacheMedia)),
      Field("path", &T::path),
  };
};

template <>
struct FieldTable<DataVolume> {
  using T = DataVolume;
  static constexpr std::tuple kFields{
      Field("name", &T::name),
      Field("source", &T::source,
            Info().Describe("nas://server/export/path, oss://bucket/prefix, pvc:claim[/subpath] or "
                            "hostPath:/path.")),
      Field("mountPath", &T::mount_path),
      Field("readOnly", &T::read_only),
      Field("cache", &T::cache),
      Field("secretName", &T::secret_name,
            Info().Describe(
                "oss:// only: Secret with endpoint, akId and akSecret (default: the operator's).")),
  };
};

template <>
struct FieldTable<CheckpointSpec> {
  using T = CheckpointSpec;
  static constexpr std::tuple kFields{
      Field("source", &T::source,
            Info()
                .Describe("Where checkpoints are kept: nas://server/export/path, "
                          "pvc:claim[/subpath] or hostPath:/path (not oss://).")
                .Required()),
      Field("mountPath", &T::mount_path,
            Info().Describe("Where rank 0's pod sees it (default /dljob/checkpoint).")),
      Field("everySteps", &T::every_steps,
            Info()
                .Describe("Save every N steps (default 500 when everySeconds is unset).")
                .Minimum(1)),
      Field("everySeconds", &T::every_seconds,
            Info().Describe("Save at least every N seconds.").Minimum(1)),
      Field("keep", &T::keep, Info().Describe("Newest checkpoints kept (default 3).").Minimum(1)),
  };
};

template <>
struct FieldTable<ElasticSpec> {
  using T = ElasticSpec;
  static constexpr std::tuple kFields{
      Field("minGpus", &T::min_gpus,
            Info()
                .Describe("The fewest GPUs the job runs on (a multiple of gpusPerWorker).")
                .Minimum(1)
                .Required()),
      Field("maxGpus", &T::max_gpus,
            Info()
                .Describe("The most GPUs the job runs on (a multiple of gpusPerWorker); "
                          "spec.gpus defaults to it and, when set, must equal it.")
                .Minimum(1)
                .Required()),
  };
};

template <>
struct FieldTable<MpiSpec> {
  using T = MpiSpec;
  static constexpr std::tuple kFields{
      Field("implementation", &T::implementation, Info().OneOf(kMpiImplementations)),
      Field("slotsPerWorker", &T::slots_per_worker,
            Info().Describe("MPI ranks per worker.").Minimum(1)),
      Field("sshPort", &T::ssh_port, Info().Describe("sshd port of worker pods.").Minimum(1)),
  };
};

template <>
struct FieldTable<RunPolicy> {
  using T = RunPolicy;
  static constexpr std::tuple kFields{
      Field("backoffLimit", &T::backoff_limit,
            Info().Describe("Whole-job restarts before the job fails.").Minimum(0)),
      Field("activeDeadlineSeconds", &T::active_deadline_seconds, Info().Minimum(1)),
      Field("progressDeadlineSeconds", &T::progress_deadline_seconds,
            Info()
                .Describe("Seconds without a new metric line before the job counts as stuck.")
                .Minimum(1)),
      Field("ttlSecondsAfterFinished", &T::ttl_seconds_after_finished, Info().Minimum(0)),
      Field("cleanPodPolicy", &T::clean_pod_policy, Info().OneOf(kCleanPodPolicies)),
      Field("suspend", &T::suspend),
  };
};

template <>
struct FieldTable<Toleration> {
  using T = Toleration;
  static constexpr std::tuple kFields{
      Field("key", &T::key),
      Field("operator", &T::operator_, Info().OneOf(kTolerationOperators)),
      Field("value", &T::value),
      Field("effect", &T::effect, Info().OneOf(kTaintEffects)),
      Field("tolerationSeconds", &T::toleration_seconds),
  };
};

template <>
struct FieldTable<NodeSelectorRequirement> {
  using T = NodeSelectorRequirement;
  static constexpr std::tuple kFields{
      Field("key", &T::key, Info().Describe("A node label key.").Required()),
      Field("operator", &T::operator_, Info().OneOf(kNodeSelectorOperators).Required()),
      Field("values", &T::values,
            Info().Describe("In/NotIn: one or more; Exists/DoesNotExist: none; Gt/Lt: one "
                            "integer.")),
  };
};

template <>
struct FieldTable<NodeSelectorTerm> {
  using T = NodeSelectorTerm;
  static constexpr std::tuple kFields{
      Field("matchExpressions", &T::match_expressions,
            Info().Describe("Every requirement must match (a term without any matches no node).")),
  };
};

template <>
struct FieldTable<NodeSelector> {
  using T = NodeSelector;
  static constexpr std::tuple kFields{
      Field("nodeSelectorTerms", &T::node_selector_terms,
            Info().Describe("A node passes when any term matches.").Required()),
  };
};

template <>
struct FieldTable<NodeAffinity> {
  using T = NodeAffinity;
  static constexpr std::tuple kFields{
      Field("requiredDuringSchedulingIgnoredDuringExecution",
            &T::required_during_scheduling_ignored_during_execution),
  };
};

template <>
struct FieldTable<Affinity> {
  using T = Affinity;
  static constexpr std::tuple kFields{Field("nodeAffinity", &T::node_affinity)};
};

template <>
struct FieldTable<SchedulingSpec> {
  using T = SchedulingSpec;
  static constexpr std::tuple kFields{
      Field("queue", &T::queue),
      Field("priority", &T::priority),
      Field("topology", &T::topology, Info().OneOf(kTopologies)),
      Field("nodeSelector", &T::node_selector),
      Field("tolerations", &T::tolerations),
      Field("affinity", &T::affinity,
            Info().Describe("Required node affinity, as in a pod's spec.affinity (nodeAffinity "
                            "only); the scheduler and the job's pods obey it.")),
  };
};

template <>
struct FieldTable<DLJobSpec> {
  using T = DLJobSpec;
  static constexpr std::tuple kFields{
      Field("image", &T::image,
            Info().Describe("Container image of the launcher and workers.").Required()),
      Field("command", &T::command,
            Info().Describe("The training command; mpirun runs it once per rank.").Required()),
      Field("env", &T::env),
      Field("workingDir", &T::working_dir),
      Field("gpus", &T::gpus,
            Info()
                .Describe("Total GPUs, one MPI rank each. Required unless spec.elastic is set "
                          "(then it defaults to, and must equal, elastic.maxGpus).")
                .Minimum(1)),
      Field("gpusPerWorker", &T::gpus_per_worker,
            Info().Describe("GPUs per worker pod (default: a whole 8-GPU node).").Minimum(1)),
      Field("resources", &T::resources),
      Field("data", &T::data),
      Field("checkpoint", &T::checkpoint,
            Info().Describe("Checkpoints: a read-write volume for rank 0 and how often to save.")),
      Field("elastic", &T::elastic,
            Info().Describe("Elastic data parallelism: the job runs on between minGpus and "
                            "maxGpus, growing onto idle GPUs and shrinking instead of being "
                            "suspended.")),
      Field("mpi", &T::mpi),
      Field("runPolicy", &T::run_policy),
      Field("scheduling", &T::scheduling),
  };
};

template <>
struct FieldTable<Condition> {
  using T = Condition;
  static constexpr std::tuple kFields{
      Field("type", &T::type),
      Field("status", &T::status, Info().OneOf(kConditionStatuses)),
      Field("reason", &T::reason),
      Field("message", &T::message),
      Field("lastTransitionTime", &T::last_transition_time),
  };
};

template <>
struct FieldTable<WorkerCounts> {
  using T = WorkerCounts;
  static constexpr std::tuple kFields{Field("desired", &T::desired), Field("ready", &T::ready),
                                      Field("failed", &T::failed)};
};

template <>
struct FieldTable<PlacementEntry> {
  using T = PlacementEntry;
  static constexpr std::tuple kFields{Field("node", &T::node), Field("gpus", &T::gpus)};
};

template <>
struct FieldTable<Throughput> {
  using T = Throughput;
  static constexpr std::tuple kFields{
      Field("imagesPerSec", &T::images_per_sec),
      Field("perGpuImagesPerSec", &T::per_gpu_images_per_sec),
      Field("step", &T::step),
      Field("totalSteps", &T::total_steps),
      Field("epoch", &T::epoch),
      Field("loss", &T::loss),
      Field("accuracy", &T::accuracy),
      Field("updatedAt", &T::updated_at),
      Field("wordsPerSec", &T::words_per_sec),
      Field("perGpuWordsPerSec", &T::per_gpu_words_per_sec),
      Field("perplexity", &T::perplexity),
  };
};

template <>
struct FieldTable<StartEstimateStatus> {
  using T = StartEstimateStatus;
  static constexpr std::tuple kFields{
      Field("time", &T::time,
            Info().Describe("When the job is expected to start (RFC 3339); unset when unknown.")),
      Field("basis", &T::basis,
            Info()
                .Describe("What the estimate rests on: Now (it starts now), Progress (running "
                          "jobs' steps and images/sec), TimeLimit (a job running to its "
                          "activeDeadlineSeconds), Unknown.")
                .OneOf(kStartEstimateBases)),
      Field("assumption", &T::assumption,
            Info().Describe("The assumption, in words: what must end (or happen) first.")),
  };
};

// status.phase is a JobPhase: written as PhaseName, and its CRD enum is every phase's name.
template <>
struct FieldTable<DLJobStatus> {
  using T = DLJobStatus;
  static constexpr std::tuple kFields{
      Field("phase", &T::phase),
      Field("conditions", &T::conditions),
      Field("workers", &T::workers),
      Field("placement", &T::placement),
      Field("restarts", &T::restarts),
      Field("preemptions", &T::preemptions,
            Info().Describe("Times the scheduler suspended the job for another; not restarts.")),
      Field("resizes", &T::resizes,
            Info().Describe("Times the scheduler resized the elastic job; not restarts.")),
      Field("attainedGpuSeconds", &T::attained_gpu_seconds,
            Info().Describe("GPU-seconds held in runs that have ended.")),
      Field("specRestarts", &T::spec_restarts,
            Info().Describe("Times the job was restarted to apply a changed spec; not restarts.")),
      Field("disruptionRestarts", &T::disruption_restarts,
            Info().Describe("Times the job was restarted because a node under it was lost or "
                            "cordoned; not restarts.")),
      Field("observedGeneration", &T::observed_generation,
            Info().Describe("The metadata.generation this status was computed from.")),
      Field("throughput", &T::throughput,
            Info().Describe("Latest progress, aggregated over ranks from metric lines.")),
      Field("startEstimate", &T::start_estimate,
            Info().Describe("While the job waits: when the scheduler expects it to start and "
                            "what that assumes. An estimate, never a promise.")),
      Field("startTime", &T::start_time),
      Field("completionTime", &T::completion_time),
  };
};

template <>
struct FieldTable<DLJob> {
  using T = DLJob;
  static constexpr std::tuple kFields{
      Field("apiVersion", &T::api_version),
      Field("kind", &T::kind),
      Field("metadata", &T::metadata),
      Field("spec", &T::spec, Info().Describe("What to run and how.")),
      Field("status", &T::status),
  };
};

}  // namespace dljob
