// dljob bench: runs dljob-train at several rank counts (per data set and strategy)
// through the same backend as `dljob submit`, one job after another, and prints the scaling
// table (bench_report.h). On the local backend each run finishes inside Submit; on a cluster the
// job is created and its record polled until it finishes.
#include <chrono>
#include <memory>

#include "base/env.h"
#include "cli/bench_report.h"
#include "cli/command_registry.h"
#include "cli/commands.h"
#include "jobs/codec.h"
#include "jobs/defaults.h"

namespace dljob {
namespace {

// Shows nothing of a run's output; the bench prints one line per run.
class QuietObserver : public JobObserver {
 public:
  void OnOutput(int, bool, std::string_view) override {}
  void OnUpdate(const DLJob&) override {}
  void OnNotice(std::string_view) override {}
};

Result<DLJob> RunOne(Backend& backend, Clock& clock, DLJob job) {
  QuietObserver quiet;
  Result<DLJob> done = backend.Submit(job, quiet);
  if (!done.ok()) return done.status();
  while (!IsFinished(done->status.phase)) {  // a cluster: poll the record
    clock.SleepFor(std::chrono::seconds(2));
    done = backend.Get(job.metadata.name);
    if (!done.ok()) return done.status();
  }
  return done;
}

std::string FailureOf(const DLJob& job) {
  for (const Condition& c : job.status.conditions) {
    if (c.type == PhaseName(job.status.phase) && !c.message.empty()) return c.message;
  }
  return std::string("the job ended ") + PhaseName(job.status.phase);
}

}  // namespace

int RunBench(const BenchOptions& options, CliContext& ctx) {
  if (!options.output.empty() && options.output != "json" && options.output != "yaml") {
    PrintError(ctx, "-o " + options.output + ": dljob bench prints a table, json or yaml",
               "use -o json or -o yaml, or leave -o out for the table");
    return kExitUsage;
  }
  Result<std::vector<BenchRun>> runs = PlanBench(options);
  if (!runs.ok()) {
    PrintError(ctx, runs.status().message(), "see: dljob bench --help");
    return kExitUsage;
  }
  Result<BackendPtr> backend = ctx.make_backend();
  if (!backend.ok()) {
    PrintError(ctx, backend.status().message());
    return kExitFailed;
  }
  std::vector<BenchResult> results;
  for (BenchRun& run : *runs) {
    ApplyDefaults(run.job);
    if (!(*backend)->Namespace().empty()) run.job.metadata.namespace_ = (*backend)->Namespace();
    ctx.err << "bench: " << options.model << " " << run.data << " " << run.strategy << " on "
            << run.ranks << (run.ranks == 1 ? " rank" : " ranks") << " ... ";
    ctx.err.flush();
    (*backend)->Delete(run.job.metadata.name);  // a leftover from an earlier bench
    BenchResult result{run.data, run.strategy, run.ranks, std::nullopt, ""};
    Result<DLJob> done = RunOne(**backend, ctx.clock, run.job);
    if (!done.ok()) {
      result.error = done.status().message();
    } else if (done->status.phase != JobPhase::kSucceeded) {
      result.error = FailureOf(*done);
    } else if (done->status.throughput && done->status.throughput->images_per_sec) {
      result.images_per_sec = *done->status.throughput->images_per_sec;
    } else if (done->status.throughput && done->status.throughput->words_per_sec) {
      result.images_per_sec = *done->status.throughput->words_per_sec;
      result.words = true;
    } else {
      result.error = "the job reported no images/sec";
    }
    ctx.err << (result.images_per_sec
                    ? std::to_string(static_cast<int64_t>(*result.images_per_sec)) +
                          (result.words ? " words/sec" : " images/sec")
                    : "failed: " + result.error)
            << "\n";
    if (!options.keep) (*backend)->Delete(run.job.metadata.name);
    results.push_back(result);
  }
  std::vector<BenchRow> rows = ScalingRows(results);
  if (options.output == "json") {
    ctx.out << BenchJson(options.model, options.batch_size, rows).dump(2) << "\n";
  } else if (options.output == "yaml") {
    ctx.out << JsonToYaml(BenchJson(options.model, options.batch_size, rows));
  } else {
    ctx.out << FormatBenchTable(options.model, rows);
  }
  if (!options.plot.empty()) {
    Status written = DefaultEnv().WriteFileAtomically(options.plot, BenchSvg(options.model, rows));
    if (!written.ok()) {
      PrintError(ctx, "cannot write the plot: " + written.message(), "check the directory exists");
      return kExitFailed;
    }
    ctx.err << "plot: " << options.plot << "\n";
  }
  for (const BenchRow& r : rows) {
    if (!r.images_per_sec) return kExitFailed;
  }
  return kExitOk;
}

void AddBenchCommand(CommandRegistry& registry) {
  auto bench = std::make_shared<BenchOptions>();
  CLI::App* b =
      registry.Add("bench",
                   "Train a model at several rank counts (per data set and strategy); print "
                   "images/sec and scaling efficiency",
                   [bench](CommandShared& shared) {
                     shared.needs_cluster = true;  // as submit: --local, or a configured cluster
                     shared.install_interrupt_handlers();
                     return RunBench(*bench, shared.ctx);
                   });
  b->add_option("--model", bench->model, "dljob-train model")->capture_default_str();
  b->add_option("--gpus", bench->gpus, "Rank counts to run, e.g. 1,2,4")->capture_default_str();
  b->add_option("--strategies", bench->strategies,
                "Gradient exchange, comma-separated: fused (tensor fusion, overlapped with "
                "backward), per-tensor, no-overlap (fused after backward), fp16 (fused, "
                "half-precision wire), hierarchical (intra-node reduce-scatter/allgather around "
                "an inter-node allreduce), parameter-server (reduce to rank 0, update there, "
                "broadcast), 2bit (MXNet-style 2-bit gradient compression with error feedback, "
                "packed codes allgathered after backward)")
      ->capture_default_str();
  b->add_option("--data", bench->data,
                "Data sets, comma-separated: synthetic (no I/O, the baseline), fashion-mnist, "
                "imagenet (record shards); each gets its own rows and scaling baseline")
      ->capture_default_str();
  b->add_option("--data-dir", bench->data_dir,
                "--data_dir of the non-synthetic runs, as the ranks see it (default: "
                "dljob-train's)");
  b->add_option("--batch-size", bench->batch_size, "Batch size per rank")->capture_default_str();
  b->add_option("--num-batches", bench->num_batches, "Timed steps per run")->capture_default_str();
  b->add_option("--num-warmup-batches", bench->num_warmup_batches, "Untimed steps first")
      ->capture_default_str();
  b->add_option("--threads-per-rank", bench->threads_per_rank,
                "CPU threads of each rank (OMP_NUM_THREADS); 0: the runner's default (locally "
                "cores/ranks, so every run uses the whole machine and scaling shows overhead "
                "only); give 1 on CPUs to see how ranks scale over cores")
      ->capture_default_str();
  b->add_option("--image", bench->image, "Container image of the runs (cluster)")
      ->capture_default_str();
  b->add_option("-o,--output", bench->output, "json or yaml (default: a table)");
  b->add_option("--plot", bench->plot, "Also write an SVG plot of images/sec vs ranks to FILE");
  b->add_flag("--keep", bench->keep, "Keep each run's job record");
  AddBackendFlags(b, registry.shared().backend, /*with_local_and_namespace=*/true,
                  /*with_all_namespaces=*/false);
}

}  // namespace dljob
