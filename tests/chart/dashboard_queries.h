// The PromQL of the Grafana dashboard (charts/dljob/dashboards/dljob.json), for the tests that
// check it: tests/chart/dashboard_test.cc (its metric and label names against a /metrics page
// rendered in-process) and tests/operator/prometheus_scrape_test.cc (every query answered by a
// real Prometheus scraping a real operator). One reading of the dashboard for both, so they check
// the same queries.
//
// Pure functions; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dljob::testing {

// Where the dashboard is, relative to the repository root.
inline constexpr char kDashboardPath[] = "charts/dljob/dashboards/dljob.json";

struct DashboardQuery {
  std::string where;  // "panel \"Loss\"" or "variable dljob", for messages
  std::string expr;   // as written, template variables and all
};

// Every panel target's expr, then every query variable's query, in the dashboard's order.
std::vector<DashboardQuery> DashboardQueries(const nlohmann::json& dashboard);

// `expr` with each Grafana template variable ($name or ${name}) that `values` names replaced by
// its value; variables it does not name are left as written.
std::string SubstituteVariables(const std::string& expr,
                                const std::map<std::string, std::string>& values);

// Grafana's label_values(<selector>, <label>) — a variable query that is not PromQL, answered by
// Prometheus's /api/v1/label/<label>/values?match[]=<selector>. nullopt for any other query.
struct LabelValuesQuery {
  std::string selector;  // "" for label_values(<label>)
  std::string label;
};
std::optional<LabelValuesQuery> AsLabelValues(const std::string& expr);

}  // namespace dljob::testing
