// See label_selector.h.
#include "kube/label_selector.h"

#include <cctype>
#include <utility>

namespace dljob::kube {
namespace {

bool ValidKey(const std::string& key) {
  if (key.empty()) return false;
  for (char c : key) {
    bool ok =
        std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/';
    if (!ok) return false;
  }
  return true;
}

Status BadRequirement(const std::string& requirement, const std::string& why) {
  return Status::InvalidArgument("unable to parse requirement \"" + requirement + "\": " + why);
}

// `key in (a, b)` / `key notin (a, b)`; false when `r` is not set-based.
Result<bool> ParseSetRequirement(const std::string& r, LabelSelector::Requirement& out) {
  size_t open = r.find('(');
  if (open == std::string::npos) return false;
  std::string head = Trim(std::string_view(r).substr(0, open));
  size_t space = head.find_last_of(" \t");
  if (space == std::string::npos) return BadRequirement(r, "expected `key in (values)`");
  std::string op = Trim(std::string_view(head).substr(space + 1));
  out.key = Trim(std::string_view(head).substr(0, space));
  if (op == "in") {
    out.op = LabelSelector::Op::kIn;
  } else if (op == "notin") {
    out.op = LabelSelector::Op::kNotIn;
  } else {
    return BadRequirement(r, "unknown operator \"" + op + "\"");
  }
  if (r.back() != ')') return BadRequirement(r, "missing ')'");
  std::string_view inner = std::string_view(r).substr(open + 1, r.size() - open - 2);
  size_t start = 0;
  for (size_t i = 0; i <= inner.size(); ++i) {
    if (i == inner.size() || inner[i] == ',') {
      std::string v = Trim(inner.substr(start, i - start));
      if (!v.empty()) out.values.push_back(v);
      start = i + 1;
    }
  }
  if (out.values.empty()) return BadRequirement(r, "empty value set");
  return true;
}

Result<LabelSelector::Requirement> ParseLabelRequirement(const std::string& r) {
  LabelSelector::Requirement req;
  Result<bool> set = ParseSetRequirement(r, req);
  if (!set.ok()) return set.status();
  if (!*set) {
    size_t pos;
    if (r[0] == '!') {
      req.op = LabelSelector::Op::kNotExists;
      req.key = Trim(std::string_view(r).substr(1));
    } else if ((pos = r.find("!=")) != std::string::npos) {
      req.op = LabelSelector::Op::kNotEquals;
      req.key = Trim(std::string_view(r).substr(0, pos));
      req.values = {Trim(std::string_view(r).substr(pos + 2))};
    } else if ((pos = r.find('=')) != std::string::npos) {
      size_t width = r.compare(pos, 2, "==") == 0 ? 2 : 1;
      req.op = LabelSelector::Op::kEquals;
      req.key = Trim(std::string_view(r).substr(0, pos));
      req.values = {Trim(std::string_view(r).substr(pos + width))};
    } else {
      req.op = LabelSelector::Op::kExists;
      req.key = r;
    }
  }
  if (!ValidKey(req.key)) return BadRequirement(r, "invalid label key \"" + req.key + "\"");
  return req;
}

}  // namespace

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> SplitTopLevel(std::string_view text) {
  std::vector<std::string> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      parts.push_back(Trim(text.substr(start, i - start)));
      start = i + 1;
    } else if (text[i] == '(') {
      ++depth;
    } else if (text[i] == ')') {
      --depth;
    }
  }
  return parts;
}

Result<LabelSelector> LabelSelector::Parse(std::string_view text) {
  LabelSelector selector;
  if (Trim(text).empty()) return selector;
  for (const std::string& r : SplitTopLevel(text)) {
    if (r.empty())
      return Status::InvalidArgument("empty requirement in \"" + std::string(text) + "\"");
    Result<Requirement> req = ParseLabelRequirement(r);
    if (!req.ok()) return req.status();
    selector.requirements_.push_back(std::move(req).value());
  }
  return selector;
}

bool LabelSelector::Matches(const nlohmann::json& labels) const {
  for (const Requirement& r : requirements_) {
    const bool has = labels.is_object() && labels.contains(r.key);
    std::string value;
    if (has && labels[r.key].is_string()) value = labels[r.key].get<std::string>();
    bool in_values = false;
    for (const std::string& v : r.values) in_values = in_values || (has && v == value);
    switch (r.op) {
      case Op::kEquals:
      case Op::kIn:
        if (!in_values) return false;
        break;
      case Op::kNotEquals:
      case Op::kNotIn:
        if (in_values) return false;
        break;
      case Op::kExists:
        if (!has) return false;
        break;
      case Op::kNotExists:
        if (has) return false;
        break;
    }
  }
  return true;
}

}  // namespace dljob::kube
