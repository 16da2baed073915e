// The Grafana dashboard (charts/dljob/dashboards/dljob.json) against the metrics the operator
// really exports: a /metrics page is served by the operator's endpoint (op::ServeEndpoint) for a
// leader with a running job that has reported throughput, followed logs and waited in its queue;
// every PromQL expression in the dashboard (panel targets and template variables) is tokenized,
// and each metric name it selects must be on the page, each label it matches must be on that
// metric's series, and each label it groups or joins by must be on one of its metrics. Function
// and aggregation names must be PromQL's. So a query on a misspelt metric or label fails here.
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "operator/app/endpoints.h"
#include "tests/chart/dashboard_queries.h"

namespace dljob {
namespace {

using Json = nlohmann::json;
using Exported = std::map<std::string, std::set<std::string>>;  // series name → label names

// The series names and label names of an exposition page.
Exported ParsePage(const std::string& text) {
  Exported out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t end = line.find_first_of("{ ");
    std::set<std::string>& labels = out[line.substr(0, end)];
    if (end == std::string::npos || line[end] != '{') continue;
    size_t pos = end + 1;
    while (pos < line.size() && line[pos] != '}') {
      size_t eq = line.find('=', pos);
      labels.insert(line.substr(pos, eq - pos));
      pos = eq + 2;  // past ="
      while (pos < line.size() && line[pos] != '"') pos += line[pos] == '\\' ? 2 : 1;
      pos += line[pos + 1] == ',' ? 2 : 1;
    }
  }
  return out;
}

const std::set<std::string>& Functions() {
  static const std::set<std::string> kFunctions = {
      "sum",           "max",           "min",           "avg",       "count",
      "topk",          "bottomk",       "quantile",      "stddev",    "rate",
      "irate",         "increase",      "delta",         "deriv",     "histogram_quantile",
      "max_over_time", "avg_over_time", "min_over_time", "clamp_min", "abs",
      "time",          "vector",        "label_values",  "absent",    "sort",
      "sort_desc"};
  return kFunctions;
}

struct Token {
  enum Kind { kIdent, kString, kNumber, kPunct } kind;
  std::string text;
};

// PromQL's tokens; a range's duration is one token ("[5m]"). Errors for what PromQL has not.
std::vector<Token> Tokenize(const std::string& q, std::string& error) {
  std::vector<Token> out;
  for (size_t i = 0; i < q.size();) {
    char c = q[i];
    if (isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':') {
      size_t j = i;
      while (j < q.size() &&
             (isalnum(static_cast<unsigned char>(q[j])) || q[j] == '_' || q[j] == ':'))
        ++j;
      out.push_back({Token::kIdent, q.substr(i, j - i)});
      i = j;
    } else if (isdigit(static_cast<unsigned char>(c)) || c == '.') {
      size_t j = i;
      while (j < q.size() && (isdigit(static_cast<unsigned char>(q[j])) || q[j] == '.')) ++j;
      out.push_back({Token::kNumber, q.substr(i, j - i)});
      i = j;
    } else if (c == '"') {
      size_t j = i + 1;
      while (j < q.size() && q[j] != '"') j += q[j] == '\\' ? 2 : 1;
      if (j >= q.size()) {
        error = "unterminated string";
        return {};
      }
      out.push_back({Token::kString, q.substr(i + 1, j - i - 1)});
      i = j + 1;
    } else if (c == '[') {
      size_t j = q.find(']', i);
      if (j == std::string::npos) {
        error = "unterminated range";
        return {};
      }
      out.push_back({Token::kPunct, q.substr(i, j - i + 1)});
      i = j + 1;
    } else if (std::string("=!~").find(c) != std::string::npos) {
      size_t j = i + 1;
      if (j < q.size() && (q[j] == '=' || q[j] == '~')) ++j;
      out.push_back({Token::kPunct, q.substr(i, j - i)});
      i = j;
    } else if (std::string("(){},*/+-><^%").find(c) != std::string::npos) {
      out.push_back({Token::kPunct, std::string(1, c)});
      ++i;
    } else {
      error = std::string("unexpected character '") + c + "'";
      return {};
    }
  }
  return out;
}

// What is wrong with `query` against `exported`; empty when nothing is.
std::vector<std::string> Problems(std::string query, const Exported& exported) {
  query = testing::SubstituteVariables(query, {{"__rate_interval", "5m"}});
  std::string error;
  std::vector<Token> t = Tokenize(query, error);
  if (!error.empty()) return {query + ": " + error};
  std::vector<std::string> problems;
  std::set<std::string> metrics, grouping;
  int depth = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    const Token& tok = t[i];
    if (tok.kind == Token::kPunct) {
      if (tok.text == "(" || tok.text == "{") ++depth;
      if (tok.text == ")" || tok.text == "}") --depth;
      if (depth < 0) problems.push_back(query + ": unbalanced brackets");
      continue;
    }
    if (tok.kind != Token::kIdent) continue;
    const std::string next = i + 1 < t.size() ? t[i + 1].text : "";
    // A call, or an aggregation with its grouping first: sum by (x) (…).
    const bool call = next == "(" || next == "by" || next == "without";
    static const std::set<std::string> kGroup = {"by",       "without",    "on",
                                                 "ignoring", "group_left", "group_right"};
    if (kGroup.count(tok.text)) {
      if (next != "(") continue;  // group_left without labels
      for (i += 2; i < t.size() && t[i].text != ")"; ++i) {
        if (t[i].kind == Token::kIdent) grouping.insert(t[i].text);
      }
      continue;
    }
    if (tok.text == "label_values") {  // Grafana's: label_values(metric{…}, label)
      size_t close = i;
      int d = 0;
      for (; close < t.size(); ++close) {
        if (t[close].text == "(") ++d;
        if (t[close].text == ")" && --d == 0) break;
      }
      if (close > 0 && t[close - 1].kind == Token::kIdent) grouping.insert(t[close - 1].text);
    }
    if (call) {
      if (!Functions().count(tok.text)) problems.push_back(query + ": no function " + tok.text);
      continue;
    }
    if (tok.text == "bool" || tok.text == "offset") continue;
    if (i > 0 && t[i - 1].text == "," && i + 1 < t.size() && t[i + 1].text == ")") continue;
    auto m = exported.find(tok.text);
    if (m == exported.end()) {
      problems.push_back(query + ": the operator exports no " + tok.text);
      continue;
    }
    metrics.insert(tok.text);
    if (i + 1 < t.size() && t[i + 1].text == "{") {
      for (i += 2; i < t.size() && t[i].text != "}"; ++i) {
        if (t[i].kind == Token::kIdent && !m->second.count(t[i].text)) {
          problems.push_back(query + ": " + tok.text + " has no label " + t[i].text);
        }
      }
    }
  }
  if (depth != 0) problems.push_back(query + ": unbalanced brackets");
  for (const std::string& label : grouping) {
    bool found = false;
    for (const std::string& metric : metrics) found = found || exported.at(metric).count(label);
    if (!found) problems.push_back(query + ": none of its metrics has label " + label);
  }
  if (metrics.empty()) problems.push_back(query + ": selects no metric");
  return problems;
}

