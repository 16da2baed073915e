#include "jobs/codec.h"

#include <cstdio>

#include <gtest/gtest.h>

#include "base/env.h"
#include "jobs/defaults.h"
#include "jobs/validation.h"

namespace dljob {
namespace {

std::string ReadFile(const std::string& path) { return DefaultEnv().ReadFile(path).value(); }

// The first error at `path`, or nullptr.
const FieldError* Find(const FieldErrors& errors, const std::string& path) {
  for (const FieldError& e : errors) {
    if (e.path == path) return &e;
  }
  return nullptr;
}

TEST(CodecExamples, BothExamplesDecodeValidateAndRoundTrip) {
  for (const char* path : {"examples/mnist-job.yaml", "examples/resnet-job.yaml",
                           "examples/affinity-job.yaml", "examples/elastic-job.yaml"}) {
    SCOPED_TRACE(path);
    std::string text = ReadFile(path);
    ASSERT_FALSE(text.empty()) << "run from the repository root";
    DecodeResult decoded = DecodeYaml(text);
    ASSERT_TRUE(decoded.ok()) << JoinFieldErrors(decoded.errors);
    DLJob job = decoded.job;
    ApplyDefaults(job);
    EXPECT_EQ(JoinFieldErrors(Validate(job)), "");

    for (const DLJob& j : {decoded.job, job}) {
      DecodeResult from_yaml = DecodeYaml(EncodeYaml(j));
      ASSERT_TRUE(from_yaml.ok()) << JoinFieldErrors(from_yaml.errors);
      EXPECT_EQ(from_yaml.job, j);
      DecodeResult from_json = DecodeJson(EncodeJson(j));
      ASSERT_TRUE(from_json.ok()) << JoinFieldErrors(from_json.errors);
      EXPECT_EQ(from_json.job, j);
      EXPECT_EQ(EncodeYaml(from_yaml.job), EncodeYaml(j));
    }
  }
}

TEST(CodecExamples, ElasticFieldsDecodedAndGpusDefaultedToMax) {
  DecodeResult r = ReadJobFile("examples/elastic-job.yaml");
  ASSERT_TRUE(r.ok()) << JoinFieldErrors(r.errors);
  EXPECT_EQ(r.job.spec.elastic, (ElasticSpec{2, 8}));
  EXPECT_FALSE(r.job.spec.gpus);
  ApplyDefaults(r.job);
  EXPECT_EQ(r.job.spec.gpus, 8);
}

TEST(CodecExamples, ResnetFieldsDecoded) {
  DecodeResult r = ReadJobFile("examples/resnet-job.yaml");
  ASSERT_TRUE(r.ok()) << JoinFieldErrors(r.errors);
  const DLJob& j = r.job;
  EXPECT_EQ(j.metadata.name, "resnet50");
  EXPECT_EQ(j.metadata.namespace_, "team-a");
  EXPECT_EQ(j.metadata.labels.at("team"), "vision");
  EXPECT_EQ(j.spec.gpus, 16);
  EXPECT_EQ(j.spec.gpus_per_worker, 8);
  EXPECT_EQ(j.spec.resources.cpu_per_gpu, "8");
  EXPECT_EQ(j.spec.resources.memory_per_gpu, "60Gi");
  ASSERT_EQ(j.spec.data.size(), 1u);
  EXPECT_EQ(j.spec.data[0].source, "oss://dljob-datasets/imagenet/train");
  ASSERT_TRUE(j.spec.data[0].cache.has_value());
  EXPECT_EQ(j.spec.data[0].cache->path, "/mnt/nvme/dljob-cache");
  EXPECT_EQ(j.spec.env, (std::vector<EnvVar>{{"NCCL_DEBUG", "WARN"}}));
  EXPECT_EQ(j.spec.run_policy.active_deadline_seconds, 86400);
  EXPECT_EQ(j.spec.scheduling.priority, 0);
  EXPECT_EQ(j.spec.scheduling.node_selector.at("nvidia.com/gpu.product"), "NVIDIA-A100-SXM4-80GB");
  ASSERT_EQ(j.spec.scheduling.tolerations.size(), 1u);
  EXPECT_EQ(j.spec.scheduling.tolerations[0].operator_, "Exists");
  EXPECT_EQ(j.spec.command.back(), "--use_fp16");
}

// A pod's spec.affinity as Kubernetes writes it decodes field for field; what dljob does not
// take (preferred terms, pod affinity, matchFields) is an unknown field at its path.
TEST(CodecExamples, AffinityAsKubernetesWritesIt) {
  DecodeResult r = ReadJobFile("examples/affinity-job.yaml");
  ASSERT_TRUE(r.ok()) << JoinFieldErrors(r.errors);
  const std::optional<Affinity>& a = r.job.spec.scheduling.affinity;
  ASSERT_TRUE(a && a->node_affinity);
  const std::optional<NodeSelector>& required =
      a->node_affinity->required_during_scheduling_ignored_during_execution;
  ASSERT_TRUE(required);
  ASSERT_EQ(required->node_selector_terms.size(), 1u);
  const std::vector<NodeSelectorRequirement>& reqs =
      required->node_selector_terms[0].match_expressions;
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_EQ(reqs[0], (NodeSelectorRequirement{"nvidia.com/gpu.product",
                                              "In",
                                              {"NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3"}}));
  EXPECT_EQ(reqs[1], (NodeSelectorRequirement{"nvidia.com/gpu.memory", "Gt", {"40000"}}));
  EXPECT_EQ(reqs[2], (NodeSelectorRequirement{"topology.kubernetes.io/zone", "NotIn", {"z3"}}));
  EXPECT_EQ(reqs[3], (NodeSelectorRequirement{"dljob.io/draining", "DoesNotExist", {}}));

  DecodeResult other = DecodeYaml(R"(apiVersion: dljob.io/v1alpha1
kind: DLJob
metadata: {name: a}
spec:
  scheduling:
    affinity:
      podAntiAffinity: {}
      nodeAffinity:
        preferredDuringSchedulingIgnoredDuringExecution: []
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
            - matchFields: [{key: metadata.name, operator: In, values: [n1]}]
)");
  std::vector<std::string> paths;
  for (const FieldError& e : other.errors) paths.push_back(e.path);
  const std::string node = "spec.scheduling.affinity.nodeAffinity.";
  EXPECT_EQ(paths, (std::vector<std::string>{
                       "spec.scheduling.affinity.podAntiAffinity",
                       node + "preferredDuringSchedulingIgnoredDuringExecution",
                       node + "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
                              ".matchFields"}))
      << JoinFieldErrors(other.errors);
}

TEST(CodecEncode, KeyOrderAndOmissions) {
  DLJob j;
  j.metadata.name = "a";
  j.spec.image = "img";
  j.spec.gpus = 2;
  std::string yaml = EncodeYaml(j);
  EXPECT_EQ(
      yaml,
      "apiVersion: dljob.io/v1alpha1\nkind: DLJob\nmetadata:\n  name: a\nspec:\n  image: img\n"
      "  gpus: 2\n");
  EXPECT_EQ(EncodeJson(j, -1),
            R"({"apiVersion":"dljob.io/v1alpha1","kind":"DLJob","metadata":{"name":"a"},)"
            R"("spec":{"image":"img","gpus":2}})");
  j.status.phase = JobPhase::kRunning;
  EXPECT_NE(EncodeYaml(j).find("status:\n  phase: Running\n"), std::string::npos);
}

TEST(CodecEncode, StringsThatLookLikeOtherTypesAreQuoted) {
  DLJob j;
  j.spec.command = {"true", "8", "null", "", "0x1F", "1e3", "a: b", "- x", "#c", "ok"};
  j.spec.resources.cpu_per_gpu = "8";
  DecodeResult back = DecodeYaml(EncodeYaml(j));
  ASSERT_TRUE(back.ok()) << JoinFieldErrors(back.errors) << EncodeYaml(j);
  EXPECT_EQ(back.job, j);
  EXPECT_NE(EncodeYaml(j).find("cpuPerGpu: \"8\""), std::string::npos);
}

TEST(CodecEncode, SetOptionalsSurviveEvenWhenEmpty) {
  DLJob j;
  j.spec.mpi.implementation = "";
  j.spec.data.push_back(DataVolume{"d", "", "", false, CacheSpec{}, std::nullopt});
  j.status.workers = WorkerCounts{};
  j.status.throughput = Throughput{};
  j.metadata.other["finalizers"] = {"x"};
  DecodeResult back = DecodeYaml(EncodeYaml(j));
  ASSERT_TRUE(back.ok()) << JoinFieldErrors(back.errors);
  EXPECT_EQ(back.job, j);
  EXPECT_EQ(DecodeJson(EncodeJson(j)).job, j);
}

TEST(CodecDecode, WrongTypesNamePathAndValue) {
  DecodeResult r = DecodeYaml(
      "apiVersion: dljob.io/v1alpha1\nkind: DLJob\nmetadata: {name: a}\nspec:\n"
      "  gpus: two\n  gpusPerWorker: 2.5\n  command: dljob-train\n"
      "  data:\n    - name: d\n      readOnly: yes\n");
  ASSERT_EQ(r.errors.size(), 4u) << JoinFieldErrors(r.errors);
  EXPECT_EQ(r.errors[0].ToString(),
            "spec.gpus: must be an integer, got string \"two\" (line 5, column 9)");
  EXPECT_EQ(Find(r.errors, "spec.gpusPerWorker")->reason, "must be an integer, got number 2.5");
  EXPECT_EQ(Find(r.errors, "spec.command")->reason,
            "must be a list of strings, got string \"dljob-train\"");
  EXPECT_EQ(Find(r.errors, "spec.data[0].readOnly")->reason,
            "must be a boolean (true or false), got string \"yes\"");
}

TEST(CodecDecode, IntegralFloatsAndNumericQuantitiesAccepted) {
  DecodeResult r =
      DecodeYaml("spec:\n  gpus: 2.0\n  resources: {cpuPerGpu: 8, memoryPerGpu: 0.5}\n");
  ASSERT_TRUE(r.ok()) << JoinFieldErrors(r.errors);
  EXPECT_EQ(r.job.spec.gpus, 2);
  EXPECT_EQ(r.job.spec.resources.cpu_per_gpu, "8");
  EXPECT_EQ(r.job.spec.resources.memory_per_gpu, "0.5");
  DecodeResult big = DecodeJson(R"({"spec":{"gpus":1e30}})");
  ASSERT_EQ(big.errors.size(), 1u);
  EXPECT_NE(big.errors[0].reason.find("out of range"), std::string::npos);
}

TEST(CodecDecode, UnknownFieldsWithSuggestions) {
  DecodeResult r = DecodeYaml(
      "apiVersion: dljob.io/v1alpha1\nkind: DLJob\nmetadata: {name: a, finalizers: [x]}\n"
      "spec:\n  gpu: 2\n  mpi: {sshport: 22}\n  zzz: 1\nspce: {}\n");
  ASSERT_EQ(r.errors.size(), 4u) << JoinFieldErrors(r.errors);
  EXPECT_EQ(r.errors[0].ToString(),
            "spec.gpu: unknown field (did you mean \"gpus\"?) (line 5, column 3)");
  EXPECT_EQ(Find(r.errors, "spec.mpi.sshport")->reason,
            "unknown field (did you mean \"sshPort\"?)");
  EXPECT_EQ(Find(r.errors, "spec.zzz")->reason, "unknown field");
  EXPECT_EQ(Find(r.errors, "spce")->reason, "unknown field (did you mean \"spec\"?)");
  EXPECT_EQ(r.job.metadata.other["finalizers"], nlohmann::json({"x"}));  // kept, not reported
}

TEST(CodecDecode, ErrorsInDocumentOrder) {
  DecodeResult r = DecodeYaml("spec:\n  zeta: 1\n  alpha: 2\n  gpus: x\n");
  ASSERT_EQ(r.errors.size(), 3u);
  EXPECT_EQ(r.errors[0].path, "spec.zeta");
  EXPECT_EQ(r.errors[1].path, "spec.alpha");
  EXPECT_EQ(r.errors[2].path, "spec.gpus");
  EXPECT_EQ(r.errors[2].line, 4);
}

TEST(CodecYaml, SyntaxErrorHasLineAndColumn) {
  DecodeResult r = DecodeYaml("kind: DLJob\nspec:\n  gpus: [1, 2\n  image: x\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_GE(r.errors[0].line, 3);
  EXPECT_GT(r.errors[0].column, 0);
  Result<nlohmann::json> tree = YamlToJson("a: [1, 2\nb: c\n");
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(tree.status().message().rfind("line ", 0), 0u) << tree.status().message();
}

TEST(CodecYaml, DocumentCountAndEmptiness) {
  DecodeResult two = DecodeYaml("kind: DLJob\n---\nkind: DLJob\n");
  ASSERT_EQ(two.errors.size(), 1u);
  EXPECT_EQ(two.errors[0].reason, "expected one DLJob document, found 2");
  for (const char* empty : {"", "# only a comment\n", "---\n"}) {
    DecodeResult r = DecodeYaml(empty);
    ASSERT_EQ(r.errors.size(), 1u) << empty;
    EXPECT_NE(r.errors[0].reason.find("empty document"), std::string::npos);
  }
  DecodeResult list = DecodeYaml("- a\n- b\n");
  ASSERT_EQ(list.errors.size(), 1u);
  EXPECT_EQ(list.errors[0].reason, "a DLJob must be an object, got a list");
}

TEST(CodecYaml, CoreSchemaScalars) {
  Result<nlohmann::json> t = YamlToJson(
      "n1: ~\nn2: null\nn3:\nb: True\ni: -12\nh: 0x1F\no: 0o17\nf: 1.5e3\ns: '12'\n"
      "d: \"true\"\nw: yes\nv: 1.2.3\nbig: 18446744073709551615\n");
  ASSERT_TRUE(t.ok()) << t.status().message();
  const nlohmann::json& j = *t;
  EXPECT_TRUE(j["n1"].is_null() && j["n2"].is_null() && j["n3"].is_null());
  EXPECT_EQ(j["b"], true);
  EXPECT_EQ(j["i"], -12);
  EXPECT_EQ(j["h"], 31);
  EXPECT_EQ(j["o"], 15);
  EXPECT_EQ(j["f"], 1500.0);
  EXPECT_EQ(j["s"], "12");
  EXPECT_EQ(j["d"], "true");
  EXPECT_EQ(j["w"], "yes");  // YAML 1.1 booleans are plain strings in 1.2
  EXPECT_EQ(j["v"], "1.2.3");
  EXPECT_EQ(j["big"].get<uint64_t>(), 18446744073709551615ull);
  EXPECT_FALSE(YamlToJson("x: .inf\n").ok());
  EXPECT_FALSE(YamlToJson("x: .nan\n").ok());
}

TEST(CodecYaml, DuplicateKeysAndNonScalarKeysRejected) {
  Result<nlohmann::json> dup = YamlToJson("a: 1\nb: 2\na: 3\n");
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().message(), "line 3, column 1: duplicate key \"a\"");
  EXPECT_FALSE(YamlToJson("? [a, b]\n: 1\n").ok());
}

TEST(CodecYaml, AliasesExpandButBombsAreBounded) {
  Result<nlohmann::json> t = YamlToJson("a: &x {k: v}\nb: *x\n");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ((*t)["b"]["k"], "v");
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) bomb += std::string(i ? ", " : "") + "*" + char(c - 1);
    bomb += "]\n";
  }
  Result<nlohmann::json> blown = YamlToJson(bomb);
  ASSERT_FALSE(blown.ok());
  EXPECT_NE(blown.status().message().find("too large"), std::string::npos);
}

