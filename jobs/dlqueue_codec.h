// Reading and writing DLQueues as YAML and JSON, with the same behaviour as the DLJob codec
// (codec.h): one path-tracking decoder over a JSON tree for both formats, every problem reported
// at once with its field path (unknown fields with a "did you mean"), YAML errors with line and
// column, and an encoding that leaves out unset fields so that Encode(Decode(x)) is stable.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "jobs/codec.h"
#include "jobs/dlqueue_types.h"
#include "jobs/field_error.h"

namespace dljob {

struct QueueDecodeResult {
  DLQueue queue;              // as much as could be decoded; meaningful only when errors is empty
  FieldErrors errors;         // every problem found, in document order
  SourcePositions positions;  // YAML input only; empty for JSON
  bool ok() const { return errors.empty(); }
};

// One YAML document holding one DLQueue. Errors carry line/column.
QueueDecodeResult DecodeQueueYaml(std::string_view text);
QueueDecodeResult DecodeQueueJson(std::string_view text);
// JSON when the text starts with '{', else YAML.
QueueDecodeResult DecodeQueueAny(std::string_view text);
// An already-parsed JSON tree (e.g. an object from the Kubernetes API).
QueueDecodeResult DecodeQueueTree(const nlohmann::json& tree);

nlohmann::json EncodeQueueTree(const DLQueue& queue);
std::string EncodeQueueJson(const DLQueue& queue, int indent = 2);
std::string EncodeQueueYaml(const DLQueue& queue);

}  // namespace dljob
