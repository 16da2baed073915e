// The DLJob API (dljob.io/v1alpha1, kind DLJob): plain C++ value types.
//
// These structs are the truth for the API: the YAML/JSON codec (codec.h), defaulting
// (defaults.h), validation (validation.h), the CLI and the operator all work on them. Each
// struct's JSON names live in one field table (dljob_fields.h), from which the codec and the CRD
// schema are generated: a new field is a member here plus one row there. Fields that defaulting
// fills are std::optional so that a job written back before defaulting looks like what the user
// wrote, and one written after shows every effective value. Plain values: no behaviour, no
// invariants beyond what validation checks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace dljob {

inline constexpr char kApiGroup[] = "dljob.io";
inline constexpr char kApiVersion[] = "dljob.io/v1alpha1";
inline constexpr char kKind[] = "DLJob";

// The subset of Kubernetes ObjectMeta dljob reads. Everything else the API server sets
// (managedFields, finalizers, …) is kept verbatim in `other` so a read-modify-write loses nothing.
struct ObjectMeta {
  std::string name;
  // Used only when name is "": the prefix of the name the API server (or the local backend)
  // chooses, completed with random characters (generated_name.h).
  std::string generate_name;
  std::string namespace_;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::string uid;
  std::string resource_version;
  std::optional<int64_t> generation;
  std::string creation_timestamp;  // RFC 3339, set by the server (or the local runner)
  nlohmann::json other = nlohmann::json::object();

  bool operator==(const ObjectMeta&) const = default;
};

struct EnvVar {
  std::string name;
  std::string value;
  bool operator==(const EnvVar&) const = default;
};

// Kubernetes quantities per GPU ("8", "500m", "60Gi"); the worker pod requests gpusPerWorker
// times each.
struct ResourcesSpec {
  std::optional<std::string> cpu_per_gpu;
  std::optional<std::string> memory_per_gpu;
  bool operator==(const ResourcesSpec&) const = default;
};

// A node-local copy of a data volume, made before training starts.
struct CacheSpec {
  std::string medium;  // "LocalSSD"
  std::string path;    // absolute path on the node
  bool operator==(const CacheSpec&) const = default;
};

// One dataset mounted into every rank. `source` is a URI: nas://server/export/path,
// oss://bucket/prefix, pvc:claim[/subpath] or hostPath:/path (see volume_source.h).
struct DataVolume {
  std::string name;
  std::string source;
  std::string mount_path;
  std::optional<bool> read_only;
  std::optional<CacheSpec> cache;
  // oss:// only: the Secret (in the job's namespace) holding the endpoint and keys; unset, the
  // operator's --oss-secret. Credentials never appear in the spec itself.
  std::optional<std::string> secret_name;
  bool operator==(const DataVolume&) const = default;
};

// Where the job keeps its checkpoints: a directory mounted read-write into the pod that runs rank
// 0 (locally: resolved to a directory here) and handed to the workload as DLJOB_CHECKPOINT_*
// environment variables and, for dljob-train, its --checkpoint_* flags (checkpoint_env.h).
struct CheckpointSpec {
  std::string source;                     // nas://, pvc: or hostPath: as in spec.data; not oss://
  std::optional<std::string> mount_path;  // defaults to /dljob/checkpoint
  std::optional<int64_t> every_steps;     // save every N steps (500 when neither is set)
  std::optional<int64_t> every_seconds;   // save at least every N seconds
  std::optional<int64_t> keep;            // newest checkpoints kept (default 3)
  bool operator==(const CheckpointSpec&) const = default;
};

// An elastic job: data-parallel training that may run on any whole number of workers whose GPUs
// lie in [minGpus, maxGpus]. The queue starts it on what is free (at least minGpus), grows it
// when GPUs go idle and shrinks it instead of suspending it when another job needs room; the
// workload resumes from its checkpoint at the new world size. spec.gpus is then maxGpus.
struct ElasticSpec {
  std::optional<int64_t> min_gpus;  // required; a multiple of gpusPerWorker
  std::optional<int64_t> max_gpus;  // required; a multiple of gpusPerWorker, at least minGpus
  bool operator==(const ElasticSpec&) const = default;
};

