#include "images/trainer/reporter.h"

#include <algorithm>
#include <cstdio>

#include "jobs/metric_line.h"

namespace dljob::trainer {
namespace {

constexpr const char* kRule = "----------------------------------------------------------------";

std::string Printf(const char* format, double a, double b = 0, double c = 0, double d = 0) {
  char buffer[256];
  std::snprintf(buffer, sizeof(buffer), format, a, b, c, d);
  return buffer;
}

std::string Field(const std::string& label, const std::string& value) {
  std::string line = label + ":";
  line.resize(std::max<size_t>(line.size() + 1, 15), ' ');
  return line + value + "\n";
}

const char* UnitName(RateUnit unit) { return unit == RateUnit::kWords ? "words" : "images"; }

}  // namespace

std::string FormatHeader(const HeaderInfo& info) {
  std::string out;
  out += Field("Model", info.model);
  out += Field("Dataset", info.dataset);
  out += Field("Mode", "training");
  out += Field("Batch size", std::to_string(info.global_batch) + " global");
  out += std::string(15, ' ') + std::to_string(info.per_device_batch) + " per device\n";
  out += Field("Num batches", std::to_string(info.num_batches));
  out += Field("Num epochs", Printf("%.2f", info.num_epochs));
  out += Field("Devices", info.device);
  out += Field("Ranks", std::to_string(info.ranks) + " (" + info.collective + ")");
  out += Field("Threads", std::to_string(info.threads) + " per rank");
  out += Field("Optimizer", info.optimizer);
  out += Field("Learning rate", Printf("%g", info.learning_rate));
  out.pop_back();  // Human() adds the final newline
  return out;
}

void MetricReport::SetRate(RateUnit unit, double rate) {
  (unit == RateUnit::kWords ? words_per_sec : images_per_sec) = rate;
}

std::string FormatStepRow(int64_t step, const SpeedStats& speed, double loss, RateUnit unit) {
  return std::to_string(step) + "\t" + UnitName(unit) +
         Printf("/sec: %.1f +/- %.1f (jitter = %.1f)\t%.3f", speed.mean, speed.uncertainty,
                speed.jitter, loss);
}

std::string FormatAccuracy(int64_t epoch, double accuracy, int64_t correct, int64_t total) {
  return "Epoch " + std::to_string(epoch) + Printf(": test accuracy = %.4f", accuracy) + " (" +
         std::to_string(correct) + " of " + std::to_string(total) + ")";
}

std::string FormatTotal(double rate, RateUnit unit) {
  return std::string(kRule) + "\ntotal " + UnitName(unit) + Printf("/sec: %.2f", rate) + "\n" +
         kRule;
}

nlohmann::json MetricFields(const MetricReport& report) {
  nlohmann::json fields = {{"step", report.step}, {"epoch", report.epoch}};
  if (report.images_per_sec) fields["images_per_sec"] = *report.images_per_sec;
  if (report.loss) fields["loss"] = *report.loss;
  if (report.accuracy) fields["accuracy"] = *report.accuracy;
  if (report.words_per_sec) fields["words_per_sec"] = *report.words_per_sec;
  if (report.perplexity) fields["perplexity"] = *report.perplexity;
  fields["rank"] = report.rank;
  fields["world_size"] = report.world_size;
  fields["total_steps"] = report.total_steps;
  if (report.resizes) fields["resizes"] = *report.resizes;
  return fields;
}

std::string FormatLossTrace(int64_t step, double loss) {
  return "loss\t" + std::to_string(step) + Printf("\t%.9g", loss);
}

void Reporter::Human(const std::string& text) {
  if (rank_ != 0) return;
  out_ << text << '\n';
  out_.flush();
}

void Reporter::Warning(const std::string& text) {
  err_ << "dljob-train: warning: " << text << '\n';
  err_.flush();
}

void Reporter::Metric(const MetricReport& report) {
  out_ << FormatMetricLine(MetricFields(report)) << '\n';
  out_.flush();
}

}  // namespace dljob::trainer