// A leader's /metrics page with a running job that reported, logged and waited.
Exported OperatorPage() {
  op::OperatorState s;
  s.leading = true;
  s.synced = true;
  s.jobs.push_back(Json::parse(R"({
    "metadata": {"name": "resnet50", "namespace": "team-a"},
    "spec": {"gpus": 8},
    "status": {"phase": "Running", "restarts": 1,
               "throughput": {"imagesPerSec": 2950.5, "step": 100, "loss": 2.3}}})"));
  s.logs["team-a/resnet50"] = {120, 10};
  metrics::JobTimingHistograms timings;
  timings.ObserveStart("team-a", 42);
  timings.ObserveQueueWait("team-a", "default", 7);
  s.timings = timings.Families();
  op::EndpointAnswer page = op::ServeEndpoint("GET", "/metrics", [&] { return s; });
  EXPECT_EQ(page.status, 200) << page.body;
  return ParsePage(page.body);
}

std::vector<std::string> DashboardQueries() {
  std::ifstream in(testing::kDashboardPath);
  EXPECT_TRUE(in) << "run from the repository root";
  std::vector<std::string> out;
  for (const testing::DashboardQuery& q : testing::DashboardQueries(Json::parse(in))) {
    out.push_back(q.expr);
  }
  return out;
}

