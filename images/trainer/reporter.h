// Reporter: everything dljob-train prints.
//
// Two audiences. People read the tf_cnn_benchmarks-style text (a header, warm-up markers, a
// `Step Img/sec total_loss` table, test accuracy per epoch, `total images/sec:`), printed by rank
// 0 only. Machines read metric lines (jobs/metric_line.h), printed by every rank. The Format*
// functions are pure and build the text; Reporter decides who prints and flushes after every
// line, because stdout goes through mpirun's pipes and the operator follows it live. Warnings
// ("dljob-train: warning: ...") go to a second stream, stderr by default, from any rank.
//
// Thread-compatible. The streams are borrowed and must outlive the Reporter.
#pragma once

#include <cstdint>
#include <iostream>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "images/trainer/speed_stats.h"

namespace dljob::trainer {

struct HeaderInfo {
  std::string model;
  std::string dataset;
  int64_t global_batch = 0;
  int64_t per_device_batch = 0;
  int64_t num_batches = 0;
  double num_epochs = 0.0;
  std::string device;  // e.g. "cpu (no GPU found)"
  int ranks = 1;
  std::string collective;  // e.g. "mpi"
  int threads = 1;
  std::string optimizer;  // e.g. "momentum (0.9)"
  double learning_rate = 0.0;
};

// What the throughput counts: images (classifiers) or words (language models).
enum class RateUnit { kImages, kWords };

// What a metric line carries. Optional fields are left out of the line when unset.
struct MetricReport {
  int64_t step = 0;
  int64_t epoch = 0;
  std::optional<double> images_per_sec = std::nullopt;  // this rank's own rate
  std::optional<double> loss = std::nullopt;
  std::optional<double> accuracy = std::nullopt;
  int rank = 0;
  int world_size = 1;
  int64_t total_steps = 0;
  std::optional<double> words_per_sec = std::nullopt;  // this rank's own rate, language models
  std::optional<double> perplexity = std::nullopt;     // validation perplexity, language models
  std::optional<int64_t> resizes = std::nullopt;       // resumes at another world size so far

  // Sets images_per_sec or words_per_sec.
  void SetRate(RateUnit unit, double rate);
};

std::string FormatHeader(const HeaderInfo& info);
// "100\timages/sec: 1532.4 +/- 12.1 (jitter = 8.0)\t0.512" ("words/sec" for kWords)
std::string FormatStepRow(int64_t step, const SpeedStats& speed, double loss,
                          RateUnit unit = RateUnit::kImages);
// "Epoch 1: test accuracy = 0.8712 (8712 of 10000)"
std::string FormatAccuracy(int64_t epoch, double accuracy, int64_t correct, int64_t total);
// A dashed rule, "total images/sec: 1510.22", a dashed rule (three lines, no final newline);
// "total words/sec" for kWords.
std::string FormatTotal(double rate, RateUnit unit = RateUnit::kImages);
nlohmann::json MetricFields(const MetricReport& report);
// "loss\t<step>\t<loss with 9 significant digits>", for --print_losses.
std::string FormatLossTrace(int64_t step, double loss);

class Reporter {
 public:
  Reporter(std::ostream& out, int rank, std::ostream& err = std::cerr)
      : out_(out), err_(err), rank_(rank) {}

  // Human-readable text (any number of lines), rank 0 only.
  void Human(const std::string& text);
  // A metric line, every rank.
  void Metric(const MetricReport& report);
  // "dljob-train: warning: <text>" on the error stream, any rank.
  void Warning(const std::string& text);

  void Header(const HeaderInfo& info) { Human(FormatHeader(info)); }
  void WarmupStarted() { Human("Running warm up"); }
  void WarmupDone() { Human("Done warm up"); }
  void StepTableHeader(RateUnit unit = RateUnit::kImages) {
    Human(unit == RateUnit::kWords ? "Step\tWords/sec\ttotal_loss" : "Step\tImg/sec\ttotal_loss");
  }

 private:
  std::ostream& out_;
  std::ostream& err_;
  int rank_;
};

}  // namespace dljob::trainer
