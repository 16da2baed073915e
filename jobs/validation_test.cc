#include "jobs/validation.h"

#include <functional>

#include <gtest/gtest.h>

#include "jobs/child_names.h"
#include "jobs/codec.h"
#include "jobs/defaults.h"
#include "jobs/field_path.h"
#include "jobs/generated_name.h"

namespace dljob {
namespace {

// A valid, defaulted job that each case breaks in one way.
// A read-only volume of claim "c".
DataVolume PvcVolume(const std::string& name, const std::string& mount_path) {
  DataVolume d;
  d.name = name;
  d.source = "pvc:c";
  d.mount_path = mount_path;
  d.read_only = true;
  return d;
}

DLJob ValidJob() {
  DLJob j;
  j.metadata.name = "resnet50";
  j.spec.image = "registry.example.com/trainer:cuda";
  j.spec.command = {"dljob-train", "--model=resnet50"};
  j.spec.gpus = 16;
  j.spec.gpus_per_worker = 8;
  j.spec.data.push_back(DataVolume{.name = "imagenet",
                                   .source = "oss://datasets/imagenet",
                                   .mount_path = "/data/imagenet",
                                   .read_only = true,
                                   .cache = CacheSpec{"LocalSSD", "/mnt/nvme/cache"},
                                   .secret_name = std::nullopt});
  j.spec.checkpoint = CheckpointSpec{"pvc:ckpt-claim/resnet50", std::nullopt, std::nullopt,
                                     std::nullopt, std::nullopt};
  ApplyDefaults(j);
  return j;
}

// spec.scheduling.affinity requiring `terms` (nodeAffinity, required during scheduling).
Affinity Required(std::vector<NodeSelectorTerm> terms) {
  return Affinity{.node_affinity =
                      NodeAffinity{.required_during_scheduling_ignored_during_execution =
                                       NodeSelector{.node_selector_terms = std::move(terms)}}};
}

// A job whose affinity has one term with one requirement, `r`.
void RequireOne(DLJob& j, NodeSelectorRequirement r) {
  j.spec.scheduling.affinity = Required({NodeSelectorTerm{.match_expressions = {std::move(r)}}});
}

constexpr char kTerms[] =
    "spec.scheduling.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
    "nodeSelectorTerms";
#define REQ0(field)                                                                       \
  "spec.scheduling.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution." \
  "nodeSelectorTerms[0].matchExpressions[0]." field

TEST(Validation, ValidJobHasNoErrors) { EXPECT_EQ(JoinFieldErrors(Validate(ValidJob())), ""); }

struct Case {
  const char* name;
  std::function<void(DLJob&)> mutate;
  const char* path;
  const char* phrase;  // a key part of the reason
};

class ValidationRule : public ::testing::TestWithParam<Case> {};

TEST_P(ValidationRule, ReportsPathAndReason) {
  DLJob j = ValidJob();
  GetParam().mutate(j);
  FieldErrors errors = Validate(j);
  ASSERT_EQ(errors.size(), 1u) << JoinFieldErrors(errors);
  EXPECT_EQ(errors[0].path, GetParam().path);
  EXPECT_NE(errors[0].reason.find(GetParam().phrase), std::string::npos) << errors[0].reason;
}

const Case kCases[] = {
    {"ApiVersion", [](DLJob& j) { j.api_version = "v1"; }, "apiVersion", "dljob.io/v1alpha1"},
    {"Kind", [](DLJob& j) { j.kind = "Job"; }, "kind", "must be DLJob"},
    {"NameRequired", [](DLJob& j) { j.metadata.name = ""; }, "metadata.name",
     "required, or metadata.generateName"},
    {"GenerateNameUpper",
     [](DLJob& j) {
       j.metadata.name = "";
       j.metadata.generate_name = "ResNet-";
     },
     "metadata.generateName", "must be the start of a DNS-1035 label"},
    {"GenerateNameStartsWithADigit",
     [](DLJob& j) {
       j.metadata.name = "";
       j.metadata.generate_name = "3d-";
     },
     "metadata.generateName", "got \"3d-\""},
    {"GenerateNameLong",
     [](DLJob& j) {
       j.metadata.name = "";
       j.metadata.generate_name = std::string(49, 'a') + "-";  // 50: with 5 more, 55
     },
     "metadata.generateName",
     "must be at most 49 characters for a job of 2 workers, got 50: the name made from it has 5 "
     "more, and a job's name may have 54"},
    {"NameUpper", [](DLJob& j) { j.metadata.name = "ResNet"; }, "metadata.name", "DNS-1035 label"},
    {"NameStartsWithADigit", [](DLJob& j) { j.metadata.name = "1abc"; }, "metadata.name",
     "the job's Service \"1abc-worker\" must be one"},
    {"NameLong", [](DLJob& j) { j.metadata.name = std::string(55, 'a'); }, "metadata.name",
     "must be at most 54 characters for a job of 2 workers, got 55"},
    {"NameLongForManyWorkers",
     [](DLJob& j) {
       j.metadata.name = std::string(53, 'a') + "b";  // 54 characters
       j.spec.gpus = 800;                             // 100 workers: "-worker-99"
     },
     "metadata.name", "must be at most 53 characters for a job of 100 workers, got 54"},
    {"Namespace", [](DLJob& j) { j.metadata.namespace_ = "team_a"; }, "metadata.namespace",
     "DNS label"},
    {"LabelKey", [](DLJob& j) { j.metadata.labels["-bad"] = "x"; }, "metadata.labels[-bad]",
     "name must be"},
    {"LabelValue", [](DLJob& j) { j.metadata.labels["team"] = "a b"; }, "metadata.labels.team",
     "value must be"},
    {"AnnotationKey", [](DLJob& j) { j.metadata.annotations["Bad_/x"] = "any value"; },
     "metadata.annotations[Bad_/x]", "prefix must be a DNS subdomain"},
    {"ImageRequired", [](DLJob& j) { j.spec.image = ""; }, "spec.image", "required"},
    {"ImageSpace", [](DLJob& j) { j.spec.image = "a b"; }, "spec.image", "whitespace"},
    {"CommandRequired", [](DLJob& j) { j.spec.command.clear(); }, "spec.command", "required"},
    {"CommandEmpty", [](DLJob& j) { j.spec.command[0] = ""; }, "spec.command[0]", "empty"},
    {"EnvName",
     [](DLJob& j) {
       j.spec.env = {{"1X", "v"}};
     },
     "spec.env[0].name", "not starting"},
    {"EnvEquals",
     [](DLJob& j) {
       j.spec.env = {{"A=B", "v"}};
     },
     "spec.env[0].name", "letters"},
    {"EnvDuplicate",
     [](DLJob& j) {
       j.spec.env = {{"A", "1"}, {"A", "2"}};
     },
     "spec.env[1].name", "duplicate"},
    {"WorkingDir", [](DLJob& j) { j.spec.working_dir = "work"; }, "spec.workingDir", "absolute"},
    {"GpusRequired", [](DLJob& j) { j.spec.gpus.reset(); }, "spec.gpus", "required"},
    {"GpusNegative", [](DLJob& j) { j.spec.gpus = -2; }, "spec.gpus",
     "must be a positive integer, got -2"},
    {"GpusTooMany", [](DLJob& j) { j.spec.gpus = kMaxGpus + 8; }, "spec.gpus", "at most 16384"},
    {"PerWorkerZero", [](DLJob& j) { j.spec.gpus_per_worker = 0; }, "spec.gpusPerWorker",
     "positive"},
    {"PerWorkerTooMany",
     [](DLJob& j) {
       j.spec.gpus = 4;
       j.spec.gpus_per_worker = 8;
     },
     "spec.gpusPerWorker", "must not exceed spec.gpus (4)"},
    {"PerWorkerDivides", [](DLJob& j) { j.spec.gpus = 12; }, "spec.gpusPerWorker",
     "whole workers, got 8 (12/8 is not a whole number of workers); try 6 or 12"},
    {"CpuQuantity", [](DLJob& j) { j.spec.resources.cpu_per_gpu = "eight"; },
     "spec.resources.cpuPerGpu", "quantity"},
    {"MemoryZero", [](DLJob& j) { j.spec.resources.memory_per_gpu = "0Gi"; },
     "spec.resources.memoryPerGpu", "positive"},
    {"DataName", [](DLJob& j) { j.spec.data[0].name = "Image_Net"; }, "spec.data[0].name",
     "DNS label"},
    {"DataNameDuplicate", [](DLJob& j) { j.spec.data.push_back(PvcVolume("imagenet", "/other")); },
     "spec.data[1].name", "duplicate"},
    {"DataSource", [](DLJob& j) { j.spec.data[0].source = "s4://b/x"; }, "spec.data[0].source",
     "unknown scheme \"s4\" (expected nas://, oss://, pvc:, hostPath:)"},
    {"MountRelative", [](DLJob& j) { j.spec.data[0].mount_path = "data"; },
     "spec.data[0].mountPath", "absolute"},
    {"MountRoot", [](DLJob& j) { j.spec.data[0].mount_path = "/"; }, "spec.data[0].mountPath",
     "must not be \"/\""},
    {"MountDuplicate", [](DLJob& j) { j.spec.data.push_back(PvcVolume("b", "/data/imagenet")); },
     "spec.data[1].mountPath", "duplicate mountPath"},
    {"MountNested", [](DLJob& j) { j.spec.data.push_back(PvcVolume("b", "/data/imagenet/val")); },
     "spec.data[1].mountPath", "nested"},
    {"SecretOnNas",
     [](DLJob& j) {
       j.spec.data[0].source = "nas://nas.example.com/export/imagenet";
       j.spec.data[0].secret_name = "oss-keys";
     },
     "spec.data[0].secretName", "only oss:// sources take a Secret"},
    {"SecretName", [](DLJob& j) { j.spec.data[0].secret_name = "Team_Keys"; },
     "spec.data[0].secretName", "lowercase"},
    {"CacheMedium", [](DLJob& j) { j.spec.data[0].cache->medium = "RAM"; },
     "spec.data[0].cache.medium", "must be LocalSSD"},
    {"CachePath", [](DLJob& j) { j.spec.data[0].cache->path = "cache"; }, "spec.data[0].cache.path",
     "absolute"},
    {"CheckpointSourceRequired", [](DLJob& j) { j.spec.checkpoint->source = ""; },
     "spec.checkpoint.source", "required"},
    {"CheckpointSourceScheme", [](DLJob& j) { j.spec.checkpoint->source = "s3://b/x"; },
     "spec.checkpoint.source", "unknown scheme \"s3\""},
    {"CheckpointOnOss", [](DLJob& j) { j.spec.checkpoint->source = "oss://bucket/ckpt"; },
     "spec.checkpoint.source", "oss:// cannot hold checkpoints"},
    {"CheckpointMountRelative", [](DLJob& j) { j.spec.checkpoint->mount_path = "ckpt"; },
     "spec.checkpoint.mountPath", "absolute"},
    {"CheckpointMountRoot", [](DLJob& j) { j.spec.checkpoint->mount_path = "/"; },
     "spec.checkpoint.mountPath", "must not be \"/\""},
    {"CheckpointMountOnData", [](DLJob& j) { j.spec.checkpoint->mount_path = "/data/imagenet"; },
     "spec.checkpoint.mountPath", "overlaps spec.data[0].mountPath \"/data/imagenet\""},
    {"CheckpointMountInData",
     [](DLJob& j) { j.spec.checkpoint->mount_path = "/data/imagenet/ckpt"; },
     "spec.checkpoint.mountPath", "checkpoints need a directory of their own"},
    {"CheckpointMountAboveData", [](DLJob& j) { j.spec.checkpoint->mount_path = "/data"; },
     "spec.checkpoint.mountPath", "overlaps"},
    {"CheckpointEverySteps", [](DLJob& j) { j.spec.checkpoint->every_steps = 0; },
     "spec.checkpoint.everySteps", "a positive number of steps, got 0"},
    {"CheckpointEverySeconds", [](DLJob& j) { j.spec.checkpoint->every_seconds = -30; },
     "spec.checkpoint.everySeconds", "a positive number of seconds, got -30"},
    {"CheckpointKeep", [](DLJob& j) { j.spec.checkpoint->keep = 0; }, "spec.checkpoint.keep",
     "a positive number of checkpoints"},
    {"ElasticMinRequired",
     [](DLJob& j) {
       j.spec.elastic = ElasticSpec{std::nullopt, 16};
     },
     "spec.elastic.minGpus", "required: the fewest GPUs the job may run on"},
    {"ElasticMaxRequired",
     [](DLJob& j) {
       j.spec.elastic = ElasticSpec{8, std::nullopt};
     },
     "spec.elastic.maxGpus", "required: the most GPUs the job may run on"},
    {"ElasticMinZero",
     [](DLJob& j) {
       j.spec.elastic = ElasticSpec{0, 16};
     },
     "spec.elastic.minGpus", "must be from 1 to 16384, got 0"},
    {"ElasticMinWholeWorkers",
     [](DLJob& j) {
       j.spec.gpus_per_worker = 4;
       j.spec.mpi.slots_per_worker = 4;
       j.spec.elastic = ElasticSpec{6, 16};
     },
     "spec.elastic.minGpus", "must be a multiple of spec.gpusPerWorker (4), got 6"},
    {"ElasticMaxWholeWorkers",
     [](DLJob& j) {
       j.spec.elastic = ElasticSpec{8, 12};
     },
     "spec.elastic.maxGpus", "must be a multiple of spec.gpusPerWorker (8), got 12"},
    {"ElasticMinAboveMax",
     [](DLJob& j) {
       j.spec.gpus = 8;
       j.spec.elastic = ElasticSpec{16, 8};
     },
     "spec.elastic.minGpus", "must not exceed spec.elastic.maxGpus (8), got 16"},
    {"ElasticGpusNotMax",
     [](DLJob& j) {
       j.spec.elastic = ElasticSpec{8, 32};
     },
     "spec.gpus",
     "must equal spec.elastic.maxGpus (32) when spec.elastic is set (it is the most the job asks "
     "for), got 16; or leave it out"},
    {"MpiImpl", [](DLJob& j) { j.spec.mpi.implementation = "MPICH"; }, "spec.mpi.implementation",
     "MPICH is not supported"},
    {"MpiUnknown", [](DLJob& j) { j.spec.mpi.implementation = "Foo"; }, "spec.mpi.implementation",
     "unknown MPI implementation \"Foo\""},
    {"Slots", [](DLJob& j) { j.spec.mpi.slots_per_worker = 9; }, "spec.mpi.slotsPerWorker",
     "must not exceed spec.gpusPerWorker (8)"},
    {"SlotsZero", [](DLJob& j) { j.spec.mpi.slots_per_worker = 0; }, "spec.mpi.slotsPerWorker",
     "positive"},
    {"SshPort", [](DLJob& j) { j.spec.mpi.ssh_port = 70000; }, "spec.mpi.sshPort", "65535"},
    {"Backoff", [](DLJob& j) { j.spec.run_policy.backoff_limit = -1; },
     "spec.runPolicy.backoffLimit", "zero or more"},
    {"ActiveDeadline", [](DLJob& j) { j.spec.run_policy.active_deadline_seconds = 0; },
     "spec.runPolicy.activeDeadlineSeconds", "positive"},
    {"ProgressDeadline", [](DLJob& j) { j.spec.run_policy.progress_deadline_seconds = -5; },
     "spec.runPolicy.progressDeadlineSeconds", "positive"},
    {"Ttl", [](DLJob& j) { j.spec.run_policy.ttl_seconds_after_finished = -1; },
     "spec.runPolicy.ttlSecondsAfterFinished", "zero or more"},
    {"CleanPod", [](DLJob& j) { j.spec.run_policy.clean_pod_policy = "Some"; },
     "spec.runPolicy.cleanPodPolicy", "All, Running or None"},
    {"Queue", [](DLJob& j) { j.spec.scheduling.queue = "Big Queue"; }, "spec.scheduling.queue",
     "DNS label"},
    {"Priority", [](DLJob& j) { j.spec.scheduling.priority = int64_t{1} << 40; },
     "spec.scheduling.priority", "32-bit"},
    {"Topology", [](DLJob& j) { j.spec.scheduling.topology = "Scatter"; },
     "spec.scheduling.topology", "Pack or Spread"},
    {"NodeSelectorValue", [](DLJob& j) { j.spec.scheduling.node_selector["gpu"] = "A100 80GB"; },
     "spec.scheduling.nodeSelector.gpu", "value must be"},
    {"TolerationOperator",
     [](DLJob& j) {
       j.spec.scheduling.tolerations = {{"k", "In", "", "", {}}};
     },
     "spec.scheduling.tolerations[0].operator", "Exists or Equal"},
    {"TolerationExistsValue",
     [](DLJob& j) {
       j.spec.scheduling.tolerations = {{"k", "Exists", "v", "", {}}};
     },
     "spec.scheduling.tolerations[0].value", "empty when operator is Exists"},
    {"TolerationEffect",
     [](DLJob& j) {
       j.spec.scheduling.tolerations = {{"k", "Exists", "", "Never", {}}};
     },
     "spec.scheduling.tolerations[0].effect", "NoSchedule, PreferNoSchedule, NoExecute"},
    {"TolerationSeconds",
     [](DLJob& j) {
       j.spec.scheduling.tolerations = {{"k", "Exists", "", "NoSchedule", 60}};
     },
     "spec.scheduling.tolerations[0].tolerationSeconds", "NoExecute"},
    {"AffinityNoTerms", [](DLJob& j) { j.spec.scheduling.affinity = Required({}); }, kTerms,
     "must have at least one node selector term"},
    {"AffinityKeyRequired",
     [](DLJob& j) {
       RequireOne(j, {"", "Exists", {}});
     },
     REQ0("key"), "required: the node label to match"},
    {"AffinityKeyNotAQualifiedName",
     [](DLJob& j) {
       RequireOne(j, {"a/b/c", "Exists", {}});
     },
     REQ0("key"), "key \"a/b/c\": name must be"},
    {"AffinityKeyPrefixNotADnsSubdomain",
     [](DLJob& j) {
       RequireOne(j, {"Example.com/gpu", "Exists", {}});
     },
     REQ0("key"), "prefix must be a DNS subdomain"},
    {"AffinityOperatorRequired",
     [](DLJob& j) {
       RequireOne(j, {"zone", "", {"a"}});
     },
     REQ0("operator"), "required: one of In, NotIn, Exists, DoesNotExist, Gt or Lt"},
    {"AffinityOperatorUnknown",
     [](DLJob& j) {
       RequireOne(j, {"zone", "Equals", {"a"}});
     },
     REQ0("operator"), "must be In, NotIn, Exists, DoesNotExist, Gt or Lt, got \"Equals\""},
    {"AffinityInWithoutValues",
     [](DLJob& j) {
       RequireOne(j, {"zone", "In", {}});
     },
     REQ0("values"), "must have at least one value when operator is In"},
    {"AffinityNotInWithoutValues",
     [](DLJob& j) {
       RequireOne(j, {"zone", "NotIn", {}});
     },
     REQ0("values"), "must have at least one value when operator is NotIn"},
    {"AffinityExistsWithValues",
     [](DLJob& j) {
       RequireOne(j, {"zone", "Exists", {"a"}});
     },
     REQ0("values"), "must be empty when operator is Exists, got 1 value"},
    {"AffinityDoesNotExistWithValues",
     [](DLJob& j) {
       RequireOne(j, {"zone", "DoesNotExist", {"a", "b"}});
     },
     REQ0("values"), "must be empty when operator is DoesNotExist, got 2 values"},
    {"AffinityGtWithoutValue",
     [](DLJob& j) {
       RequireOne(j, {"mem", "Gt", {}});
     },
     REQ0("values"), "must be exactly one integer when operator is Gt, got 0 values"},
    {"AffinityLtWithTwoValues",
     [](DLJob& j) {
       RequireOne(j, {"mem", "Lt", {"1", "2"}});
     },
     REQ0("values"), "must be exactly one integer when operator is Lt, got 2 values"},
    {"AffinityGtNotAnInteger",
     [](DLJob& j) {
       RequireOne(j, {"mem", "Gt", {"40Gi"}});
     },
     REQ0("values[0]"),
     "must be an integer when operator is Gt (node labels compare as "
     "numbers), got \"40Gi\""},
    {"AffinityLtBeyond64Bits",
     [](DLJob& j) {
       RequireOne(j, {"mem", "Lt", {"99999999999999999999"}});
     },
     REQ0("values[0]"), "must be an integer"},
    {"AffinityIndexesTermAndRequirement",
     [](DLJob& j) {
       j.spec.scheduling.affinity =
           Required({NodeSelectorTerm{.match_expressions = {{"zone", "Exists", {}}}},
                     NodeSelectorTerm{.match_expressions = {{"zone", "In", {"a"}},
                                                            {"gpu", "In", {"a100"}},
                                                            {"mem", "Gt", {"x"}}}}});
     },
     "spec.scheduling.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
     "nodeSelectorTerms[1].matchExpressions[2].values[0]",
     "must be an integer"},
    {"ControlCharQuoted", [](DLJob& j) { j.spec.working_dir = "rel\x1b[31m"; }, "spec.workingDir",
     "\"rel\\x1b[31m\""},
};

#undef REQ0

INSTANTIATE_TEST_SUITE_P(AllRules, ValidationRule, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Validation, CollectsEveryProblem) {
  DLJob j;
  j.api_version = "";
  j.spec.gpus = -2;
  j.spec.data.push_back(DataVolume{});
  FieldErrors errors = Validate(j);
  std::vector<std::string> paths;
  for (const FieldError& e : errors) paths.push_back(e.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"apiVersion", "metadata.name", "spec.image",
                                             "spec.command", "spec.gpus", "spec.data[0].name",
                                             "spec.data[0].source", "spec.data[0].mountPath"}));
}

