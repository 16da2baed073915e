// `dljob bench`: the plan (which runs: model × strategy × rank count), the DLJob of each run, and
// the report the classic benchmark write-ups print — images/sec per rank count, per-rank
// throughput, and scaling efficiency against the smallest run of the same strategy — as a table,
// JSON, or an SVG plot of throughput against ranks with the ideal (linear) line.
//
// Pure functions; thread-safe. cmd_bench.cc runs the plan through a Backend.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "jobs/dljob_types.h"

namespace dljob {

struct BenchOptions {
  std::string model = "resnet18";
  std::string gpus = "1,2";  // rank counts, comma-separated
  // fused | per-tensor | no-overlap | fp16 | hierarchical | parameter-server | 2bit (dljob-train
  // flags in bench_report.cc's strategy table)
  std::string strategies = "fused";
  // synthetic | fashion-mnist | imagenet | kjv, comma-separated: real data beside the synthetic
  // baseline in one table. data_dir: --data_dir of the non-synthetic runs, as the ranks see it
  // ("" = dljob-train's default).
  std::string data = "synthetic";
  std::string data_dir;
  int batch_size = 32;   // per rank
  int num_batches = 30;  // timed steps per run
  int num_warmup_batches = 5;
  // > 0: OMP_NUM_THREADS of every rank, so each run uses ranks × this many cores and the
  // scaling column compares like with like on CPUs; 0: the runner's default (local: cores/ranks,
  // which makes every run use the whole machine).
  int threads_per_rank = 0;
  std::string image = "dljob/trainer:cpu";
  std::string name_prefix = "bench";
  std::string output;  // "", json, yaml
  std::string plot;    // write an SVG plot here
  bool keep = false;   // keep each run's job record
};

struct BenchRun {
  std::string data;
  std::string strategy;
  int ranks = 1;
  DLJob job;  // not yet defaulted
};

// The runs in order: for each data set, each strategy, each rank count ascending. Errors name
// the flag.
Result<std::vector<BenchRun>> PlanBench(const BenchOptions& options);

struct BenchResult {
  std::string data;
  std::string strategy;
  int ranks = 1;
  std::optional<double> images_per_sec;  // nullopt: the run failed or reported nothing
  std::string error;                     // why, when it failed
  bool words = false;                    // the rate counts words (a language model), not images
};

struct BenchRow {
  std::string data;
  std::string strategy;
  int ranks = 1;
  std::optional<double> images_per_sec, per_rank, efficiency;  // efficiency in 0..1+
  std::string error;
  bool words = false;  // the rates count words: the table, JSON and plot say words/sec
};

// Whether the rows' rates count words (dljob-train --model=lstm_lm) rather than images.
bool CountsWords(const std::vector<BenchRow>& rows);

// Per-rank throughput and efficiency against the smallest successful rank count of the same
// data and strategy: (ips_n / n) / (ips_base / base).
std::vector<BenchRow> ScalingRows(const std::vector<BenchResult>& results);

std::string FormatBenchTable(const std::string& model, const std::vector<BenchRow>& rows);
nlohmann::json BenchJson(const std::string& model, int batch_size,
                         const std::vector<BenchRow>& rows);
std::string BenchSvg(const std::string& model, const std::vector<BenchRow>& rows);

}  // namespace dljob