struct MpiSpec {
  std::optional<std::string> implementation;  // "OpenMPI"
  std::optional<int64_t> slots_per_worker;    // ranks per worker; defaults to gpusPerWorker
  std::optional<int64_t> ssh_port;            // sshd port in worker pods
  bool operator==(const MpiSpec&) const = default;
};

struct RunPolicy {
  std::optional<int64_t> backoff_limit;              // whole-job restarts before Failed
  std::optional<int64_t> active_deadline_seconds;    // wall-clock limit from start
  std::optional<int64_t> progress_deadline_seconds;  // no new metric line for this long = stuck
  std::optional<int64_t> ttl_seconds_after_finished;
  std::optional<std::string> clean_pod_policy;  // All | Running | None
  std::optional<bool> suspend;
  bool operator==(const RunPolicy&) const = default;
};

struct Toleration {
  std::string key;
  std::string operator_;  // Exists | Equal
  std::string value;
  std::string effect;  // NoSchedule | PreferNoSchedule | NoExecute | "" (all)
  std::optional<int64_t> toleration_seconds;
  bool operator==(const Toleration&) const = default;
};

// Required node affinity, shaped as Kubernetes' pod spec.affinity so that what users know pastes
// in unchanged: affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
// .nodeSelectorTerms[].matchExpressions[]. A node passes when any term matches; a term matches
// when all its requirements do. Only required node affinity (no preferred terms, no pod
// affinity, no matchFields): the scheduler obeys it, and the job's pods carry it.
struct NodeSelectorRequirement {
  std::string key;                  // a node label key
  std::string operator_;            // In | NotIn | Exists | DoesNotExist | Gt | Lt
  std::vector<std::string> values;  // In/NotIn: 1+; Exists/DoesNotExist: none; Gt/Lt: 1 integer
  bool operator==(const NodeSelectorRequirement&) const = default;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  bool operator==(const NodeSelectorTerm&) const = default;
};

struct NodeSelector {
  std::vector<NodeSelectorTerm> node_selector_terms;  // at least one
  bool operator==(const NodeSelector&) const = default;
};

struct NodeAffinity {
  std::optional<NodeSelector> required_during_scheduling_ignored_during_execution;
  bool operator==(const NodeAffinity&) const = default;
};

struct Affinity {
  std::optional<NodeAffinity> node_affinity;
  bool operator==(const Affinity&) const = default;
};

struct SchedulingSpec {
  std::optional<std::string> queue;
  std::optional<int64_t> priority;
  std::optional<std::string> topology;  // Pack | Spread
  std::map<std::string, std::string> node_selector;
  std::vector<Toleration> tolerations;
  std::optional<Affinity> affinity;
  bool operator==(const SchedulingSpec&) const = default;
};

struct DLJobSpec {
  std::string image;
  std::vector<std::string> command;
  std::vector<EnvVar> env;
  std::string working_dir;
  std::optional<int64_t> gpus;  // total GPUs = MPI ranks; required (elastic: maxGpus)
  std::optional<int64_t> gpus_per_worker;
  ResourcesSpec resources;
  std::vector<DataVolume> data;
  std::optional<CheckpointSpec> checkpoint;
  std::optional<ElasticSpec> elastic;
  MpiSpec mpi;
  RunPolicy run_policy;
  SchedulingSpec scheduling;
  bool operator==(const DLJobSpec&) const = default;
};

enum class JobPhase {
  kUnset,  // no status yet
  kQueued,
  kScheduled,
  kRunning,
  kRestarting,
  kSucceeded,
  kFailed,
  kSuspended,
  kInterrupted,  // stopped by the user (Ctrl-C, dljob delete) before it finished
};

// "Queued", "Running", …; "" for kUnset.
const char* PhaseName(JobPhase phase);
// Every phase's name but kUnset's, in declaration order ("Queued", ..., "Interrupted").
std::vector<std::string_view> AllPhaseNames();
// Inverse of PhaseName; nullopt for an unknown name.
std::optional<JobPhase> ParsePhase(const std::string& name);
bool IsFinished(JobPhase phase);  // Succeeded, Failed or Interrupted

