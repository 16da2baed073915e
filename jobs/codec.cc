// The document-level entry points of codec.h: text in, DLJob out, with positions; and the
// document steps every kind shares (document_codec.h).
#include "jobs/codec.h"

#include <algorithm>
#include <exception>
#include <tuple>

#include "base/env.h"
#include "jobs/document_codec.h"
#include "jobs/field_path.h"
#include "jobs/yaml_tree.h"

namespace dljob {
namespace {

ParsedDocument OneError(std::string reason, TextPosition at = {}) {
  ParsedDocument doc;
  doc.errors.push_back(FieldError{"", std::move(reason), at.line, at.column});
  return doc;
}

DecodeResult Failed(ParsedDocument doc) {
  DecodeResult result;
  result.errors = std::move(doc.errors);
  return result;
}

// The position recorded for `error`'s path, else for its nearest recorded ancestor
// ("spec.mpi.x" falls back to "spec.mpi", then "spec").
std::pair<int, int> Locate(const SourcePositions& positions, const FieldError& error) {
  // An unknown field is best shown at its key; anything else at its value.
  bool at_key = error.reason.rfind("unknown field", 0) == 0;
  std::string path = error.path;
  while (true) {
    const auto& table = at_key ? positions.keys : positions.values;
    if (auto it = table.find(path); it != table.end()) return it->second;
    if (auto it = positions.values.find(path); it != positions.values.end()) return it->second;
    if (path.empty()) return {0, 0};
    size_t cut = path.find_last_of(".[");
    path = cut == std::string::npos ? "" : path.substr(0, cut);
  }
}

SourcePositions ToSourcePositions(const YamlParse& parsed) {
  SourcePositions out;
  for (const auto& [path, at] : parsed.values) out.values[path] = {at.line, at.column};
  for (const auto& [path, at] : parsed.keys) out.keys[path] = {at.line, at.column};
  return out;
}

TextPosition PositionOfByte(std::string_view text, size_t byte) {
  byte = std::min(byte, text.size());
  TextPosition at{1, 1};
  for (size_t i = 0; i < byte; ++i) {
    if (text[i] == '\n') {
      ++at.line;
      at.column = 1;
    } else {
      ++at.column;
    }
  }
  return at;
}

// nlohmann's messages start "[json.exception.parse_error.101] parse error at line 1, column 2: ".
std::string StripJsonPrefix(const std::string& what) {
  size_t colon = what.find(": ");
  if (what.rfind("[json.exception.", 0) == 0 && colon != std::string::npos) {
    return what.substr(colon + 2);
  }
  return what;
}

}  // namespace

ParsedDocument ParseYamlDocument(std::string_view text, std::string_view kind,
                                 std::string_view outline) {
  YamlParse parsed = ParseYaml(text, /*record_positions=*/true);
  if (parsed.error) return OneError(*parsed.error, parsed.error_at);
  if (parsed.documents > 1) {
    return OneError("expected one " + std::string(kind) + " document, found " +
                    std::to_string(parsed.documents));
  }
  if (parsed.tree.is_null()) {
    return OneError("empty document: expected a " + std::string(kind) + " (" +
                    std::string(outline) + ")");
  }
  ParsedDocument doc;
  doc.tree = std::move(parsed.tree);
  doc.positions = ToSourcePositions(parsed);
  return doc;
}

ParsedDocument ParseJsonDocument(std::string_view text) {
  ParsedDocument doc;
  try {
    doc.tree = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    return OneError(StripJsonPrefix(e.what()), PositionOfByte(text, e.byte > 0 ? e.byte - 1 : 0));
  } catch (const std::exception& e) {
    return OneError(StripJsonPrefix(e.what()));
  }
  return doc;
}

bool StartsLikeJson(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{';
}

DecodeResult DecodeYaml(std::string_view text) {
  ParsedDocument doc = ParseYamlDocument(text, kKind, "apiVersion, kind, metadata, spec");
  if (!doc.errors.empty()) return Failed(std::move(doc));
  DecodeResult result = DecodeTree(doc.tree);
  result.positions = std::move(doc.positions);
  LocateErrors(result.positions, result.errors);
  return result;
}

void LocateErrors(const SourcePositions& positions, FieldErrors& errors) {
  if (positions.values.empty() && positions.keys.empty()) return;
  for (FieldError& e : errors) {
    if (e.line > 0) continue;
    std::tie(e.line, e.column) = Locate(positions, e);
  }
  // The tree's maps are sorted by key; the reader wants the file's order.
  std::stable_sort(errors.begin(), errors.end(), [](const FieldError& a, const FieldError& b) {
    return std::pair(a.line, a.column) < std::pair(b.line, b.column);
  });
}

DecodeResult DecodeJson(std::string_view text) {
  ParsedDocument doc = ParseJsonDocument(text);
  if (!doc.errors.empty()) return Failed(std::move(doc));
  return DecodeTree(doc.tree);
}

DecodeResult DecodeAny(std::string_view text) {
  return StartsLikeJson(text) ? DecodeJson(text) : DecodeYaml(text);
}

std::string DocumentKind(std::string_view text) {
  nlohmann::json tree;
  if (StartsLikeJson(text)) {
    tree = ParseJsonDocument(text).tree;
  } else {
    YamlParse parsed = ParseYaml(text, /*record_positions=*/false);
    if (!parsed.error) tree = std::move(parsed.tree);
  }
  if (!tree.is_object()) return "";
  auto kind = tree.find("kind");
  return kind != tree.end() && kind->is_string() ? kind->get<std::string>() : "";
}

Result<std::string> ReadDocumentFile(const std::string& path) {
  if (path != "-") return DefaultEnv().ReadFile(path);
  Result<std::string> text = DefaultEnv().ReadFile("/dev/stdin");
  if (!text.ok()) return Status(text.status().code(), "cannot read standard input");
  return text;
}

DecodeResult ReadJobFile(const std::string& path) {
  Result<std::string> text = ReadDocumentFile(path);
  if (!text.ok()) return Failed(OneError(text.status().message()));
  return DecodeAny(*text);
}

}  // namespace dljob
