// A small CSV reader for dljob-sim's input files: RFC 4180 fields (commas, double quotes with ""
// inside), LF or CRLF line ends, blank lines skipped, the first row a header naming the columns.
// Every field keeps the line and column it started at, so errors can say where
// ("jobs.csv:12:17: num_gpu: expected a whole number, got \"x\"").
//
// Pure; any byte string gives rows or an error, never a crash.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace dljob::scheduler::sim {

struct CsvField {
  std::string text;
  int line = 0;    // 1-based
  int column = 0;  // 1-based, in bytes
};

struct CsvRow {
  std::vector<CsvField> fields;
  int line = 0;
};

// What the user wrote, quoted, printable whatever bytes it holds, cut short after 40 bytes.
std::string Quote(std::string_view text);

// kInvalidArgument "<file>:<line>:<column>: <why>" for an unterminated quote or a stray quote
// inside an unquoted field.
Result<std::vector<CsvRow>> ParseCsv(std::string_view file, std::string_view text);

// A CSV table: the header's column names (trimmed, lower-cased) and the rows after it, with
// typed access to one field that reports errors as "<file>:<line>:<column>: <column>: <why>".
class CsvTable {
 public:
  // kInvalidArgument when the text is not CSV, has no header, or lacks a `required` column.
  static Result<CsvTable> Parse(std::string_view file, std::string_view text,
                                const std::vector<std::string>& required);

  const std::vector<CsvRow>& rows() const { return rows_; }
  bool Has(const std::string& column) const { return index_.count(column) > 0; }

  // The field of `column` in `row`, trimmed; "" when the column is absent or the row short.
  std::string Text(const CsvRow& row, const std::string& column) const;
  // A whole number in [min, max]; `fallback` when the field is empty or absent (an error when
  // there is none).
  Result<int64_t> Int(const CsvRow& row, const std::string& column, int64_t min, int64_t max,
                      std::optional<int64_t> fallback = std::nullopt) const;
  // "<file>:<line>:<column>: <column>: <why>" for this field.
  Status Error(const CsvRow& row, const std::string& column, const std::string& why) const;

 private:
  std::string file_;
  std::map<std::string, size_t> index_;
  std::vector<CsvRow> rows_;
};

}  // namespace dljob::scheduler::sim
