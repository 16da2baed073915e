// Helpers for naming fields and quoting values in error messages.
//
// Every component that reports a FieldError (the decoder, validation, the YAML position map)
// builds paths with these, so a path printed by one can be looked up in another:
//   JoinField("spec", "gpus")                  -> "spec.gpus"
//   JoinIndex("spec.data", 1)                  -> "spec.data[1]"
//   JoinKey("metadata.labels", "team")         -> "metadata.labels.team"
//   JoinKey("metadata.labels", "app.io/name")  -> "metadata.labels[app.io/name]"
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dljob {

// "parent.name", or "name" when parent is empty. For schema field names.
std::string JoinField(const std::string& parent, std::string_view name);
// "parent[i]".
std::string JoinIndex(const std::string& parent, size_t index);
// For arbitrary map keys: ".key" when key is identifier-like ([A-Za-z_][A-Za-z0-9_-]*), else
// "[key]" so keys holding dots or slashes stay unambiguous.
std::string JoinKey(const std::string& parent, std::string_view key);

// A value as it should appear in a message: double-quoted, with quotes, backslashes and every
// control or non-ASCII byte escaped (\n, \t, \xNN), never raw; cut to about max_len characters
// with "..." so a huge value cannot flood a terminal.
std::string Quote(std::string_view value, size_t max_len = 80);

// "a", "a or b", "a, b or c": the alternatives a message offers.
std::string JoinOr(std::span<const std::string_view> items);

// Edit distance (Levenshtein, with adjacent transpositions counting one edit), for "did you mean"
// suggestions.
size_t EditDistance(std::string_view a, std::string_view b);
// The candidate closest to `name` when it is close enough to be a plausible typo (distance <= 2,
// and less than half the name's length, or equal ignoring case); "" otherwise.
std::string SuggestName(std::string_view name, const std::vector<std::string_view>& candidates);

}  // namespace dljob