TEST(Validation, ElasticJobWithoutGpusIsDefaultedToMaxAndValid) {
  DLJob j = ValidJob();
  j.spec.gpus.reset();
  j.spec.gpus_per_worker.reset();
  j.spec.mpi.slots_per_worker.reset();
  j.spec.elastic = ElasticSpec{4, 16};
  EXPECT_EQ(JoinFieldErrors(Validate(j)), "");  // no spec.gpus: defaulting sets it
  ApplyDefaults(j);
  EXPECT_EQ(j.spec.gpus, 16);
  EXPECT_EQ(j.spec.gpus_per_worker, 4);  // divides both ends
  EXPECT_EQ(JoinFieldErrors(Validate(j)), "");
  ASSERT_TRUE(ElasticWorkers(j));
  EXPECT_EQ(ElasticWorkers(j)->min, 1);
  EXPECT_EQ(ElasticWorkers(j)->max, 4);
  EXPECT_TRUE(ElasticWorkers(j)->Contains(2));
  EXPECT_FALSE(ElasticWorkers(j)->Contains(5));
  EXPECT_FALSE(ElasticWorkers(ValidJob()));  // rigid
}

TEST(Validation, ElasticRangeOfOneSizeIsFine) {
  DLJob j = ValidJob();
  j.spec.elastic = ElasticSpec{16, 16};
  EXPECT_EQ(JoinFieldErrors(Validate(j)), "");
}

