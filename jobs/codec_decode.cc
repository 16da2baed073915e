// DecodeTree: JSON tree -> DLJob, field by field, with paths (see codec.h).
#include <string>

#include "jobs/codec.h"
#include "jobs/codec_internal.h"

namespace dljob {
namespace {

using json = nlohmann::json;

constexpr std::string_view kMetadataFields[] = {
    "name", "namespace", "labels", "annotations", "uid", "resourceVersion", "generation",
    "creationTimestamp"};

void DecodeMetadata(JsonReader& r, const json& v, const std::string& path, ObjectMeta& m) {
  if (!v.is_object()) return r.TypeError(path, "an object", v);
  r.Read(v, "name", path, m.name);
  r.Read(v, "namespace", path, m.namespace_);
  r.Read(v, "labels", path, m.labels);
  r.Read(v, "annotations", path, m.annotations);
  r.Read(v, "uid", path, m.uid);
  r.Read(v, "resourceVersion", path, m.resource_version);
  r.Read(v, "generation", path, m.generation);
  r.Read(v, "creationTimestamp", path, m.creation_timestamp);
  // Whatever else the API server keeps (managedFields, finalizers, ...) round-trips verbatim.
  for (const auto& [key, child] : v.items()) {
    bool known = false;
    for (std::string_view k : kMetadataFields) known = known || k == key;
    if (!known) m.other[key] = child;
  }
}

void DecodeEnv(JsonReader& r, const json& v, const std::string& path, EnvVar& e) {
  if (!r.Object(v, path, {"name", "value"})) return;
  r.Read(v, "name", path, e.name);
  r.Read(v, "value", path, e.value);
}

void DecodeVolume(JsonReader& r, const json& v, const std::string& path, DataVolume& d) {
  if (!r.Object(v, path, {"name", "source", "mountPath", "readOnly", "cache", "secretName"})) {
    return;
  }
  r.Read(v, "name", path, d.name);
  r.Read(v, "source", path, d.source);
  r.Read(v, "mountPath", path, d.mount_path);
  r.Read(v, "readOnly", path, d.read_only);
  r.Read(v, "secretName", path, d.secret_name);
  if (const json* cache = JsonReader::Get(v, "cache")) {
    std::string cache_path = JoinField(path, "cache");
    if (r.Object(*cache, cache_path, {"medium", "path"})) {
      d.cache.emplace();
      r.Read(*cache, "medium", cache_path, d.cache->medium);
      r.Read(*cache, "path", cache_path, d.cache->path);
    }
  }
}

void DecodeToleration(JsonReader& r, const json& v, const std::string& path, Toleration& t) {
  if (!r.Object(v, path, {"key", "operator", "value", "effect", "tolerationSeconds"})) return;
  r.Read(v, "key", path, t.key);
  r.Read(v, "operator", path, t.operator_);
  r.Read(v, "value", path, t.value);
  r.Read(v, "effect", path, t.effect);
  r.Read(v, "tolerationSeconds", path, t.toleration_seconds);
}

// Decodes spec.<key> when it is present and an object.
template <typename F>
void Section(JsonReader& r, const json& spec, std::string_view key, const std::string& parent,
             const std::vector<std::string_view>& known, F&& decode) {
  const json* v = JsonReader::Get(spec, key);
  if (v == nullptr) return;
  std::string path = JoinField(parent, key);
  if (r.Object(*v, path, known)) decode(*v, path);
}

void DecodeSpecSections(JsonReader& r, const json& v, const std::string& path, DLJobSpec& s) {
  Section(r, v, "resources", path, {"cpuPerGpu", "memoryPerGpu"}, [&](const json& o, const auto& p) {
    r.ReadQuantity(o, "cpuPerGpu", p, s.resources.cpu_per_gpu);
    r.ReadQuantity(o, "memoryPerGpu", p, s.resources.memory_per_gpu);
  });
  r.ReadList(v, "data", path, s.data, [&](const json& o, const auto& p, DataVolume& d) {
    DecodeVolume(r, o, p, d);
  });
  Section(r, v, "mpi", path, {"implementation", "slotsPerWorker", "sshPort"},
          [&](const json& o, const auto& p) {
            r.Read(o, "implementation", p, s.mpi.implementation);
            r.Read(o, "slotsPerWorker", p, s.mpi.slots_per_worker);
            r.Read(o, "sshPort", p, s.mpi.ssh_port);
          });
  Section(r, v, "runPolicy", path,
          {"backoffLimit", "activeDeadlineSeconds", "progressDeadlineSeconds",
           "ttlSecondsAfterFinished", "cleanPodPolicy", "suspend"},
          [&](const json& o, const auto& p) {
            RunPolicy& rp = s.run_policy;
            r.Read(o, "backoffLimit", p, rp.backoff_limit);
            r.Read(o, "activeDeadlineSeconds", p, rp.active_deadline_seconds);
            r.Read(o, "progressDeadlineSeconds", p, rp.progress_deadline_seconds);
            r.Read(o, "ttlSecondsAfterFinished", p, rp.ttl_seconds_after_finished);
            r.Read(o, "cleanPodPolicy", p, rp.clean_pod_policy);
            r.Read(o, "suspend", p, rp.suspend);
          });
  Section(r, v, "scheduling", path,
          {"queue", "priority", "topology", "nodeSelector", "tolerations"},
          [&](const json& o, const auto& p) {
            SchedulingSpec& sc = s.scheduling;
            r.Read(o, "queue", p, sc.queue);
            r.Read(o, "priority", p, sc.priority);
            r.Read(o, "topology", p, sc.topology);
            r.Read(o, "nodeSelector", p, sc.node_selector);
            r.ReadList(o, "tolerations", p, sc.tolerations,
                       [&](const json& t, const auto& tp, Toleration& out) {
                         DecodeToleration(r, t, tp, out);
                       });
          });
}

void DecodeSpec(JsonReader& r, const json& v, const std::string& path, DLJobSpec& s) {
  if (!r.Object(v, path,
                {"image", "command", "env", "workingDir", "gpus", "gpusPerWorker", "resources",
                 "data", "mpi", "runPolicy", "scheduling"})) {
    return;
  }
  r.Read(v, "image", path, s.image);
  r.Read(v, "command", path, s.command);
  r.ReadList(v, "env", path, s.env, [&](const json& o, const auto& p, EnvVar& e) {
    DecodeEnv(r, o, p, e);
  });
  r.Read(v, "workingDir", path, s.working_dir);
  r.Read(v, "gpus", path, s.gpus);
  r.Read(v, "gpusPerWorker", path, s.gpus_per_worker);
  DecodeSpecSections(r, v, path, s);
}

}  // namespace

DecodeResult DecodeTree(const json& tree) {
  DecodeResult result;
  JsonReader r(result.errors);
  if (!r.Object(tree, "", {"apiVersion", "kind", "metadata", "spec", "status"})) {
    result.errors.back().reason = "a DLJob " + result.errors.back().reason;
    return result;
  }
  DLJob& job = result.job;
  job.api_version.clear();
  job.kind.clear();
  r.Read(tree, "apiVersion", "", job.api_version);
  r.Read(tree, "kind", "", job.kind);
  if (const json* m = JsonReader::Get(tree, "metadata")) {
    DecodeMetadata(r, *m, "metadata", job.metadata);
  }
  if (const json* s = JsonReader::Get(tree, "spec")) DecodeSpec(r, *s, "spec", job.spec);
  if (const json* s = JsonReader::Get(tree, "status")) DecodeStatus(r, *s, "status", job.status);
  return result;
}

}  // namespace dljob