TEST(ChartDashboard, EveryQueryUsesWhatTheOperatorExports) {
  const Exported page = OperatorPage();
  ASSERT_TRUE(page.count("dljob_job_queue_wait_seconds_bucket"));
  std::vector<std::string> queries = DashboardQueries();
  EXPECT_GE(queries.size(), 15u);
  for (const std::string& q : queries) {
    for (const std::string& p : Problems(q, page)) ADD_FAILURE() << p;
  }
}

// The checker itself: a misspelt metric, label, grouping label or function is caught.
TEST(ChartDashboard, CatchesMisspeltMetricsAndLabels) {
  const Exported page = OperatorPage();
  EXPECT_TRUE(
      Problems(R"(sum by (dljob) (rate(dljob_job_log_lines_total{namespace="a"}[5m])))", page)
          .empty());
  auto one = [&](const std::string& q) {  // every problem, one a line
    std::string all;
    for (const std::string& p : Problems(q, page)) all += p + "\n";
    return all;
  };
  EXPECT_NE(one("dljob_job_image_per_second").find("exports no dljob_job_image_per_second"),
            std::string::npos);
  EXPECT_NE(one(R"(dljob_job_step{job="x"})").find("has no label job"), std::string::npos);
  EXPECT_NE(one("sum by (exported_job) (dljob_job_step)").find("has label exported_job"),
            std::string::npos);
  EXPECT_NE(one("summ(dljob_job_step)").find("no function summ"), std::string::npos);
  EXPECT_NE(one("histogram_quantile(0.9, sum by (le) (rate(dljob_job_queue_wait_seconds[5m])))")
                .find("exports no dljob_job_queue_wait_seconds"),
            std::string::npos);
  EXPECT_NE(one("sum(dljob_jobs").find("unbalanced"), std::string::npos);
}

// The shared reading of the dashboard (dashboard_queries.h): variables substituted in both
// spellings, unknown ones left; Grafana's label_values split into its selector and label.
TEST(ChartDashboard, VariablesAndLabelValuesAreRead) {
  const std::map<std::string, std::string> v = {{"namespace", "team-a"}, {"__rate_interval", "1m"}};
  EXPECT_EQ(
      testing::SubstituteVariables(R"(rate(x{namespace=~"$namespace"}[$__rate_interval]))", v),
      R"(rate(x{namespace=~"team-a"}[1m]))");
  EXPECT_EQ(testing::SubstituteVariables("${namespace}/$dljob/${datasource}/$ /${", v),
            "team-a/$dljob/${datasource}/$ /${");
  std::optional<testing::LabelValuesQuery> lv = testing::AsLabelValues(
      R"( label_values(dljob_job_phase{namespace=~"a,b", phase!=""}, dljob) )");
  ASSERT_TRUE(lv);
  EXPECT_EQ(lv->selector, R"(dljob_job_phase{namespace=~"a,b", phase!=""})");
  EXPECT_EQ(lv->label, "dljob");
  lv = testing::AsLabelValues("label_values(namespace)");
  ASSERT_TRUE(lv);
  EXPECT_EQ(lv->selector, "");
  EXPECT_EQ(lv->label, "namespace");
  EXPECT_FALSE(testing::AsLabelValues("sum(label_values)"));
  EXPECT_FALSE(testing::AsLabelValues("max(dljob_job_step)"));
}

}  // namespace
}  // namespace dljob
