// Fuzz target: every jobs/ entry point that reads untrusted text.
//
// Properties checked (abort on violation, so libFuzzer and the replay driver report it):
//   - no input crashes, hangs or leaks (ASan/UBSan catch the rest);
//   - a document that decodes cleanly round-trips: Decode(Encode(j)) == j through JSON, YAML and
//     the tree, and encoding is stable: Encode(Decode(Encode(j))) == Encode(j) — as a DLJob and
//     as a DLQueue;
//   - validation and defaulting never crash on a decoded job, and defaulting is idempotent;
//     validation never crashes on a decoded queue;
//   - the document's kind is read without crashing;
//   - a volume source that parses formats back to a URI that parses to the same value;
//   - an mpirun output line splits into its rank's text and other ranks' pieces, each piece's
//     text a part of the line.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "jobs/codec.h"
#include "jobs/defaults.h"
#include "jobs/dlqueue_codec.h"
#include "jobs/log_lines.h"
#include "jobs/metric_line.h"
#include "jobs/validation.h"
#include "jobs/volume_source.h"

namespace {

void Check(bool ok, const char* what, const std::string& detail) {
  if (ok) return;
  std::fprintf(stderr, "job_parse_fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void CheckRoundTrip(const dljob::DLJob& job) {
  std::string yaml = dljob::EncodeYaml(job);
  dljob::DecodeResult from_yaml = dljob::DecodeYaml(yaml);
  Check(from_yaml.ok(), "encoded YAML does not decode",
        yaml + "\n" + dljob::JoinFieldErrors(from_yaml.errors));
  Check(from_yaml.job == job, "YAML round trip changed the job", yaml);
  Check(dljob::EncodeYaml(from_yaml.job) == yaml, "YAML encoding is not stable", yaml);

  std::string json = dljob::EncodeJson(job);
  dljob::DecodeResult from_json = dljob::DecodeJson(json);
  Check(from_json.ok(), "encoded JSON does not decode",
        json + "\n" + dljob::JoinFieldErrors(from_json.errors));
  Check(from_json.job == job, "JSON round trip changed the job", json);
  Check(dljob::EncodeJson(from_json.job) == json, "JSON encoding is not stable", json);

  dljob::DecodeResult from_tree = dljob::DecodeTree(dljob::EncodeTree(job));
  Check(from_tree.ok() && from_tree.job == job, "tree round trip changed the job", json);
}

void CheckDefaultsAndValidation(dljob::DLJob job) {
  dljob::ApplyDefaults(job);
  dljob::DLJob again = job;
  dljob::ApplyDefaults(again);
  Check(again == job, "ApplyDefaults is not idempotent", dljob::EncodeJson(job));
  for (const dljob::FieldError& e : dljob::Validate(job)) {
    Check(!e.reason.empty(), "validation error without a reason", e.path);
  }
}

void CheckQueueRoundTrip(const dljob::DLQueue& queue) {
  std::string yaml = dljob::EncodeQueueYaml(queue);
  dljob::QueueDecodeResult from_yaml = dljob::DecodeQueueYaml(yaml);
  Check(from_yaml.ok(), "encoded queue YAML does not decode",
        yaml + "\n" + dljob::JoinFieldErrors(from_yaml.errors));
  Check(from_yaml.queue == queue, "YAML round trip changed the queue", yaml);
  Check(dljob::EncodeQueueYaml(from_yaml.queue) == yaml, "queue YAML encoding is not stable", yaml);

  std::string json = dljob::EncodeQueueJson(queue);
  dljob::QueueDecodeResult from_json = dljob::DecodeQueueJson(json);
  Check(from_json.ok() && from_json.queue == queue, "JSON round trip changed the queue", json);
  Check(dljob::EncodeQueueJson(from_json.queue) == json, "queue JSON encoding is not stable", json);
  for (const dljob::FieldError& e : dljob::Validate(queue)) {
    Check(!e.reason.empty(), "queue validation error without a reason", e.path);
  }
}

void CheckVolumeSource(std::string_view text) {
  dljob::Result<dljob::VolumeSource> parsed = dljob::ParseVolumeSource(text);
  if (!parsed.ok()) {
    Check(!parsed.status().message().empty(), "volume source error without a reason",
          std::string(text));
    return;
  }
  std::string formatted = dljob::FormatVolumeSource(*parsed);
  dljob::Result<dljob::VolumeSource> reparsed = dljob::ParseVolumeSource(formatted);
  Check(reparsed.ok() && *reparsed == *parsed, "volume source does not round-trip", formatted);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  dljob::DecodeResult decoded = dljob::DecodeAny(text);
  if (decoded.ok()) {
    CheckRoundTrip(decoded.job);
    CheckDefaultsAndValidation(decoded.job);
  }
  dljob::QueueDecodeResult queue = dljob::DecodeQueueAny(text);
  if (queue.ok()) CheckQueueRoundTrip(queue.queue);
  (void)dljob::DocumentKind(text);
  (void)dljob::YamlToJson(text);
  if (std::optional<dljob::MetricSample> sample = dljob::ParseMetricLine(text)) {
    dljob::ProgressAggregator aggregator;
    aggregator.Add(*sample, "2026-01-01T00:00:00Z");
    (void)aggregator.Current();
  }
  if (size < 512) CheckVolumeSource(text);
  (void)dljob::ParseMpirunLine(text);
  size_t pieces_size = 0;
  for (const dljob::MpirunLine& piece : dljob::OtherRanksPieces(text)) {
    Check(piece.rank >= 0, "a piece of another rank without a rank", std::string(text));
    pieces_size += piece.text.size();
  }
  Check(pieces_size <= size, "other ranks' pieces longer than the line", std::string(text));
  return 0;
}
