// Debian's Prometheus scraping a real dljob-operator (prometheus_process.h) while a job runs on
// dljob-test-apiserver: the per-job series arrive under the names and labels documented in
// docs/reference/metrics.md — `namespace` and `dljob` kept as the operator wrote them, beside the
// scrape's own `job` and `instance`, nothing renamed `exported_*` — and every query of the Grafana
// dashboard (charts/dljob/dashboards/dljob.json, its template variables set to the running job)
// returns data: a non-empty result with no NaN. Fails, naming scripts/dev/setup.sh, when
// prometheus is not installed.
//
// Two jobs run, one after the other, so the timing histograms have grown while Prometheus watched
// (a rate over a series Prometheus first saw at its final value is 0, and a quantile of 0 is NaN).
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/chart/dashboard_queries.h"
#include "tests/operator/e2e_fixture.h"
#include "tests/operator/prometheus_process.h"

namespace dljob::testing {
namespace {

using kube::resources::kDLJobs;

constexpr char kScrapeJob[] = "dljob-operator";

// A documented family: its type and its own labels (docs/reference/metrics.md's table).
struct Documented {
  std::string type;
  std::set<std::string> labels;
};

// The table of docs/reference/metrics.md: "| `family` | type | `label`, `label` | what |".
std::map<std::string, Documented> DocumentedFamilies() {
  std::ifstream in("docs/reference/metrics.md");
  EXPECT_TRUE(in) << "run from the repository root";
  std::map<std::string, Documented> out;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| `dljob_", 0) != 0) continue;
    std::vector<std::string> cells;
    std::istringstream row(line.substr(1));
    for (std::string cell; std::getline(row, cell, '|');) cells.push_back(cell);
    if (cells.size() < 3) continue;
    auto ticked = [](const std::string& cell) {  // the `names` of a cell
      std::vector<std::string> names;
      for (size_t a = cell.find('`'); a != std::string::npos; a = cell.find('`', a + 1)) {
        size_t b = cell.find('`', a + 1);
        if (b == std::string::npos) break;
        names.push_back(cell.substr(a + 1, b - a - 1));
        a = b;
      }
      return names;
    };
    std::vector<std::string> family = ticked(cells[0]), labels = ticked(cells[2]);
    if (family.size() != 1) continue;
    std::string type = cells[1].substr(cells[1].find_first_not_of(' '));
    out[family[0]] = {type.substr(0, type.find(' ')), {labels.begin(), labels.end()}};
  }
  return out;
}

// A sample's value ("NaN" reads as NaN).
double ValueOf(const Json& sample) { return std::stod(sample["value"][1].get<std::string>()); }

// The names of a sample's labels.
std::set<std::string> LabelNames(const Json& sample) {
  std::set<std::string> names;
  for (const auto& [name, value] : sample["metric"].items()) names.insert(name);
  return names;
}

class PrometheusScrapeTest : public OperatorE2eTest {
 protected:
  void TearDown() override {
    if (HasFailure() && prometheus_) {
      std::string log = prometheus_->Log();
      if (log.size() > 6000) log = "..." + log.substr(log.size() - 6000);
      std::cerr << "--- prometheus (port " << prometheus_->port() << ") ---\n" << log << "\n";
    }
    prometheus_.reset();
    OperatorE2eTest::TearDown();
  }

  // The result of `expr` now; empty when it has none or Prometheus refused it (recorded).
  Json Samples(const std::string& expr) {
    Result<Json> r = prometheus_->Query(expr);
    last_error_ = r.ok() ? "" : r.status().message();
    return r.ok() ? *r : Json::array();
  }

  // Whether `expr` has one sample, of value `want`, now.
  bool Is(const std::string& expr, double want) {
    Json s = Samples(expr);
    return s.size() == 1 && ValueOf(s[0]) == want;
  }

  std::unique_ptr<PrometheusProcess> prometheus_;
  std::string last_error_;
};

