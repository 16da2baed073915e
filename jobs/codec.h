// Reading and writing DLJobs as YAML and JSON.
//
// Both formats decode through one path-tracking decoder over a JSON tree, so they accept exactly
// the same documents and report the same errors: a field of the wrong type names its path and
// what was expected, an unknown field is reported (with a "did you mean" when one is close) and
// never silently dropped, a YAML syntax error gives its line and column. Decoding collects every
// problem at once rather than stopping at the first. Encoding omits unset optional fields, so
// Encode(Decode(x)) is stable: decoding it again yields an equal DLJob.
//
// Pure functions; no I/O except ReadJobFile. Thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "jobs/dljob_types.h"
#include "jobs/field_error.h"

namespace dljob {

// Where each field of a YAML document was written, by field path ("spec.data[1].source"):
// {line, column}, 1-based. `keys` holds mapping keys' positions, `values` their values'.
struct SourcePositions {
  std::map<std::string, std::pair<int, int>> values;
  std::map<std::string, std::pair<int, int>> keys;
};

struct DecodeResult {
  DLJob job;                  // as much as could be decoded; meaningful only when errors is empty
  FieldErrors errors;         // every problem found, in document order
  SourcePositions positions;  // YAML input only; empty for JSON
  bool ok() const { return errors.empty(); }
};

// Gives each error that has no line yet (e.g. one from Validate) the position of its field, or
// of the field's nearest written ancestor ("spec.gpus: required" points at "spec"), and sorts
// the errors into file order. An unknown-field error points at its key. No-op without positions.
void LocateErrors(const SourcePositions& positions, FieldErrors& errors);

// Parses one YAML document holding one DLJob. Errors carry line/column.
DecodeResult DecodeYaml(std::string_view text);
// Parses one JSON document holding one DLJob.
DecodeResult DecodeJson(std::string_view text);
// JSON first if the text starts with '{', else YAML (YAML is a superset of JSON anyway).
DecodeResult DecodeAny(std::string_view text);
// Decodes an already-parsed JSON tree (e.g. an object from the Kubernetes API).
DecodeResult DecodeTree(const nlohmann::json& tree);

// Reads and decodes a file ("-" reads stdin). A file that cannot be read is one FieldError with
// an empty path whose reason names the file and the OS error.
DecodeResult ReadJobFile(const std::string& path);

// The text of a file ("-" reads stdin), for a caller that must look at a document before it
// knows which kind to decode it as. The error message names the file and the OS error.
Result<std::string> ReadDocumentFile(const std::string& path);
// The `kind` a YAML or JSON document declares ("DLJob", "DLQueue"); "" when the text does not
// parse, is not a mapping or has no string `kind`. For dispatching on kind before decoding.
std::string DocumentKind(std::string_view text);

nlohmann::json EncodeTree(const DLJob& job);
std::string EncodeJson(const DLJob& job, int indent = 2);
std::string EncodeYaml(const DLJob& job);
// status.throughput as the API carries it (what the operator merge-patches into a job's status).
nlohmann::json EncodeThroughput(const Throughput& throughput);

// Converts a YAML document to the JSON tree the decoder reads (plain scalars typed per the YAML
// 1.2 core schema, quoted scalars kept as strings). Exposed for tools that read other YAML
// manifests (e.g. the chart's CRD). Errors carry line/column.
Result<nlohmann::json> YamlToJson(std::string_view text);
// Emits a JSON tree as block-style YAML.
std::string JsonToYaml(const nlohmann::json& tree);

}  // namespace dljob