TEST(Validation, CheckpointSourcesThatAreFine) {
  for (const char* source :
       {"pvc:ckpt", "pvc:ckpt/a/b", "nas://nas.example.com/export/ckpt", "hostPath:/mnt/ckpt"}) {
    DLJob j = ValidJob();
    j.spec.checkpoint->source = source;
    j.spec.checkpoint->mount_path = "/data/imagenet-ckpt";  // a sibling, not nested
    EXPECT_EQ(JoinFieldErrors(Validate(j)), "") << source;
  }
}

TEST(Validation, TolerationsThatAreFine) {
  DLJob j = ValidJob();
  j.spec.scheduling.tolerations = {{"", "Exists", "", "", {}},
                                   {"nvidia.com/gpu", "Equal", "present", "NoExecute", 300}};
  EXPECT_EQ(JoinFieldErrors(Validate(j)), "");
}

TEST(Validation, AffinitiesThatAreFine) {
  DLJob j = ValidJob();
  j.spec.scheduling.affinity = Affinity{};  // nothing required
  EXPECT_EQ(JoinFieldErrors(Validate(j)), "");
  j.spec.scheduling.affinity = Affinity{.node_affinity = NodeAffinity{}};
  EXPECT_EQ(JoinFieldErrors(Validate(j)), "");
  // Every operator with the values it takes; an empty term is allowed (it matches no node), as
  // the API server allows it.
  j.spec.scheduling.affinity = Required({
      NodeSelectorTerm{.match_expressions = {{"nvidia.com/gpu.product", "In", {"A100", "H100"}},
                                             {"topology.kubernetes.io/zone", "NotIn", {"z9"}},
                                             {"nvidia.com/gpu.clique", "Exists", {}},
                                             {"dljob.io/drain", "DoesNotExist", {}},
                                             {"nvidia.com/gpu.memory", "Gt", {"40000"}},
                                             {"nvidia.com/gpu.count", "Lt", {"-1"}}}},
      NodeSelectorTerm{},
  });
  EXPECT_EQ(JoinFieldErrors(Validate(j)), "");
}