TEST_F(PrometheusScrapeTest, JobSeriesKeepTheirLabelsAndEveryDashboardQueryHasData) {
  StartCluster({.nodes = 1, .gpus_per_node = 8, .kubelet_delay_ms = 0});
  OperatorProcess& op = StartOperator();
  const int port = op.MetricsPort();
  ASSERT_GT(port, 0) << op.Log();
  Result<std::unique_ptr<PrometheusProcess>> started =
      PrometheusProcess::Start(kScrapeJob, {"127.0.0.1:" + std::to_string(port)}, kWait);
  ASSERT_TRUE(started.ok()) << started.status().message();
  prometheus_ = std::move(*started);
  const std::string up = std::string("up{job=\"") + kScrapeJob + "\"}";
  ASSERT_TRUE(WaitFor([&] { return Is(up, 1); }, kWait)) << Samples(up).dump() << last_error_;

  // The first job makes the namespace's histogram series; Prometheus sees them before the second
  // job's start adds to them.
  const std::string starts = R"(dljob_job_start_duration_seconds_count{namespace="default"})";
  // Time limits on the running jobs give a waiting job a known start estimate.
  auto limited = [&](const std::string& name) {
    Json job = NewJob(name, 2, 1);
    job["spec"]["runPolicy"]["activeDeadlineSeconds"] = 3600;
    return job;
  };
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), limited("first")).ok());
  ASSERT_TRUE(WaitForPhase(api(), "first", "Running", kWait)) << Describe(api(), "first");
  ASSERT_TRUE(WaitFor([&] { return Is(starts, 1); }, kWait)) << Samples(starts).dump();

  ASSERT_TRUE(api().Create(kDLJobs, Ns(), limited("mnist")).ok());
  ASSERT_TRUE(WaitForPhase(api(), "mnist", "Running", kWait)) << Describe(api(), "mnist");
  // A job that needs the whole node waits for both, and is told when it should start.
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("waits", 8, 8)).ok());
  const std::string estimated = R"(dljob_job_estimated_start_time_seconds{dljob="waits"})";
  ASSERT_TRUE(WaitFor([&] { return Samples(estimated).size() == 1; }, kWait))
      << Describe(api(), "waits");
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_TRUE(cluster_->Say("mnist", rank, "epoch 1 starting").ok());
    ASSERT_TRUE(cluster_
                    ->Say("mnist", rank,
                          "DLJOB_METRIC {\"step\":10,\"images_per_sec\":1500,\"loss\":2.25,"
                          "\"world_size\":2,\"rank\":" +
                              std::to_string(rank) + "}")
                    .ok());
  }
  ASSERT_TRUE(WaitFor(
      [&] {
        return Is(starts, 2) && Is(R"(dljob_job_step{dljob="mnist"})", 10) &&
               Is(R"(dljob_job_loss{dljob="mnist"})", 2.25) &&
               Is(R"(dljob_job_metric_lines_total{dljob="mnist"})", 2);
      },
      kWait))
      << Samples(R"({job="dljob-operator", dljob="mnist"})").dump() << "\n"
      << Describe(api(), "mnist");

  // Every documented family arrives under its name with exactly its documented labels, plus the
  // scrape's job and instance (and le on a histogram's buckets).
  const std::map<std::string, Documented> documented = DocumentedFamilies();
  ASSERT_GE(documented.size(), 15u);
  for (const auto& [family, doc] : documented) {
    std::vector<std::pair<std::string, std::set<std::string>>> series;  // name → extra labels
    if (doc.type == "histogram") {
      series = {{family + "_bucket", {"le"}}, {family + "_sum", {}}, {family + "_count", {}}};
    } else {
      series = {{family, {}}};
    }
    for (auto& [name, want] : series) {
      want.insert(doc.labels.begin(), doc.labels.end());
      want.insert({"__name__", "job", "instance"});
      std::string selector = name + "{job=\"" + kScrapeJob + "\"";
      // The running job's series; a start estimate is only a waiting job's.
      const bool waiting = family == "dljob_job_estimated_start_time_seconds";
      if (doc.labels.count("dljob"))
        selector += waiting ? ", dljob=\"waits\"" : ", dljob=\"mnist\"";
      Json samples = Samples(selector + "}");
      EXPECT_FALSE(samples.empty()) << selector << "}: no series " << last_error_;
      for (const Json& s : samples) {
        EXPECT_EQ(LabelNames(s), want) << s.dump();
        if (doc.labels.count("dljob")) {
          EXPECT_EQ(s["metric"].value("namespace", ""), Ns()) << s.dump();
        }
      }
    }
  }
  // And nothing the operator exports was renamed by the scrape.
  const Json scraped = Samples(up.substr(2));  // {job="dljob-operator"}
  EXPECT_GT(scraped.size(), 20u) << scraped.dump();
  for (const Json& s : scraped) {
    for (const std::string& label : LabelNames(s)) {
      EXPECT_NE(label.rfind("exported_", 0), 0u) << s.dump();
    }
  }

  // Every dashboard query, for the running job: Grafana's $__rate_interval is at least four scrape
  // intervals; a minute covers every scrape of this test.
  std::ifstream in(kDashboardPath);
  ASSERT_TRUE(in) << "run from the repository root";
  const std::vector<DashboardQuery> queries = DashboardQueries(Json::parse(in));
  ASSERT_GE(queries.size(), 15u);
  const std::map<std::string, std::string> variables = {
      {"namespace", "default"}, {"dljob", "mnist"}, {"__rate_interval", "1m"}};
  std::map<std::string, std::string> answers;  // expr → what is wrong with its answer; "" if fine
  auto check = [&](const DashboardQuery& q) -> std::string {
    const std::string expr = SubstituteVariables(q.expr, variables);
    if (std::optional<LabelValuesQuery> lv = AsLabelValues(expr)) {
      Result<Json> values = prometheus_->LabelValues(lv->label, lv->selector);
      if (!values.ok()) return values.status().message();
      const std::string want = variables.at(lv->label);
      for (const Json& v : *values) {
        if (v == want) return "";
      }
      return "no " + want + " among " + values->dump();
    }
    Json samples = Samples(expr);
    if (!last_error_.empty()) return last_error_;
    if (samples.empty()) return "no data";
    for (const Json& s : samples) {
      if (std::isnan(ValueOf(s))) return "NaN in " + samples.dump();
    }
    return "";
  };
  bool all = WaitFor(
      [&] {
        bool ok = true;
        for (const DashboardQuery& q : queries) {
          std::string& answer = answers[q.where + ": " + q.expr];
          answer = check(q);
          ok = ok && answer.empty();
        }
        return ok;
      },
      kWait, 500);
  EXPECT_TRUE(all);
  for (const auto& [query, problem] : answers) EXPECT_EQ(problem, "") << query;
}

}  // namespace
}  // namespace dljob::testing
