#include "jobs/metric_line.h"

#include <algorithm>
#include <cmath>

namespace dljob {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
    s.remove_suffix(1);
  return s;
}

// Reads an optional integer field; false when present with the wrong type.
bool ReadInt(const nlohmann::json& obj, const char* key, std::optional<int64_t>& out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return true;
  if (it->is_number_integer() || it->is_number_unsigned()) {
    out = it->get<int64_t>();
    return true;
  }
  // 12.0 is a fine step number from a script that computed it as a float.
  if (it->is_number_float()) {
    double d = it->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) {
      out = static_cast<int64_t>(d);
      return true;
    }
  }
  return false;
}

bool ReadDouble(const nlohmann::json& obj, const char* key, std::optional<double>& out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return true;
  if (!it->is_number()) return false;
  double d = it->get<double>();
  if (!std::isfinite(d)) return false;
  out = d;
  return true;
}

}  // namespace

std::optional<MetricSample> ParseMetricLine(std::string_view line) {
  line = Trim(line);
  if (line.substr(0, kMetricPrefix.size()) != kMetricPrefix) return std::nullopt;
  line.remove_prefix(kMetricPrefix.size());
  nlohmann::json obj = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!obj.is_object()) return std::nullopt;

  MetricSample s;
  std::optional<int64_t> step;
  if (!ReadInt(obj, "step", step) || !step || *step < 0) return std::nullopt;
  s.step = *step;
  bool ok = ReadInt(obj, "epoch", s.epoch) && ReadDouble(obj, "images_per_sec", s.images_per_sec) &&
            ReadDouble(obj, "loss", s.loss) && ReadDouble(obj, "accuracy", s.accuracy) &&
            ReadInt(obj, "rank", s.rank) && ReadInt(obj, "world_size", s.world_size) &&
            ReadInt(obj, "total_steps", s.total_steps) &&
            ReadDouble(obj, "words_per_sec", s.words_per_sec) &&
            ReadDouble(obj, "perplexity", s.perplexity) && ReadInt(obj, "resizes", s.resizes);
  if (!ok) return std::nullopt;
  if ((s.rank && *s.rank < 0) || (s.resizes && *s.resizes < 0) ||
      (s.world_size && *s.world_size <= 0) || (s.images_per_sec && *s.images_per_sec < 0) ||
      (s.words_per_sec && *s.words_per_sec < 0) || (s.perplexity && *s.perplexity < 1)) {
    return std::nullopt;
  }
  s.fields = std::move(obj);
  return s;
}

std::string FormatMetricLine(const nlohmann::json& fields) {
  return std::string(kMetricPrefix) + fields.dump();
}

void ProgressAggregator::Add(const MetricSample& sample, const std::string& now_rfc3339) {
  // A job resized to fewer ranks: the ranks that are gone no longer report, and must not count.
  if (sample.world_size && world_size_ && *sample.world_size < *world_size_) {
    latest_by_rank_.erase(latest_by_rank_.lower_bound(*sample.world_size), latest_by_rank_.end());
  }
  int64_t rank = sample.rank.value_or(0);
  MetricSample& slot = latest_by_rank_[rank];
  // A sample without a rate (e.g. an evaluation line) keeps the rank's last rate.
  std::optional<double> previous_rate = slot.images_per_sec;
  std::optional<double> previous_words = slot.words_per_sec;
  std::optional<double> previous_loss = slot.loss;
  slot = sample;
  if (!slot.images_per_sec) slot.images_per_sec = previous_rate;
  if (!slot.words_per_sec) slot.words_per_sec = previous_words;
  if (!slot.loss) slot.loss = previous_loss;

  if (sample.world_size) world_size_ = sample.world_size;
  if (sample.accuracy) accuracy_ = sample.accuracy;
  if (sample.perplexity) perplexity_ = sample.perplexity;
  if (!max_step_ || sample.step > *max_step_) max_step_ = sample.step;
  if (sample.epoch && (!max_epoch_ || *sample.epoch > *max_epoch_)) max_epoch_ = sample.epoch;
  if (sample.total_steps) total_steps_ = sample.total_steps;
  updated_at_ = now_rfc3339;
}

Throughput ProgressAggregator::Current() const {
  Throughput t;
  t.step = max_step_;
  t.epoch = max_epoch_;
  t.total_steps = total_steps_;
  t.accuracy = accuracy_;
  t.perplexity = perplexity_;
  t.updated_at = updated_at_;
  for (const auto& [rank, s] : latest_by_rank_) {
    if (!t.loss && s.loss) t.loss = s.loss;  // map order: lowest rank first
  }
  SumRates(&MetricSample::images_per_sec, &t.images_per_sec, &t.per_gpu_images_per_sec);
  SumRates(&MetricSample::words_per_sec, &t.words_per_sec, &t.per_gpu_words_per_sec);
  return t;
}

void ProgressAggregator::SumRates(std::optional<double> MetricSample::*rate,
                                  std::optional<double>* total,
                                  std::optional<double>* per_rank) const {
  double sum = 0;
  int64_t reporting = 0;
  for (const auto& [rank, s] : latest_by_rank_) {
    if (s.*rate) {
      sum += *(s.*rate);
      ++reporting;
    }
  }
  if (reporting == 0) return;
  int64_t ranks = std::max<int64_t>(reporting, world_size_.value_or(reporting));
  *total = sum * static_cast<double>(ranks) / static_cast<double>(reporting);
  *per_rank = **total / static_cast<double>(ranks);
}

}  // namespace dljob