TEST(CodecYaml, JsonToYamlRoundTrips) {
  nlohmann::json tree = nlohmann::json::parse(
      R"({"a":[1,-2,3.25,true,null,"x",""],"b":{},"c":[],"d":{"e f":"g: h","0":"0"},)"
      R"("u":"caf\u00e9\n\ttab","big":1e300})");
  Result<nlohmann::json> back = YamlToJson(JsonToYaml(tree));
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << JsonToYaml(tree);
  EXPECT_EQ(*back, tree) << JsonToYaml(tree);
}

TEST(CodecJson, ParseErrorHasLineAndColumn) {
  DecodeResult r = DecodeJson("{\n  \"spec\": {\n    \"gpus\": ,\n  }\n}");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].line, 3);
  EXPECT_GT(r.errors[0].column, 1);
  EXPECT_EQ(r.errors[0].reason.find("[json.exception"), std::string::npos);
}

TEST(CodecAny, DispatchesOnFirstCharacter) {
  DecodeResult json = DecodeAny("  {\"spec\": {\"gpus\": 4}}");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(json.job.spec.gpus, 4);
  DecodeResult yaml = DecodeAny("spec: {gpus: 4}");
  ASSERT_TRUE(yaml.ok());
  EXPECT_EQ(yaml.job, json.job);
}