TEST(Validation, AGenerateNameStandsInForTheNameOnlyWhenThereIsNone) {
  DLJob j = ValidJob();
  j.metadata.name = "";
  j.metadata.generate_name = "resnet50-";
  EXPECT_EQ(JoinFieldErrors(Validate(j)), "");
  j.metadata.generate_name = "a";  // no '-' needed: "axxxxx" is a name
  EXPECT_EQ(JoinFieldErrors(Validate(j)), "");
  j.metadata.generate_name = std::string(49, 'a');  // the longest for 2 workers
  EXPECT_EQ(JoinFieldErrors(Validate(j)), "");
  j.metadata.name = "given";  // a name wins, as on the API server: generateName is not looked at
  j.metadata.generate_name = "Not-Valid_";
  EXPECT_EQ(JoinFieldErrors(Validate(j)), "");
}

// CheckGenerateName holds a prefix to what CheckJobName holds every name made from it: compared
// over every prefix of the characters that matter, at the lengths around each limit.
TEST(ValidationRules, AGenerateNameIsValidExactlyWhenEveryNameMadeFromItIs) {
  const std::string chars = "a-0A_";
  for (int64_t workers : {int64_t{1}, int64_t{11}, int64_t{101}, kMaxGpus}) {
    const size_t max = MaxJobNameLength(workers) - kGeneratedSuffixLength;
    for (size_t length : {size_t{1}, size_t{2}, size_t{3}, max - 1, max, max + 1}) {
      for (size_t first = 0; first < chars.size(); ++first) {
        for (size_t last = 0; last < chars.size(); ++last) {
          std::string prefix = std::string(1, chars[first]) + std::string(length - 1, 'b');
          if (length > 1) prefix.back() = chars[last];
          bool all_valid = true;
          for (const char* suffix : {"bcdfg", "22222", "z9z9z", "9bbbb"}) {
            all_valid = all_valid && CheckJobName(prefix + suffix, workers).empty();
          }
          EXPECT_EQ(CheckGenerateName(prefix, workers).empty(), all_valid)
              << Quote(prefix) << " for " << workers << " workers";
        }
      }
    }
  }
}

