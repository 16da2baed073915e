// Benchmark (b) of docs/benchmarks/README.md ("Targets and headline figures"): dljob-train's
// Trainer on synthetic data against a bare LibTorch loop of the same model and batch. Target: ratio
// >= 0.97.
//
// One process, one run: both sides get their own freshly initialised copy of the same model
// (same seed), the same fixed synthetic batch (SyntheticDataSource), the same SGD(momentum)
// and the same intra-op thread count. Repetitions alternate A-B / B-A so that drift (other
// processes, thermal) falls on both sides alike; each side is timed by the wall clock around
// `--steps` training steps, after `--warmup` untimed steps. The Trainer side is the library as
// dljob-train runs it (a LoopbackCollective: 1 rank, so the gradient "allreduce" is the fusion
// path over a one-rank collective) and includes everything Run() does — broadcast, optimizer
// creation, reporting to a discarded stream — so its overhead counts in full.
//
// --model=lstm_lm benchmarks the word-level LSTM language model the same way, on the King James
// Bible's training stream (--data=kjv, as dljob-train reads it; or --data=synthetic text) in BPTT
// windows: both sides carry the hidden state from window to window, backpropagate the loss
// summed over the window and clip the gradient norm (--clip, Zaremba et al.'s 5) before a plain
// SGD step (lr 1.0); the rates are words/sec.
//
//   trainer_vs_bare_bench --model=resnet18 --batch_size=16 --threads=1 --reps=5 --steps=3
//   trainer_vs_bare_bench --model=lstm_lm --data=kjv --batch_size=20 --reps=7 --steps=40
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <torch/torch.h>

#include "images/trainer/comm/loopback_collective.h"
#include "images/trainer/data/data_source.h"
#include "images/trainer/data/training_data.h"
#include "images/trainer/language_model_flags.h"
#include "images/trainer/models/builtin.h"
#include "images/trainer/reporter.h"
#include "images/trainer/trainer.h"

namespace dljob::trainer {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchConfig {
  std::string model = "resnet18";
  int64_t batch_size = 16;
  int threads = 1;
  int reps = 5;
  int64_t steps = 3;   // timed steps per repetition and side
  int64_t warmup = 2;  // untimed steps per side before the first repetition
  double learning_rate = 0.01;
  double momentum = 0.9;
  int64_t fusion_threshold_mb = 64;  // the Trainer's gradient fusion buffer, as dljob-train's flag
  // Language models (--model=lstm_lm, the small preset):
  std::string data = "kjv";  // kjv or synthetic
  double clip = 5.0;
};

// What both sides train: the model's task decides the data, the loss scale and the units.
struct Workload {
  bool words = false;            // a language model: rates in words/sec
  int64_t samples_per_step = 0;  // images, or batch x bptt words
  double loss_multiplier = 1.0;  // bptt for the language model (loss summed over the window)
  double clip = 0.0;
};

// A fresh data source per side, built as dljob-train builds it.
std::unique_ptr<DataSource> MakeSource(const ModelInfo& info, const BenchConfig& c,
                                       const LanguageModelSettings& lm) {
  const bool text = info.task == Task::kLanguageModel;
  Result<TrainingData> data =
      MakeTrainingData({text && c.data == "kjv" ? DataName::kKjv : DataName::kSynthetic, "",
                        info.input_shape, info.num_classes, 1, 0, c.batch_size, 42,
                        /*load_test=*/false, 1, info.task, lm.bptt, lm.model.vocab_size});
  if (!data.ok()) {
    std::cerr << "data: " << data.status().message() << "\n";
    std::exit(2);
  }
  return std::move(data->train);
}

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The baseline: what anyone would write with LibTorch alone.
class BareLoop {
 public:
  BareLoop(ModelPtr model, std::unique_ptr<DataSource> source, const Workload& w,
           const BenchConfig& c)
      : model_(std::move(model)),
        source_(std::move(source)),
        workload_(w),
        optimizer_(model_->parameters(),
                   torch::optim::SGDOptions(c.learning_rate).momentum(c.momentum)) {
    model_->train();
  }

  // Returns images (or words) per second over `steps` steps, from the data's first batch on.
  double Run(int64_t steps) {
    const Clock::time_point start = Clock::now();
    float loss_sum = 0;
    for (int64_t i = 0; i < steps; ++i) {
      const int64_t step = i % source_->steps_per_epoch();
      Batch batch = source_->Get(0, step);
      if (step == 0) model_->ResetState();  // the carried LSTM state starts at zero
      optimizer_.zero_grad();
      torch::Tensor logits = model_->forward(batch.images);
      torch::Tensor loss = torch::nn::functional::cross_entropy(
          logits.reshape({-1, logits.size(-1)}), batch.labels.reshape(-1));
      (workload_.loss_multiplier == 1.0 ? loss : loss * workload_.loss_multiplier).backward();
      if (workload_.clip > 0)
        torch::nn::utils::clip_grad_norm_(model_->parameters(), workload_.clip);
      optimizer_.step();
      loss_sum += loss.item<float>();  // a real loop looks at its loss; the trainer does too
    }
    if (!std::isfinite(loss_sum)) std::cerr << "warning: bare loop loss is not finite\n";
    return static_cast<double>(steps * workload_.samples_per_step) / Seconds(start);
  }

 private:
  ModelPtr model_;
  std::unique_ptr<DataSource> source_;
  Workload workload_;
  torch::optim::SGD optimizer_;
};

// dljob-train's loop: a Trainer per repetition, as dljob-train builds one per job.
class TrainerLoop {
 public:
  TrainerLoop(ModelPtr model, std::unique_ptr<DataSource> source, const Workload& w,
              const BenchConfig& c)
      : model_(std::move(model)),
        source_(std::move(source)),
        reporter_(discard_, /*rank=*/0),
        workload_(w),
        config_(c) {}

