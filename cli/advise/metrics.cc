#include "cli/advise/metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace dljob::advise {
namespace {

std::optional<double> NumberField(const nlohmann::json& fields, const char* name) {
  auto it = fields.find(name);
  if (it == fields.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// Relative standard error of a rank's mean rate, from its window rates; 0 when too few.
double RelativeNoise(const std::vector<double>& windows) {
  if (windows.size() < 3) return 0;
  const double median = Median(windows);
  if (median <= 0) return 0;
  std::vector<double> deviations;
  for (double w : windows) deviations.push_back(std::fabs(w - median));
  const double sigma = 1.4826 * Median(deviations);
  return sigma / median / std::sqrt(static_cast<double>(windows.size()));
}

}  // namespace

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void SummarizeMetrics(const std::vector<TimedSample>& samples, TrialMeasurement& out) {
  bool words = false;
  for (const TimedSample& t : samples) {
    if (NumberField(t.sample.fields, "words_per_sec")) words = true;
  }
  std::map<int64_t, std::vector<double>> rates;  // by rank, in order
  std::optional<int64_t> world;
  std::optional<double> first;
  for (const TimedSample& t : samples) {
    first = std::min(first.value_or(t.seconds), t.seconds);
    if (t.sample.world_size) world = std::max(world.value_or(0), *t.sample.world_size);
    std::optional<double> rate =
        words ? NumberField(t.sample.fields, "words_per_sec") : t.sample.images_per_sec;
    if (rate && *rate > 0) rates[t.sample.rank.value_or(0)].push_back(*rate);
  }
  out.unit = words ? "words/sec" : "images/sec";
  if (first) out.startup_seconds = *first;
  if (rates.empty()) {
    out.ok = false;
    out.error = "no metric line carried " + std::string(words ? "words_per_sec" : "images_per_sec");
    return;
  }
  double sum = 0, noise = 0;
  for (const auto& [rank, r] : rates) {
    sum += r.back();
    noise = std::max(noise, RelativeNoise(std::vector<double>(r.begin(), r.end() - 1)));
  }
  const double reporting = static_cast<double>(rates.size());
  if (world && *world > static_cast<int64_t>(rates.size())) sum *= *world / reporting;
  out.throughput = sum;
  out.noise = noise;
}

}  // namespace dljob::advise