TEST(CodecStatus, RoundTripsAndRejectsUnknownPhase) {
  DLJob j;
  j.status.phase = JobPhase::kRestarting;
  j.status.conditions.push_back({"Restarting", "True", "WorkerFailed", "worker 1 exited", "t"});
  j.status.placement.push_back({"node-a", 8});
  j.status.restarts = 1;
  Throughput& t = j.status.throughput.emplace();
  t.images_per_sec = 2950.5;
  t.per_gpu_images_per_sec = 184.4;
  t.step = 100;
  t.total_steps = 1000;
  t.epoch = 1;
  t.loss = 2.31;
  t.updated_at = "now";
  EXPECT_EQ(DecodeYaml(EncodeYaml(j)).job, j);
  DecodeResult bad = DecodeYaml("status: {phase: Runing}\n");
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_EQ(bad.errors[0].path, "status.phase");
  EXPECT_NE(bad.errors[0].reason.find("unknown phase \"Runing\""), std::string::npos);
}

TEST(CodecFile, UnreadableFileIsOneError) {
  DecodeResult r = ReadJobFile("/nonexistent/x.yaml");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].path, "");
  EXPECT_EQ(r.errors[0].reason, "cannot open \"/nonexistent/x.yaml\": No such file or directory");
}

TEST(CodecTypes, PhaseNames) {
  for (JobPhase p :
       {JobPhase::kQueued, JobPhase::kScheduled, JobPhase::kRunning, JobPhase::kRestarting,
        JobPhase::kSucceeded, JobPhase::kFailed, JobPhase::kSuspended, JobPhase::kInterrupted}) {
    EXPECT_EQ(ParsePhase(PhaseName(p)), p);
  }
  EXPECT_STREQ(PhaseName(JobPhase::kUnset), "");
  EXPECT_EQ(ParsePhase("running"), std::nullopt);
  EXPECT_TRUE(IsFinished(JobPhase::kInterrupted));
  EXPECT_FALSE(IsFinished(JobPhase::kRestarting));
}

}  // namespace
}  // namespace dljob

