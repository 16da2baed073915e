// dljob advise: right-sizing. Runs short trials of a job on this machine (cli/advise/: the plan,
// the runner, the saturation rule), prints the trials and the recommended resources.cpuPerGpu,
// memoryPerGpu, loader threads and data cache, writes an SVG plot, and with --apply writes the
// recommendation into the job file.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>

#include "base/env.h"
#include "base/human_format.h"
#include "base/progress_printer.h"
#include "cli/advise/advisor.h"
#include "cli/advise/apply.h"
#include "cli/advise/local_runner.h"
#include "cli/advise/recommendation.h"
#include "cli/advise/report.h"
#include "cli/advise/svg.h"
#include "cli/command_registry.h"
#include "cli/commands.h"
#include "cli/job_loading.h"
#include "cli/local/job_store.h"
#include "cli/local/local_backend.h"
#include "cli/progress.h"
#include "jobs/codec.h"
#include "jobs/defaults.h"

namespace dljob {

struct AdviseCommandOptions {
  std::string file;
  std::string name;
  advise::AdviseOptions advise;
  bool no_memory = false;
  std::string output;
  std::string svg;
  bool apply = false;
};

namespace {

namespace fs = std::filesystem;

std::string Describe(const advise::TrialRecord& t) {
  const advise::TrialSetting& s = t.setting;
  std::string d = "threads " + std::to_string(s.threads_per_rank);
  if (s.loader_threads) d += ", loader " + std::to_string(*s.loader_threads);
  if (!s.data_path.empty()) d += ", data " + s.data_path;
  if (s.memory_limit_bytes) d += ", cap " + HumanBytes(*s.memory_limit_bytes);
  return d;
}

// The progress of the trials on stderr: a redrawn line per running trial, a line per finished one.
class AdviseObserver : public JobObserver {
 public:
  explicit AdviseObserver(CliContext& ctx) : ctx_(ctx), line_(ctx.err, ctx.err_is_tty, "") {}

  void Started(const advise::TrialRecord& t, int planned) {
    // The memory axis stops at its first failure and reuses trials: the plan is an upper bound.
    prefix_ = "trial " + std::to_string(t.index) +
              " of <=" + std::to_string(std::max(planned, t.index)) + " (" + t.axis + ": " +
              Describe(t) + ")";
    start_ = ctx_.clock.MonotonicNow();
    line_.Show(prefix_ + " starting");
  }
  void Finished(const advise::TrialRecord& t) {
    line_.Clear();
    const advise::TrialMeasurement& m = t.measurement;
    char buf[160];
    if (m.ok) {
      std::snprintf(buf, sizeof buf, ": %.1f %s", m.throughput, m.unit.c_str());
    } else {
      std::snprintf(buf, sizeof buf, ": %s", m.out_of_memory ? "out of memory" : "failed");
    }
    ctx_.err << prefix_ << buf
             << (m.peak_memory_bytes ? ", peak " + HumanBytes(*m.peak_memory_bytes) : "")
             << (m.ok || m.error.empty() ? "" : " (" + m.error + ")") << "\n";
    ctx_.err.flush();
  }

  void OnOutput(int, bool, std::string_view) override {}
  void OnUpdate(const DLJob& job) override {
    if (!ctx_.err_is_tty) return;  // a log gets the line per trial only
    auto elapsed =
        std::chrono::duration_cast<std::chrono::seconds>(ctx_.clock.MonotonicNow() - start_);
    line_.Show(prefix_ + "  " + FormatProgress(job, elapsed, std::nullopt));
  }
  void OnNotice(std::string_view message) override {
    if (!seen_.insert(std::string(message)).second) return;  // each notice once, not per trial
    line_.Clear();
    ctx_.err << "note: " << message << "\n";
  }