  // Returns images/sec over `steps` steps, wall clock around Trainer::Run().
  double Run(int64_t steps) {
    TrainerOptions options;
    options.batch_size = config_.batch_size;
    options.total_steps = steps;
    options.num_warmup_batches = 0;
    options.learning_rate = config_.learning_rate;
    options.momentum = config_.momentum;
    options.display_every = 1000000;
    options.fusion.threshold_bytes = static_cast<size_t>(config_.fusion_threshold_mb) << 20;
    options.rate_unit = workload_.words ? RateUnit::kWords : RateUnit::kImages;
    options.samples_per_step = workload_.samples_per_step;
    options.loss_multiplier = workload_.loss_multiplier;
    options.clip_grad_norm = workload_.clip;
    Trainer trainer(options, *model_, collective_, *source_, /*evaluator=*/nullptr, reporter_);
    const Clock::time_point start = Clock::now();
    Result<TrainResult> result = trainer.Run();
    const double seconds = Seconds(start);
    if (!result.ok()) {
      std::cerr << "trainer failed: " << result.status().message() << "\n";
      std::exit(1);
    }
    discard_.str("");
    return static_cast<double>(steps * workload_.samples_per_step) / seconds;
  }

 private:
  ModelPtr model_;
  LoopbackCollective collective_;
  std::unique_ptr<DataSource> source_;
  std::ostringstream discard_;
  Reporter reporter_;
  Workload workload_;
  BenchConfig config_;
};

std::string MachineDescription() {
  std::string cpu = "unknown CPU", line;
  std::ifstream cpuinfo("/proc/cpuinfo");
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  long kib = 0;
  meminfo >> key >> kib;
  std::ostringstream out;
  out << std::thread::hardware_concurrency() << " CPUs (" << cpu << "), " << (kib / 1024 / 1024)
      << " GiB RAM";
  return out.str();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int RunBench(const BenchConfig& c) {
  torch::set_num_threads(c.threads);
  const ModelRegistry registry = BuiltinModels();
  Result<const ModelInfo*> info = registry.Find(c.model);
  if (!info.ok()) {
    std::cerr << info.status().message() << "\n";
    return 2;
  }
  const ModelInfo& model = **info;
  const bool text = model.task == Task::kLanguageModel;
  const LanguageModelSettings lm = ResolveLanguageModel(LanguageModelFlags{});
  Workload w;
  w.words = text;
  w.samples_per_step = text ? c.batch_size * lm.bptt : c.batch_size;
  w.loss_multiplier = text ? static_cast<double>(lm.bptt) : 1.0;
  w.clip = text ? c.clip : 0.0;
  BenchConfig config = c;
  if (text) {  // Zaremba et al.: plain SGD at 1.0
    config.learning_rate = lm.learning_rate;
    config.momentum = 0.0;
  }
  auto create = [&] {
    torch::manual_seed(1);
    return text ? model.create_language_model(lm.model) : model.create();
  };
  BareLoop bare(create(), MakeSource(model, c, lm), w, config);
  TrainerLoop trained(create(), MakeSource(model, c, lm), w, config);
  const char* unit = text ? "words/s" : "img/s";

  std::cout << "machine: " << MachineDescription() << "\n"
            << "model " << c.model
            << (text ? " (small: 2 x 200, BPTT 20, vocabulary 10000, clip " +
                           std::to_string(c.clip) + ", data " + c.data + ")"
                     : "")
            << ", batch " << c.batch_size << ", " << c.threads << " intra-op thread(s), fusion "
            << c.fusion_threshold_mb << " MB, " << c.reps << " reps x " << c.steps
            << " steps per side\n";
  bare.Run(c.warmup);
  trained.Run(c.warmup);
  std::vector<double> bare_rates, trainer_rates, ratios;
  for (int rep = 0; rep < c.reps; ++rep) {
    double b = 0, t = 0;
    if (rep % 2 == 0) {
      b = bare.Run(c.steps);
      t = trained.Run(c.steps);
    } else {
      t = trained.Run(c.steps);
      b = bare.Run(c.steps);
    }
    bare_rates.push_back(b);
    trainer_rates.push_back(t);
    ratios.push_back(t / b);
    std::printf("rep %d  bare %9.2f %s  trainer %9.2f %s  ratio %.4f\n", rep, b, unit, t, unit,
                t / b);
  }
  std::printf(
      "median  bare %9.2f %s  trainer %9.2f %s  ratio of medians %.4f  "
      "median ratio %.4f  (target >= 0.97)\n",
      Median(bare_rates), unit, Median(trainer_rates), unit,
      Median(trainer_rates) / Median(bare_rates), Median(ratios));
  return 0;
}

}  // namespace
}  // namespace dljob::trainer

int main(int argc, char** argv) {
  dljob::trainer::BenchConfig c;
  CLI::App app("dljob-train's Trainer vs a bare LibTorch loop, same model and batch",
               "trainer_vs_bare_bench");
  app.add_option("--model", c.model);
  app.add_option("--batch_size", c.batch_size);
  app.add_option("--threads", c.threads);
  app.add_option("--reps", c.reps);
  app.add_option("--steps", c.steps);
  app.add_option("--warmup", c.warmup);
  app.add_option("--fusion_threshold_mb", c.fusion_threshold_mb);
  app.add_option("--data", c.data, "lstm_lm: kjv or synthetic");
  app.add_option("--clip", c.clip, "lstm_lm: gradient norm clip");
  CLI11_PARSE(app, argc, argv);
  try {
    return dljob::trainer::RunBench(c);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
