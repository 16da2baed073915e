#include "jobs/crd.h"

#include <map>
#include <string>

#include "jobs/codec_internal.h"

namespace dljob {
namespace {

using ojson = nlohmann::ordered_json;

// What the exemplar's JSON types cannot tell, by field path ("spec.gpus", lists as "[]").
struct Annotation {
  const char* description = nullptr;
  std::vector<const char*> enum_values;
  std::optional<int64_t> minimum;
  bool string_map = false;  // an object whose keys are free-form (labels, nodeSelector)
};

const std::map<std::string, Annotation>& Annotations() {
  static const auto* table = new std::map<std::string, Annotation>{
      {"spec", {"What to run and how."}},
      {"spec.image", {"Container image of the launcher and workers."}},
      {"spec.command", {"The training command; mpirun runs it once per rank."}},
      {"spec.gpus", {"Total GPUs, one MPI rank each.", {}, 1}},
      {"spec.gpusPerWorker", {"GPUs per worker pod (default: a whole 8-GPU node).", {}, 1}},
      {"spec.data[].source",
       {"nas://server/export/path, oss://bucket/prefix, pvc:claim[/subpath] or hostPath:/path."}},
      {"spec.data[].secretName",
       {"oss:// only: Secret with endpoint, akId and akSecret (default: the operator's)."}},
      {"spec.data[].cache.medium", {"Where the node-local copy lives.", {"LocalSSD"}}},
      {"spec.mpi.implementation", {nullptr, {"OpenMPI"}}},
      {"spec.mpi.slotsPerWorker", {"MPI ranks per worker.", {}, 1}},
      {"spec.mpi.sshPort", {"sshd port of worker pods.", {}, 1}},
      {"spec.runPolicy.backoffLimit", {"Whole-job restarts before the job fails.", {}, 0}},
      {"spec.runPolicy.activeDeadlineSeconds", {nullptr, {}, 1}},
      {"spec.runPolicy.progressDeadlineSeconds",
       {"Seconds without a new metric line before the job counts as stuck.", {}, 1}},
      {"spec.runPolicy.ttlSecondsAfterFinished", {nullptr, {}, 0}},
      {"spec.runPolicy.cleanPodPolicy", {nullptr, {"All", "Running", "None"}}},
      {"spec.scheduling.topology", {nullptr, {"Pack", "Spread"}}},
      {"spec.scheduling.nodeSelector", {nullptr, {}, std::nullopt, true}},
      {"spec.scheduling.tolerations[].operator", {nullptr, {"Exists", "Equal"}}},
      {"spec.scheduling.tolerations[].effect",
       {nullptr, {"", "NoSchedule", "PreferNoSchedule", "NoExecute"}}},
      {"status.phase",
       {nullptr,
        {"Queued", "Scheduled", "Running", "Restarting", "Succeeded", "Failed", "Suspended",
         "Interrupted"}}},
      {"status.conditions[].status", {nullptr, {"True", "False", "Unknown"}}},
      {"status.throughput", {"Latest progress, aggregated over ranks from metric lines."}},
  };
  return *table;
}

ojson SchemaOf(const ojson& value, const std::string& path) {
  const auto& notes = Annotations();
  auto note = notes.find(path);
  ojson s = ojson::object();
  if (note != notes.end() && note->second.string_map) {
    s["type"] = "object";
    s["additionalProperties"] = {{"type", "string"}};
  } else if (value.is_object()) {
    s["type"] = "object";
    s["properties"] = ojson::object();
    for (const auto& [key, child] : value.items()) {
      s["properties"][key] = SchemaOf(child, path.empty() ? key : path + "." + key);
    }
  } else if (value.is_array()) {
    s["type"] = "array";
    s["items"] = SchemaOf(value.empty() ? ojson("") : value[0], path + "[]");
  } else if (value.is_boolean()) {
    s["type"] = "boolean";
  } else if (value.is_number_integer()) {
    s["type"] = "integer";
    s["format"] = "int64";
  } else if (value.is_number()) {
    s["type"] = "number";
  } else {
    s["type"] = "string";
  }
  if (note != notes.end()) {
    const Annotation& a = note->second;
    if (a.description) s["description"] = a.description;
    if (!a.enum_values.empty()) s["enum"] = a.enum_values;
    if (a.minimum) s["minimum"] = *a.minimum;
  }
  return s;
}

ojson PrinterColumn(const char* name, const char* type, const char* path) {
  return {{"name", name}, {"type", type}, {"jsonPath", path}};
}

}  // namespace

DLJob SchemaExemplar() {
  DLJob j;
  j.metadata.name = "x";
  DLJobSpec& s = j.spec;
  s.image = "i";
  s.command = {"c"};
  s.env = {{"N", "v"}};
  s.working_dir = "/w";
  s.gpus = 1;
  s.gpus_per_worker = 1;
  s.resources = {"1", "1Gi"};
  s.data = {{"d", "hostPath:/d", "/d", true, CacheSpec{"LocalSSD", "/c"}, "s"}};
  s.mpi = {"OpenMPI", 1, 2222};
  s.run_policy = {1, 1, 1, 1, "Running", false};
  s.scheduling = {"q", 0, "Pack", {{"k", "v"}}, {{"k", "Equal", "v", "NoExecute", 1}}};
  DLJobStatus& st = j.status;
  st.phase = JobPhase::kRunning;
  st.conditions = {{"Running", "True", "R", "m", "t"}};
  st.workers = WorkerCounts{1, 1, 0};
  st.placement = {{"n", 1}};
  st.restarts = 0;
  st.throughput = Throughput{1.5, 1.5, 1, 1, 1, 1.5, 0.5, "t"};
  st.start_time = "t";
  st.completion_time = "t";
  return j;
}

nlohmann::ordered_json DLJobCrd() {
  ojson tree = EncodeOrdered(SchemaExemplar());
  ojson schema = {{"type", "object"},
                  {"description", "A distributed deep-learning training job (dljob.io)."},
                  {"properties",
                   {{"apiVersion", {{"type", "string"}}},
                    {"kind", {{"type", "string"}}},
                    {"metadata", {{"type", "object"}}},
                    {"spec", SchemaOf(tree["spec"], "spec")},
                    {"status", SchemaOf(tree["status"], "status")}}}};
  schema["properties"]["spec"]["required"] = {"image", "command", "gpus"};
  ojson columns = ojson::array(
      {PrinterColumn("Status", "string", ".status.phase"),
       PrinterColumn("GPUs", "integer", ".spec.gpus"),
       PrinterColumn("Img/s", "number", ".status.throughput.imagesPerSec"),
       PrinterColumn("Restarts", "integer", ".status.restarts"),
       PrinterColumn("Age", "date", ".metadata.creationTimestamp")});
  ojson version = {{"name", "v1alpha1"},
                   {"served", true},
                   {"storage", true},
                   {"subresources", {{"status", ojson::object()}}},
                   {"additionalPrinterColumns", columns},
                   {"schema", {{"openAPIV3Schema", schema}}}};
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", {{"name", std::string(kPlural) + "." + kApiGroup}}},
          {"spec",
           {{"group", kApiGroup},
            {"scope", "Namespaced"},
            {"names",
             {{"kind", kKind},
              {"listKind", std::string(kKind) + "List"},
              {"plural", kPlural},
              {"singular", "dljob"},
              {"shortNames", {kShortName}}}},
            {"versions", ojson::array({version})}}}};
}

}  // namespace dljob
