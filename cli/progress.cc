#include "cli/progress.h"

#include <cstdio>

#include "base/human_format.h"

namespace dljob {

void EtaEstimator::Observe(int64_t step, std::chrono::steady_clock::time_point t) {
  if (last_ && step < last_->first) first_.reset();
  if (!first_) first_ = {step, t};
  last_ = {step, t};
}

std::optional<std::chrono::seconds> EtaEstimator::Remaining(int64_t total_steps) const {
  if (!first_ || !last_ || last_->first <= first_->first || total_steps <= last_->first) {
    return std::nullopt;
  }
  double secs = std::chrono::duration<double>(last_->second - first_->second).count();
  double rate = static_cast<double>(last_->first - first_->first) / secs;
  if (rate <= 0) return std::nullopt;
  return std::chrono::seconds(static_cast<int64_t>((total_steps - last_->first) / rate + 0.5));
}

std::string FormatProgress(const DLJob& job, std::chrono::seconds elapsed,
                           std::optional<std::chrono::seconds> eta, size_t width) {
  std::string out = job.metadata.name + "  " + PhaseName(job.status.phase);
  char buf[64];
  if (const auto& t = job.status.throughput) {
    if (t->step) {
      out += "  step " + std::to_string(*t->step);
      if (t->total_steps && *t->total_steps > 0) {
        out += "/" + std::to_string(*t->total_steps);
        std::snprintf(buf, sizeof buf, " %d%%",
                      static_cast<int>(100.0 * static_cast<double>(*t->step) /
                                       static_cast<double>(*t->total_steps)));
        out += buf;
      }
    }
    if (t->epoch) out += "  epoch " + std::to_string(*t->epoch);
    if (t->images_per_sec) {
      std::snprintf(buf, sizeof buf, "  %.1f img/s", *t->images_per_sec);
      out += buf;
    }
    if (t->words_per_sec) {
      std::snprintf(buf, sizeof buf, "  %.1f words/s", *t->words_per_sec);
      out += buf;
    }
    if (t->loss) {
      std::snprintf(buf, sizeof buf, "  loss %.4g", *t->loss);
      out += buf;
    }
    if (t->accuracy) {
      std::snprintf(buf, sizeof buf, "  acc %.1f%%", *t->accuracy * 100);
      out += buf;
    }
    if (t->perplexity) {
      std::snprintf(buf, sizeof buf, "  ppl %.1f", *t->perplexity);
      out += buf;
    }
  }
  out += "  " + ClockDuration(elapsed);
  if (eta) out += " ETA " + ClockDuration(*eta);
  if (width > 0 && out.size() > width) out.resize(width);
  return out;
}

}  // namespace dljob