struct Condition {
  std::string type;    // Queued, Scheduled, Running, Restarting, Succeeded, Failed, …
  std::string status;  // "True" | "False" | "Unknown"
  std::string reason;  // CamelCase, machine-readable
  std::string message;
  std::string last_transition_time;  // RFC 3339
  bool operator==(const Condition&) const = default;
};

struct WorkerCounts {
  int64_t desired = 0;
  int64_t ready = 0;
  int64_t failed = 0;
  bool operator==(const WorkerCounts&) const = default;
};

struct PlacementEntry {
  std::string node;
  int64_t gpus = 0;
  bool operator==(const PlacementEntry&) const = default;
};

// The job's latest progress, aggregated over ranks from metric lines (metric_line.h).
struct Throughput {
  std::optional<double> images_per_sec;          // whole job, all ranks
  std::optional<double> per_gpu_images_per_sec;  // images_per_sec / ranks
  std::optional<int64_t> step;
  std::optional<int64_t> total_steps;
  std::optional<int64_t> epoch;
  std::optional<double> loss;
  std::optional<double> accuracy;  // latest evaluation accuracy, 0..1
  std::string updated_at;          // RFC 3339
  // Language models report words instead of images, and validation perplexity.
  std::optional<double> words_per_sec;          // whole job, all ranks
  std::optional<double> per_gpu_words_per_sec;  // words_per_sec / ranks
  std::optional<double> perplexity;             // latest validation perplexity
  bool operator==(const Throughput&) const = default;
};

// When the scheduler expects a waiting job to start, and what that rests on: the queue's own
// plan replayed with the running jobs' expected ends (scheduler/queue/start_estimate.h). An
// estimate, never a promise: the operator refreshes it as things change, and removes it once the
// job starts.
struct StartEstimateStatus {
  std::string time;        // RFC 3339; empty when unknown
  std::string basis;       // kStartEstimateBases: Now, Progress, TimeLimit, Unknown
  std::string assumption;  // "when train-a ends in about 12 min, from its steps and images/sec"
  bool operator==(const StartEstimateStatus&) const = default;
};

struct DLJobStatus {
  JobPhase phase = JobPhase::kUnset;
  std::vector<Condition> conditions;
  std::optional<WorkerCounts> workers;
  std::vector<PlacementEntry> placement;
  std::optional<int64_t> restarts;
  // Times the scheduler suspended the job to make room for another (it resumes from its
  // checkpoint when placed again; these are not restarts).
  std::optional<int64_t> preemptions;
  // Times the scheduler resized an elastic job (grew it onto idle GPUs or shrank it to make
  // room); not restarts.
  std::optional<int64_t> resizes;
  // GPU-seconds held in earlier runs (run time × GPUs, summed when a run ends by suspension,
  // preemption or restart): the service the las queue policy orders by.
  std::optional<int64_t> attained_gpu_seconds;
  // Times the job was restarted to apply a changed spec (jobs/spec_revision.h); not restarts.
  std::optional<int64_t> spec_restarts;
  // Times the job was restarted because a node under it was lost (operator/controller/
  // node_loss.h); not restarts: a disruption spends nothing of backoffLimit.
  std::optional<int64_t> disruption_restarts;
  // The metadata.generation this status was computed from.
  std::optional<int64_t> observed_generation;
  std::optional<Throughput> throughput;
  std::optional<StartEstimateStatus> start_estimate;  // while the job waits
  std::string start_time;                             // RFC 3339
  std::string completion_time;                        // RFC 3339
  bool operator==(const DLJobStatus&) const = default;
};

struct DLJob {
  std::string api_version = kApiVersion;
  std::string kind = kKind;
  ObjectMeta metadata;
  DLJobSpec spec;
  DLJobStatus status;
  bool operator==(const DLJob&) const = default;
};

}  // namespace dljob
