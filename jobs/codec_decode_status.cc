// Decoding of DLJob.status (see codec.h); the operator and the local runner write it, so it is
// decoded as strictly as the spec.
#include "jobs/codec_internal.h"

namespace dljob {
namespace {

using json = nlohmann::json;

void DecodePhase(JsonReader& r, const json& v, const std::string& path, JobPhase& phase) {
  std::string name;
  r.Read(v, "phase", path, name);
  if (std::optional<JobPhase> p = ParsePhase(name)) {
    phase = *p;
    return;
  }
  r.Error(JoinField(path, "phase"),
          "unknown phase " + Quote(name) +
              " (expected Queued, Scheduled, Running, Restarting, Succeeded, Failed, Suspended or "
              "Interrupted)");
}

void DecodeCondition(JsonReader& r, const json& v, const std::string& path, Condition& c) {
  if (!r.Object(v, path, {"type", "status", "reason", "message", "lastTransitionTime"})) return;
  r.Read(v, "type", path, c.type);
  r.Read(v, "status", path, c.status);
  r.Read(v, "reason", path, c.reason);
  r.Read(v, "message", path, c.message);
  r.Read(v, "lastTransitionTime", path, c.last_transition_time);
}

void DecodePlacement(JsonReader& r, const json& v, const std::string& path, PlacementEntry& p) {
  if (!r.Object(v, path, {"node", "gpus"})) return;
  r.Read(v, "node", path, p.node);
  r.Read(v, "gpus", path, p.gpus);
}

void DecodeThroughput(JsonReader& r, const json& v, const std::string& path, Throughput& t) {
  r.Read(v, "imagesPerSec", path, t.images_per_sec);
  r.Read(v, "perGpuImagesPerSec", path, t.per_gpu_images_per_sec);
  r.Read(v, "step", path, t.step);
  r.Read(v, "totalSteps", path, t.total_steps);
  r.Read(v, "epoch", path, t.epoch);
  r.Read(v, "loss", path, t.loss);
  r.Read(v, "accuracy", path, t.accuracy);
  r.Read(v, "updatedAt", path, t.updated_at);
}

}  // namespace

void DecodeStatus(JsonReader& r, const json& v, const std::string& path, DLJobStatus& s) {
  if (!r.Object(v, path,
                {"phase", "conditions", "workers", "placement", "restarts", "throughput",
                 "startTime", "completionTime"})) {
    return;
  }
  DecodePhase(r, v, path, s.phase);
  r.ReadList(v, "conditions", path, s.conditions, [&](const json& o, const auto& p, Condition& c) {
    DecodeCondition(r, o, p, c);
  });
  if (const json* w = JsonReader::Get(v, "workers")) {
    std::string wp = JoinField(path, "workers");
    if (r.Object(*w, wp, {"desired", "ready", "failed"})) {
      s.workers.emplace();
      r.Read(*w, "desired", wp, s.workers->desired);
      r.Read(*w, "ready", wp, s.workers->ready);
      r.Read(*w, "failed", wp, s.workers->failed);
    }
  }
  r.ReadList(v, "placement", path, s.placement, [&](const json& o, const auto& p, PlacementEntry& e) {
    DecodePlacement(r, o, p, e);
  });
  r.Read(v, "restarts", path, s.restarts);
  if (const json* t = JsonReader::Get(v, "throughput")) {
    std::string tp = JoinField(path, "throughput");
    if (r.Object(*t, tp,
                 {"imagesPerSec", "perGpuImagesPerSec", "step", "totalSteps", "epoch", "loss",
                  "accuracy", "updatedAt"})) {
      s.throughput.emplace();
      DecodeThroughput(r, *t, tp, *s.throughput);
    }
  }
  r.Read(v, "startTime", path, s.start_time);
  r.Read(v, "completionTime", path, s.completion_time);
}

}  // namespace dljob
