// Prometheus text exposition (format 0.0.4): what the operator's /metrics endpoint answers.
//
// A Family is one metric name with its HELP text, TYPE and samples; each sample has its own label
// set. RenderText() writes families in the order given, samples in the order given, escaping
// HELP text (\\ and \n) and label values (\\, \" and \n) as the format requires; values are
// printed shortest-round-trip, with NaN and ±Inf spelled as Prometheus reads them.
//
// RenderText refuses (CheckFamily) a family that breaks Prometheus's rules or naming conventions,
// rather than export series a scraper would mangle: an invalid metric or label name, a counter not
// named `…_total` or a gauge that is, a label repeated in one sample, and the label names
// Prometheus reserves. `job` and `instance` name the scrape target (a scraped `job` label arrives
// renamed `exported_job`, so every query and dashboard written against `job` finds nothing), and
// names starting `__` are Prometheus's own. A job's series carry `dljob` and `namespace` instead
// (job_metrics.h). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"

namespace dljob::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

struct Sample {
  Sample() = default;
  Sample(Labels l, double v, std::string s = "")
      : labels(std::move(l)), value(v), suffix(std::move(s)) {}
  Labels labels;
  double value = 0;
  // Histograms only: which of its series this sample is, "_bucket" (labelled `le`), "_sum" or
  // "_count"; "" for gauges and counters.
  std::string suffix;
};

enum class MetricType { kGauge, kCounter, kHistogram };

struct Family {
  std::string name;  // "dljob_job_images_per_second"
  std::string help;
  MetricType type = MetricType::kGauge;
  std::vector<Sample> samples;
};

// The content type a scraper expects for RenderText's output.
inline constexpr const char* kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

// The families as exposition text; kInvalidArgument naming the family and the rule when one
// breaks a rule of CheckFamily (nothing is rendered then: a scraper gets all or nothing).
Result<std::string> RenderText(const std::vector<Family>& families);

// Ok, or why `family` may not be exported, e.g. `metric dljob_job_gpus: label "job" is reserved
// by Prometheus …`.
Status CheckFamily(const Family& family);

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool ValidMetricName(std::string_view name);
// [a-zA-Z_][a-zA-Z0-9_]*
bool ValidLabelName(std::string_view name);
// "" when `name` is a label name an exporter may use, else why not: `job`, `instance` and names
// starting `__` are reserved by Prometheus.
std::string ReservedLabelReason(std::string_view name);
std::string EscapeLabelValue(std::string_view value);
std::string FormatValue(double value);

// A Prometheus histogram: observations counted into cumulative buckets (the upper bounds given,
// then +Inf), with their sum and count, one set per combination of label values. Observe() and
// Collect() may be called from any thread at once.
class Histogram {
 public:
  // `upper_bounds` ascending; `label_names` the labels every observation gives values for.
  Histogram(std::string name, std::string help, std::vector<double> upper_bounds,
            std::vector<std::string> label_names);

  // REQUIRES: label_values.size() == label_names.size().
  void Observe(const std::vector<std::string>& label_values, double value);
  // The family as it stands, label sets in sorted order.
  Family Collect() const;

 private:
  struct Counts {
    std::vector<uint64_t> buckets;  // per upper bound, not cumulative; +Inf is count
    double sum = 0;
    uint64_t count = 0;
  };
  const std::string name_;
  const std::string help_;
  const std::vector<double> bounds_;
  const std::vector<std::string> label_names_;
  mutable Mutex mu_;
  std::map<std::vector<std::string>, Counts> series_ GUARDED_BY(mu_);
};

}  // namespace dljob::metrics
