// The metric line: the contract between any training workload and dljob.
//
// A workload reports progress by printing one line to stdout:
//   DLJOB_METRIC
//   {"step":100,"epoch":1,"images_per_sec":2950.3,"loss":2.31,"rank":0,"world_size":16}
// Only "step" (a non-negative integer) is required. Known optional fields: epoch, images_per_sec
// (of the reporting rank), loss, accuracy (evaluation accuracy, 0..1), rank, world_size,
// total_steps (for an ETA), and for language models words_per_sec (of the reporting rank, in
// place of images_per_sec) and perplexity (validation perplexity), and resizes (how many times an
// elastic job has resumed at another world size; absent: never). Unknown fields are kept.
// Anything else — a line without the prefix, bad JSON, a missing or negative step, a known field of
// the wrong type — is not a metric line and is ignored; parsing never fails loudly.
//
// The local runner and the operator both parse with ParseMetricLine and fold samples into a job's
// Throughput with ProgressAggregator, so the two backends report the same numbers.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "jobs/dljob_types.h"

namespace dljob {

inline constexpr std::string_view kMetricPrefix = "DLJOB_METRIC ";

struct MetricSample {
  int64_t step = 0;
  std::optional<int64_t> epoch;
  std::optional<double> images_per_sec;
  std::optional<double> loss;
  std::optional<double> accuracy;
  std::optional<int64_t> rank;
  std::optional<int64_t> world_size;
  std::optional<int64_t> total_steps;
  std::optional<double> words_per_sec;
  std::optional<double> perplexity;
  std::optional<int64_t> resizes;
  nlohmann::json fields = nlohmann::json::object();  // the whole object, unknown fields included
};

// Accepts the line with or without a trailing newline/CR, and with leading whitespace.
std::optional<MetricSample> ParseMetricLine(std::string_view line);

// "DLJOB_METRIC {...}" for the given fields (no trailing newline). REQUIRES: fields is an object
// with an integer "step".
std::string FormatMetricLine(const nlohmann::json& fields);

// Folds samples from all ranks into the job's Throughput. Thread-compatible.
//
// Aggregation: each rank's latest sample counts. The job's images/sec is the sum of the latest
// images_per_sec of every rank that reported; when fewer ranks report than world_size says exist
// (scripts commonly log from rank 0 only), the sum is scaled up to world_size on the assumption
// that ranks run in lock step, as data-parallel ranks do. words/sec is summed the same way, on
// its own. A sample with a smaller world_size than before (an elastic job resized down) drops
// the samples of the ranks beyond it. step, epoch and total_steps are the highest seen; loss is the
// latest from the lowest-numbered reporting rank; accuracy and perplexity the latest reported by
// any rank.
class ProgressAggregator {
 public:
  void Add(const MetricSample& sample, const std::string& now_rfc3339);
  bool empty() const { return latest_by_rank_.empty(); }
  Throughput Current() const;

 private:
  // The job's rate from each rank's latest `rate`, scaled up to world_size (see above).
  void SumRates(std::optional<double> MetricSample::*rate, std::optional<double>* total,
                std::optional<double>* per_rank) const;

  std::map<int64_t, MetricSample> latest_by_rank_;  // samples without a rank count as rank 0
  std::optional<int64_t> world_size_;
  std::optional<double> accuracy_;
  std::optional<double> perplexity_;
  std::optional<int64_t> max_step_, max_epoch_, total_steps_;
  std::string updated_at_;
};

}  // namespace dljob
