// Prometheus text exposition (format 0.0.4): what the operator's /metrics endpoint answers.
//
// A Family is one metric name with its HELP text, TYPE and samples; each sample has its own label
// set. RenderText() writes families in the order given, samples in the order given, escaping
// HELP text (\\ and \n) and label values (\\, \" and \n) as the format requires; values are
// printed shortest-round-trip, with NaN and ±Inf spelled as Prometheus reads them. Names and label
// names are the caller's to get right (ValidMetricName checks one). Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dljob::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

struct Sample {
  Labels labels;
  double value = 0;
};

enum class MetricType { kGauge, kCounter };

struct Family {
  std::string name;  // "dljob_job_images_per_second"
  std::string help;
  MetricType type = MetricType::kGauge;
  std::vector<Sample> samples;
};

// The content type a scraper expects for RenderText's output.
inline constexpr const char* kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string RenderText(const std::vector<Family>& families);

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool ValidMetricName(std::string_view name);
std::string EscapeLabelValue(std::string_view value);
std::string FormatValue(double value);

}  // namespace dljob::metrics