TEST(ChildNames, TheLongestSuffixFollowsTheLargestWorkerIndex) {
  struct Row {
    int64_t workers;
    const char* suffix;
    size_t max_name;
  };
  for (Row r : {Row{0, "-worker-0", 54}, Row{1, "-worker-0", 54}, Row{10, "-worker-9", 54},
                Row{11, "-worker-10", 53}, Row{100, "-worker-99", 53}, Row{101, "-worker-100", 52},
                Row{kMaxGpus, "-worker-16383", 50}}) {
    EXPECT_EQ(LongestChildSuffix(r.workers), r.suffix) << r.workers;
    EXPECT_EQ(MaxJobNameLength(r.workers), r.max_name) << r.workers;
  }
}

TEST(ValidationRules, Individual) {
  EXPECT_EQ(CheckJobName("mnist", 2), "");
  EXPECT_NE(CheckJobName("-a", 2), "");
  EXPECT_EQ(CheckDns1035Label("a-1"), "");
  EXPECT_NE(CheckDns1035Label("1-a"), "");
  EXPECT_NE(CheckDns1035Label(std::string(64, 'a')), "");
  EXPECT_EQ(CheckQuantity("500m"), "");
  EXPECT_EQ(CheckQuantity("1.5Gi"), "");
  EXPECT_EQ(CheckQuantity("1e3"), "");
  EXPECT_NE(CheckQuantity("1.5.1"), "");
  EXPECT_NE(CheckQuantity("Gi"), "");
  EXPECT_NE(CheckQuantity("10GB"), "");
  EXPECT_EQ(CheckLabelKey("app.kubernetes.io/name"), "");
  EXPECT_NE(CheckLabelKey("a/b/c"), "");
  EXPECT_EQ(CheckAbsolutePath("/a/b"), "");
  EXPECT_NE(CheckAbsolutePath("/a/../b"), "");
  EXPECT_EQ(CheckDnsSubdomain("a.b-c"), "");
  EXPECT_NE(CheckDnsSubdomain("a..b"), "");
  EXPECT_EQ(CheckEnvVarName("NCCL_DEBUG"), "");
}

}  // namespace
}  // namespace dljob