namespace dljob {
namespace {

TEST(LocateErrors, PlacesLaterErrorsAtTheirFieldOrNearestAncestor) {
  DecodeResult d = DecodeYaml(
      "apiVersion: dljob.io/v1alpha1\n"
      "kind: DLJob\n"
      "metadata: {name: x}\n"
      "spec:\n"
      "  image: i\n"
      "  gpusPerWorker: 3\n");
  ASSERT_TRUE(d.ok()) << JoinFieldErrors(d.errors);
  FieldErrors errors = {
      {"spec.gpus", "required"}, {"spec.gpusPerWorker", "bad"}, {"metadata.name", "bad"}};
  LocateErrors(d.positions, errors);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].path, "metadata.name");  // sorted into file order
  EXPECT_EQ(errors[0].line, 3);
  EXPECT_EQ(errors[1].path, "spec.gpus");  // not written: points at spec's value
  EXPECT_EQ(errors[1].line, 5);
  EXPECT_EQ(errors[2].path, "spec.gpusPerWorker");
  EXPECT_EQ(errors[2].line, 6);
  EXPECT_EQ(errors[2].column, 18);
}

TEST(LocateErrors, JsonHasNoPositions) {
  DecodeResult d = DecodeJson(R"({"apiVersion":"dljob.io/v1alpha1","kind":"DLJob"})");
  FieldErrors errors = {{"spec.gpus", "required"}};
  LocateErrors(d.positions, errors);
  EXPECT_EQ(errors[0].line, 0);
}

}  // namespace
}  // namespace dljob