 private:
  CliContext& ctx_;
  StatusLine line_;
  std::string prefix_;
  Clock::MonotonicTime start_;
  std::set<std::string> seen_;
};

std::string DefaultSvgPath(const std::string& file, const std::string& name) {
  if (!file.empty() && file != "-") {
    fs::path p(file);
    return (p.parent_path() / (p.stem().string() + "-advise.svg")).string();
  }
  return name + "-advise.svg";
}

Result<DLJob> LoadNamed(const std::string& name, CliContext& ctx) {
  Result<BackendPtr> backend = ctx.make_backend();
  if (!backend.ok()) return backend.status();
  if ((*backend)->Name() != "local") {
    return Status::InvalidArgument("advise runs trials on this machine: pass --local to read " +
                                   name + " from this machine's jobs, or -f its file");
  }
  Result<DLJob> job = (*backend)->Get(name);
  if (!job.ok()) return job.status();
  ApplyDefaults(*job);
  return job;
}

int WriteApply(const AdviseCommandOptions& o, const advise::Recommendation& rec,
               const std::string& cache_path, CliContext& ctx) {
  Result<std::string> text = ReadDocumentFile(o.file);
  if (!text.ok()) {
    PrintError(ctx, text.status().message());
    return kExitFailed;
  }
  Result<advise::AppliedFile> applied = advise::ApplyRecommendation(*text, rec, cache_path);
  if (!applied.ok()) {
    PrintError(ctx, applied.status().message(), "fix the file, then run advise again");
    return kExitFailed;
  }
  Env& env = DefaultEnv();
  if (!applied->warning.empty()) {
    if (Status s = env.WriteFileAtomically(o.file + ".bak", *text); !s.ok()) {
      PrintError(ctx, s.message(), "check the directory is writable");
      return kExitFailed;
    }
    ctx.err << "warning: " << applied->warning << "\n";
  }
  if (Status s = env.WriteFileAtomically(o.file, applied->text); !s.ok()) {
    PrintError(ctx, s.message(), "check the file is writable");
    return kExitFailed;
  }
  ctx.err << "applied to " << o.file << ":\n";
  for (const std::string& c : applied->changes) ctx.err << "  " << c << "\n";
  ctx.err << "check it: dljob validate -f " << o.file << "\n";
  return kExitOk;
}

}  // namespace

namespace {

// The usage errors that need no job; "" when the options are usable.
std::pair<std::string, std::string> UsageError(const AdviseCommandOptions& o) {
  if (o.file.empty() == o.name.empty()) {
    return {"give the job as -f FILE or as the name of one of this machine's jobs",
            "dljob advise -f examples/mnist-job.yaml"};
  }
  if (o.apply && o.file.empty()) {
    return {"--apply writes into the job file: give -f FILE", "dljob advise -f JOB.yaml --apply"};
  }
  if (!o.output.empty() && o.output != "json" && o.output != "yaml") {
    return {"-o " + o.output + ": dljob advise prints a table, json or yaml",
            "use -o json or -o yaml, or leave -o out for the table"};
  }
  return {"", ""};
}

Result<std::unique_ptr<advise::LocalTrialRunner>> MakeRunner(
    const LocalMachine& machine, const std::function<int()>& interrupt_requested, Clock& clock) {
  advise::LocalRunnerOptions options;
  options.clock = &clock;
  options.machine = machine;
  options.env = [env = machine.inherited_env](const std::string& k) {
    auto it = env.find(k);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  options.interrupt_requested = interrupt_requested;
  return advise::LocalTrialRunner::Create(std::move(options));
}

// The table (or -o json|yaml) on stdout and the plot; returns the recommendation.
advise::Recommendation Report(const AdviseCommandOptions& o, const DLJob& job,
                              const advise::AdvisePlan& plan, const advise::AdviceRun& run,
                              bool on_gpu, CliContext& ctx) {
  advise::AdviceContext context{job.metadata.name,      o.file, plan.ranks, plan.cpus,
                                on_gpu ? "GPU" : "CPU", {}};
  if (!plan.memory_note.empty()) context.notices.push_back("memory: " + plan.memory_note);
  for (const std::string& n : advise::NoiseNotes(run, o.advise.tolerance)) {
    context.notices.push_back(n);
  }
  advise::Recommendation rec = advise::Recommend(run, plan);
  std::vector<std::string> notes = advise::CarryOverNotes(on_gpu, o.file);
  if (o.output == "json") {
    ctx.out << advise::AdviceJson(context, run, rec, notes).dump(2) << "\n";
  } else if (o.output == "yaml") {
    ctx.out << JsonToYaml(nlohmann::json(advise::AdviceJson(context, run, rec, notes)));
  } else {
    ctx.out << advise::FormatTrialTable(run)
            << advise::FormatRecommendation(context, run, rec, notes);
  }
  ctx.out.flush();

  const std::string svg_path = o.svg.empty() ? DefaultSvgPath(o.file, job.metadata.name) : o.svg;
  Status written =
      DefaultEnv().WriteFileAtomically(svg_path, advise::AdviceSvg(job.metadata.name, run));
  if (!written.ok()) {
    PrintError(ctx, "cannot write the plot: " + written.message(),
               "pass --svg PATH in a writable place");
  } else {
    ctx.err << "plot: " << svg_path << "\n";
  }
  return rec;
}

}  // namespace

int RunAdvise(const AdviseCommandOptions& options, CliContext& ctx,
              const std::function<int()>& interrupt_requested) {
  AdviseCommandOptions o = options;
  if (auto [cause, hint] = UsageError(o); !cause.empty()) {
    PrintError(ctx, cause, hint);
    return kExitUsage;
  }
  if (o.no_memory) o.advise.memory_fractions.clear();
  Result<DLJob> job = o.file.empty() ? LoadNamed(o.name, ctx) : LoadJob(o.file, nullptr, ctx);
  if (!job.ok()) {
    if (o.file.empty()) PrintError(ctx, job.status().message(), "see: dljob list --local");
    return kExitFailed;
  }
  // A file that names its job only by generateName ("resnet50-"): the report calls it "resnet50".
  if (job->metadata.name.empty()) {
    std::string name = job->metadata.generate_name;
    while (name.size() > 1 && name.back() == '-') name.pop_back();
    job->metadata.name = name;
  }
  LocalMachine machine = LocalBackend::ProbeMachine();
  machine.cache_root = JobStore::DefaultRoot(machine.inherited_env) + "/cache";
  if (o.advise.cache_path.empty()) o.advise.cache_path = machine.cache_root;
  Result<std::unique_ptr<advise::LocalTrialRunner>> runner =
      MakeRunner(machine, interrupt_requested, ctx.clock);
  if (!runner.ok()) {
    PrintError(ctx, runner.status().message(), "check that $TMPDIR is writable");
    return kExitFailed;
  }
  std::string why_not;
  const bool can_limit = (*runner)->CanLimitMemory(&why_not);
  Result<advise::AdvisePlan> plan =
      advise::PlanAdvice(*job, o.advise, machine.cpus, can_limit, why_not);
  if (!plan.ok()) {
    PrintError(ctx, plan.status().message(), "see: dljob advise --help");
    return kExitUsage;
  }
  if (machine.gpus > 0 && plan->ranks > machine.gpus) {
    PrintError(ctx,
               "spec.gpus: " + std::to_string(plan->ranks) + " ranks but this machine has " +
                   std::to_string(machine.gpus) + " GPUs",
               "pass --ranks " + std::to_string(machine.gpus) + " (memoryPerGpu is per rank)");
    return kExitUsage;
  }
  for (const std::string& n : plan->notices) ctx.err << "note: " << n << "\n";

  AdviseObserver observer(ctx);
  advise::AdviceProgress progress;
  progress.started = [&](const advise::TrialRecord& t, int planned) {
    observer.Started(t, planned);
  };
  progress.finished = [&](const advise::TrialRecord& t) { observer.Finished(t); };
  advise::AdviceRun run = advise::RunAdvice(*job, *plan, o.advise, **runner, observer, progress);
  advise::Recommendation rec = Report(o, *job, *plan, run, machine.gpus > 0, ctx);

  if (run.interrupted) return kExitInterrupted;
  const bool any_ok = std::any_of(run.trials.begin(), run.trials.end(),
                                  [](const advise::TrialRecord& t) { return t.measurement.ok; });
  if (!any_ok) {
    PrintError(ctx, "no trial succeeded; nothing to recommend",
               "run the job once with dljob submit --local -f " +
                   (o.file.empty() ? std::string("FILE") : o.file) + " to see why it fails");
    return kExitFailed;
  }
  if (o.apply) return WriteApply(o, rec, o.advise.cache_path, ctx);
  return kExitOk;
}

void AddAdviseCommand(CommandRegistry& registry) {
  auto o = std::make_shared<AdviseCommandOptions>();
  CLI::App* cmd = registry.Add(
      "advise",
      "Right-size a job: run short trials on this machine and recommend cpuPerGpu, memoryPerGpu, "
      "loader threads and data caching",
      [o](CommandShared& shared) {
        shared.backend.local = true;  // a job name is read from this machine's jobs
        shared.install_interrupt_handlers();
        return RunAdvise(*o, shared.ctx, shared.interrupt_requested);
      });
  cmd->add_option("-f,--filename", o->file, "DLJob YAML or JSON file");
  cmd->add_option("name", o->name,
                  "Or the name of one of this machine's jobs (dljob list --local)");
  cmd->add_option("--threads", o->advise.threads,
                  "Threads per rank to try, e.g. 1,2,4 (default: powers of two up to twice a "
                  "rank's share of the cores)")
      ->delimiter(',');
  cmd->add_option("--loader-threads", o->advise.loader_threads,
                  "dljob-train --loader_threads to try, e.g. 1,2,4 (default: up to the cores, for "
                  "imagenet or a command that sets it; else not varied)")
      ->delimiter(',');
  cmd->add_option("--data", o->advise.data_paths,
                  "Data paths to try: store (read the source directly), cache (copy to local disk "
                  "first), local (hostPath/pvc in place); default: those that apply")
      ->delimiter(',');
  cmd->add_option("--memory-fractions", o->advise.memory_fractions,
                  "Memory caps to try, as fractions of the chosen setting's uncapped peak")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_flag("--no-memory", o->no_memory, "Do not cap memory (the peak is still measured)");
  cmd->add_option("--num-batches", o->advise.num_batches, "Steps per trial (dljob-train)")
      ->capture_default_str();
  cmd->add_option("--ranks", o->advise.ranks, "Ranks per trial (default: spec.gpus)");
  cmd->add_option("--repeats", o->advise.repeats, "Trials per setting; the median counts")
      ->capture_default_str();
  cmd->add_option("--tolerance", o->advise.tolerance,
                  "Within this fraction of the best counts as saturated")
      ->capture_default_str();
  cmd->add_option("--trial-timeout", o->advise.trial_timeout_seconds,
                  "Seconds before a trial is stopped")
      ->capture_default_str();
  cmd->add_option("--cache-path", o->advise.cache_path,
                  "cache.path written by --apply and used by nas:// cache trials (default: this "
                  "machine's dljob cache)");
  cmd->add_option("-o,--output", o->output, "json or yaml (default: a table)");
  cmd->add_option("--svg", o->svg,
                  "Where to write the plot (default: JOB-advise.svg next to the file)");
  cmd->add_flag("--apply", o->apply,
                "Write the recommendation into the job file (only the lines it changes)");
  cmd->footer(
      "Trials run on this machine. On a CPU-only machine the threads-per-rank and loader "
      "conclusions hold for CPU ranks only; the data-path and memory ones carry over. Run it on a "
      "GPU node to size a GPU job.\n  dljob advise -f examples/mnist-job.yaml --threads 1,2 "
      "--apply");
}

}  // namespace dljob
