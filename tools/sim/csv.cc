#include "tools/sim/csv.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace dljob::scheduler::sim {
namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string Where(std::string_view file, int line, int column) {
  return std::string(file) + ":" + std::to_string(line) + ":" + std::to_string(column);
}

}  // namespace

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < 40; ++i) {
    const unsigned char c = s[i];
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (s.size() > 40) out += "...";
  return out + "\"";
}

Result<std::vector<CsvRow>> ParseCsv(std::string_view file, std::string_view text) {
  std::vector<CsvRow> rows;
  CsvRow row;
  CsvField field;
  int line = 1, column = 1;
  size_t i = 0;
  bool field_started = false;  // the current row has a field in progress
  auto start_field = [&] {
    field = CsvField{"", line, column};
    field_started = true;
  };
  auto end_row = [&] {
    if (field_started) row.fields.push_back(std::move(field));
    bool blank = row.fields.empty() || (row.fields.size() == 1 && Trim(row.fields[0].text).empty());
    if (!blank) rows.push_back(std::move(row));
    row = CsvRow{};
    field_started = false;
  };
  while (i < text.size()) {
    if (!field_started) {
      start_field();
      row.line = row.fields.empty() ? line : row.line;
    }
    char c = text[i];
    if (c == '"' && Trim(field.text).empty()) {
      // A quoted field: up to the closing quote ("" is one quote).
      const int qline = line, qcol = column;
      field.text.clear();
      ++i, ++column;
      bool closed = false;
      while (i < text.size()) {
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field.text += '"';
            i += 2, column += 2;
            continue;
          }
          ++i, ++column;
          closed = true;
          break;
        }
        if (text[i] == '\n') {
          ++line;
          column = 1;
        } else {
          ++column;
        }
        field.text += text[i++];
      }
      if (!closed) {
        return Status::InvalidArgument(Where(file, qline, qcol) +
                                       ": a quoted field has no closing quote");
      }
      // Only spaces may follow the closing quote before the separator.
      while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i, ++column;
      if (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
        return Status::InvalidArgument(Where(file, line, column) + ": unexpected " +
                                       Quote(text.substr(i, 1)) +
                                       " after a quoted field (expected a comma or a line end)");
      }
      continue;
    }
    if (c == ',') {
      row.fields.push_back(std::move(field));
      ++i, ++column;
      start_field();
      continue;
    }
    if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
      continue;
    }
    if (c == '\n') {
      end_row();
      ++i, ++line;
      column = 1;
      continue;
    }
    if (c == '"') {
      return Status::InvalidArgument(Where(file, line, column) +
                                     ": a quote inside an unquoted field (quote the whole field)");
    }
    field.text += c;
    ++i, ++column;
  }
  end_row();
  return rows;
}

Result<CsvTable> CsvTable::Parse(std::string_view file, std::string_view text,
                                 const std::vector<std::string>& required) {
  Result<std::vector<CsvRow>> rows = ParseCsv(file, text);
  if (!rows.ok()) return rows.status();
  std::string want;
  for (const std::string& r : required) want += (want.empty() ? "" : ",") + r;
  if (rows->empty()) {
    return Status::InvalidArgument(std::string(file) +
                                   ":1:1: empty file; expected a header row naming the columns (" +
                                   want + ", ...)");
  }
  CsvTable table;
  table.file_ = std::string(file);
  const CsvRow& header = rows->front();
  for (size_t i = 0; i < header.fields.size(); ++i) {
    std::string name = Trim(header.fields[i].text);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (name.empty()) continue;
    if (!table.index_.emplace(name, i).second) {
      return Status::InvalidArgument(Where(file, header.fields[i].line, header.fields[i].column) +
                                     ": column " + Quote(name) + " appears twice");
    }
  }
  for (const std::string& r : required) {
    if (!table.index_.count(r)) {
      return Status::InvalidArgument(Where(file, header.line, 1) + ": the header has no \"" + r +
                                     "\" column (expected " + want + ", ...)");
    }
  }
  table.rows_.assign(rows->begin() + 1, rows->end());
  return table;
}

std::string CsvTable::Text(const CsvRow& row, const std::string& column) const {
  auto it = index_.find(column);
  if (it == index_.end() || it->second >= row.fields.size()) return "";
  return Trim(row.fields[it->second].text);
}

Status CsvTable::Error(const CsvRow& row, const std::string& column, const std::string& why) const {
  auto it = index_.find(column);
  int line = row.line, col = 1;
  if (it != index_.end() && it->second < row.fields.size()) {
    line = row.fields[it->second].line;
    col = row.fields[it->second].column;
  } else if (!row.fields.empty()) {
    line = row.fields.back().line;
    col = row.fields.back().column;
  }
  return Status::InvalidArgument(Where(file_, line, col) + ": " + column + ": " + why);
}

Result<int64_t> CsvTable::Int(const CsvRow& row, const std::string& column, int64_t min,
                              int64_t max, std::optional<int64_t> fallback) const {
  const std::string text = Text(row, column);
  if (text.empty()) {
    if (fallback) return *fallback;
    return Error(row, column, "missing; expected a whole number");
  }
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Error(row, column, "expected a whole number, got " + Quote(text));
  }
  if (value < min || value > max) {
    return Error(
        row, column,
        "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " + text);
  }
  return value;
}

}  // namespace dljob::scheduler::sim
