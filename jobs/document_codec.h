// Internal to jobs/: the document-level steps every kind's decoder shares (codec.h for DLJob,
// dlqueue_codec.h for DLQueue): text to a JSON tree with where each field was written, the
// whole-document errors (syntax with line/column, not exactly one document, an empty one), and
// reading a file or stdin. What a tree means is each kind's own decoder's business.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "jobs/codec.h"

namespace dljob {

struct ParsedDocument {
  nlohmann::json tree;
  SourcePositions positions;  // YAML only
  FieldErrors errors;         // whole-document problems (path ""); the tree is then unusable
};

// `kind` names what the document should hold in messages ("DLJob"); `outline` lists its
// top-level keys ("apiVersion, kind, metadata, spec").
ParsedDocument ParseYamlDocument(std::string_view text, std::string_view kind,
                                 std::string_view outline);
ParsedDocument ParseJsonDocument(std::string_view text);
// Whether the text is JSON rather than YAML: its first non-blank character is '{'.
bool StartsLikeJson(std::string_view text);

}  // namespace dljob
