// Internal to jobs/: pieces of the codec (codec.h) shared between its source files.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "jobs/dljob_types.h"
#include "jobs/json_reader.h"

namespace dljob {

// Decodes `status` (codec_decode_status.cc); errors go to the reader.
void DecodeStatus(JsonReader& r, const nlohmann::json& v, const std::string& path,
                  DLJobStatus& status);

// The encoded job with keys in reading order (apiVersion, kind, metadata, spec, status, and
// each struct's fields in declaration order), for EncodeYaml/EncodeJson (codec_encode.cc).
nlohmann::ordered_json EncodeOrdered(const DLJob& job);

}  // namespace dljob
