// Encoding a DLJob (see codec.h). Unset optionals and empty strings, maps and lists are left
// out; an optional that is set is always written (even "" or {}), so decoding gives it back.
#include "jobs/codec.h"
#include "jobs/codec_internal.h"
#include "jobs/yaml_tree.h"

namespace dljob {
namespace {

using ojson = nlohmann::ordered_json;

void Put(ojson& o, const char* key, const std::string& v) {
  if (!v.empty()) o[key] = v;
}
template <typename T>
void Put(ojson& o, const char* key, const std::optional<T>& v) {
  if (v) o[key] = *v;
}
void Put(ojson& o, const char* key, const std::map<std::string, std::string>& v) {
  if (!v.empty()) o[key] = v;
}
void Put(ojson& o, const char* key, const std::vector<std::string>& v) {
  if (!v.empty()) o[key] = v;
}
void Put(ojson& o, const char* key, ojson v) {
  if (!v.empty()) o[key] = std::move(v);
}
template <typename T, typename F>
void PutList(ojson& o, const char* key, const std::vector<T>& items, F&& encode) {
  if (items.empty()) return;
  ojson list = ojson::array();
  for (const T& item : items) list.push_back(encode(item));
  o[key] = std::move(list);
}

bool IsMetadataField(const std::string& key) {
  for (const char* known : {"name", "namespace", "labels", "annotations", "uid", "resourceVersion",
                            "generation", "creationTimestamp"}) {
    if (key == known) return true;
  }
  return false;
}

ojson Metadata(const ObjectMeta& m) {
  ojson o = ojson::object();
  Put(o, "name", m.name);
  Put(o, "namespace", m.namespace_);
  Put(o, "labels", m.labels);
  Put(o, "annotations", m.annotations);
  Put(o, "uid", m.uid);
  Put(o, "resourceVersion", m.resource_version);
  Put(o, "generation", m.generation);
  Put(o, "creationTimestamp", m.creation_timestamp);
  if (m.other.is_object()) {
    for (const auto& [key, value] : m.other.items()) {
      // Names the decoder reads itself never come from `other`; a hand-built one is ignored.
      if (!o.contains(key) && !IsMetadataField(key)) o[key] = value;
    }
  }
  return o;
}

ojson Volume(const DataVolume& d) {
  ojson o = ojson::object();
  Put(o, "name", d.name);
  Put(o, "source", d.source);
  Put(o, "mountPath", d.mount_path);
  Put(o, "readOnly", d.read_only);
  if (d.cache) {
    ojson cache = ojson::object();
    Put(cache, "medium", d.cache->medium);
    Put(cache, "path", d.cache->path);
    o["cache"] = std::move(cache);
  }
  Put(o, "secretName", d.secret_name);
  return o;
}

ojson Scheduling(const SchedulingSpec& s) {
  ojson o = ojson::object();
  Put(o, "queue", s.queue);
  Put(o, "priority", s.priority);
  Put(o, "topology", s.topology);
  Put(o, "nodeSelector", s.node_selector);
  PutList(o, "tolerations", s.tolerations, [](const Toleration& t) {
    ojson x = ojson::object();
    Put(x, "key", t.key);
    Put(x, "operator", t.operator_);
    Put(x, "value", t.value);
    Put(x, "effect", t.effect);
    Put(x, "tolerationSeconds", t.toleration_seconds);
    return x;
  });
  return o;
}

ojson Sections(const DLJobSpec& s, ojson o) {
  ojson resources = ojson::object();
  Put(resources, "cpuPerGpu", s.resources.cpu_per_gpu);
  Put(resources, "memoryPerGpu", s.resources.memory_per_gpu);
  Put(o, "resources", std::move(resources));
  PutList(o, "data", s.data, Volume);
  ojson mpi = ojson::object();
  Put(mpi, "implementation", s.mpi.implementation);
  Put(mpi, "slotsPerWorker", s.mpi.slots_per_worker);
  Put(mpi, "sshPort", s.mpi.ssh_port);
  Put(o, "mpi", std::move(mpi));
  const RunPolicy& rp = s.run_policy;
  ojson policy = ojson::object();
  Put(policy, "backoffLimit", rp.backoff_limit);
  Put(policy, "activeDeadlineSeconds", rp.active_deadline_seconds);
  Put(policy, "progressDeadlineSeconds", rp.progress_deadline_seconds);
  Put(policy, "ttlSecondsAfterFinished", rp.ttl_seconds_after_finished);
  Put(policy, "cleanPodPolicy", rp.clean_pod_policy);
  Put(policy, "suspend", rp.suspend);
  Put(o, "runPolicy", std::move(policy));
  Put(o, "scheduling", Scheduling(s.scheduling));
  return o;
}

ojson Spec(const DLJobSpec& s) {
  ojson o = ojson::object();
  Put(o, "image", s.image);
  Put(o, "command", s.command);
  PutList(o, "env", s.env, [](const EnvVar& e) {
    ojson x = ojson::object();
    Put(x, "name", e.name);
    Put(x, "value", e.value);
    return x;
  });
  Put(o, "workingDir", s.working_dir);
  Put(o, "gpus", s.gpus);
  Put(o, "gpusPerWorker", s.gpus_per_worker);
  return Sections(s, std::move(o));
}

ojson ThroughputTree(const dljob::Throughput& t) {
  ojson o = ojson::object();
  Put(o, "imagesPerSec", t.images_per_sec);
  Put(o, "perGpuImagesPerSec", t.per_gpu_images_per_sec);
  Put(o, "step", t.step);
  Put(o, "totalSteps", t.total_steps);
  Put(o, "epoch", t.epoch);
  Put(o, "loss", t.loss);
  Put(o, "accuracy", t.accuracy);
  Put(o, "updatedAt", t.updated_at);
  return o;
}

ojson StatusTree(const DLJobStatus& s) {
  ojson o = ojson::object();
  Put(o, "phase", std::string(PhaseName(s.phase)));
  PutList(o, "conditions", s.conditions, [](const Condition& c) {
    ojson x = ojson::object();
    Put(x, "type", c.type);
    Put(x, "status", c.status);
    Put(x, "reason", c.reason);
    Put(x, "message", c.message);
    Put(x, "lastTransitionTime", c.last_transition_time);
    return x;
  });
  if (s.workers) {
    o["workers"] = {{"desired", s.workers->desired},
                    {"ready", s.workers->ready},
                    {"failed", s.workers->failed}};
  }
  PutList(o, "placement", s.placement, [](const PlacementEntry& p) {
    ojson x = ojson::object();
    Put(x, "node", p.node);
    x["gpus"] = p.gpus;
    return x;
  });
  Put(o, "restarts", s.restarts);
  if (s.throughput) o["throughput"] = ThroughputTree(*s.throughput);
  Put(o, "startTime", s.start_time);
  Put(o, "completionTime", s.completion_time);
  return o;
}

}  // namespace

nlohmann::ordered_json EncodeOrdered(const DLJob& job) {
  ojson o = ojson::object();
  Put(o, "apiVersion", job.api_version);
  Put(o, "kind", job.kind);
  Put(o, "metadata", Metadata(job.metadata));
  Put(o, "spec", Spec(job.spec));
  Put(o, "status", StatusTree(job.status));
  return o;
}

nlohmann::json EncodeThroughput(const dljob::Throughput& throughput) {
  return nlohmann::json(ThroughputTree(throughput));
}

nlohmann::json EncodeTree(const DLJob& job) { return nlohmann::json(EncodeOrdered(job)); }

std::string EncodeJson(const DLJob& job, int indent) {
  return EncodeOrdered(job).dump(indent, ' ', /*ensure_ascii=*/false,
                                 nlohmann::json::error_handler_t::replace);
}

std::string EncodeYaml(const DLJob& job) { return EmitYaml(EncodeOrdered(job)); }

}  // namespace dljob
