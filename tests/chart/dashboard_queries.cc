// See dashboard_queries.h.
#include "tests/chart/dashboard_queries.h"

#include <cctype>

namespace dljob::testing {
namespace {

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string Trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\n") - b + 1);
}

}  // namespace

std::vector<DashboardQuery> DashboardQueries(const nlohmann::json& dashboard) {
  std::vector<DashboardQuery> out;
  for (const nlohmann::json& panel : dashboard.value("panels", nlohmann::json::array())) {
    for (const nlohmann::json& target : panel.value("targets", nlohmann::json::array())) {
      out.push_back({"panel \"" + panel.value("title", "") + "\"", target.value("expr", "")});
    }
  }
  const nlohmann::json templating = dashboard.value("templating", nlohmann::json::object());
  for (const nlohmann::json& var : templating.value("list", nlohmann::json::array())) {
    if (var.value("type", "") != "query") continue;
    const nlohmann::json& q = var["query"];
    out.push_back({"variable " + var.value("name", ""),
                   q.is_string() ? q.get<std::string>() : q.value("query", "")});
  }
  return out;
}

std::string SubstituteVariables(const std::string& expr,
                                const std::map<std::string, std::string>& values) {
  std::string out;
  for (size_t i = 0; i < expr.size();) {
    if (expr[i] != '$') {
      out += expr[i++];
      continue;
    }
    const bool braced = i + 1 < expr.size() && expr[i + 1] == '{';
    size_t start = i + (braced ? 2 : 1), end = start;
    while (end < expr.size() && IsNameChar(expr[end])) ++end;
    if (braced && (end >= expr.size() || expr[end] != '}')) end = start;  // not a ${name}
    auto value = end > start ? values.find(expr.substr(start, end - start)) : values.end();
    if (value == values.end()) {
      out += expr[i++];
      continue;
    }
    out += value->second;
    i = end + (braced ? 1 : 0);
  }
  return out;
}

std::optional<LabelValuesQuery> AsLabelValues(const std::string& expr) {
  const std::string e = Trimmed(expr);
  const std::string head = "label_values(";
  if (e.rfind(head, 0) != 0 || e.back() != ')') return std::nullopt;
  const std::string args = e.substr(head.size(), e.size() - head.size() - 1);
  // The label is after the last comma outside braces and quotes (a selector may hold commas).
  size_t split = std::string::npos;
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < args.size(); ++i) {
    char c = args[i];
    if (quoted) {
      if (c == '\\') ++i;
      if (c == '"') quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == '{' || c == '(') {
      ++depth;
    } else if (c == '}' || c == ')') {
      --depth;
    } else if (c == ',' && depth == 0) {
      split = i;
    }
  }
  if (split == std::string::npos) return LabelValuesQuery{"", Trimmed(args)};
  return LabelValuesQuery{Trimmed(args.substr(0, split)), Trimmed(args.substr(split + 1))};
}

}  // namespace dljob::testing
