// dljob submit
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <ostream>

#include "base/time_format.h"
#include "cli/command_registry.h"
#include "cli/commands.h"
#include "cli/job_loading.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "cli/terminal_observer.h"

namespace dljob {
namespace {

// The summary of a finished job: on `out` when it succeeded, else on `err`.
void PrintSummary(const DLJob& job, std::ostream& out, std::ostream& err) {
  const DLJobStatus& st = job.status;
  std::string duration = "-";
  auto start = ParseRfc3339(st.start_time), end = ParseRfc3339(st.completion_time);
  if (start && end) {
    duration = HumanDuration(std::chrono::duration_cast<std::chrono::seconds>(*end - *start));
  }
  std::ostream& o = st.phase == JobPhase::kSucceeded ? out : err;
  o << "job " << job.metadata.name << " " << PhaseName(st.phase) << " after " << duration;
  if (const auto& t = st.throughput) {
    char buf[128];
    if (t->step) o << ": step " << *t->step;
    if (t->images_per_sec) {
      std::snprintf(buf, sizeof buf, ", %.1f images/sec", *t->images_per_sec);
      o << buf;
    }
    if (t->words_per_sec) {
      std::snprintf(buf, sizeof buf, ", %.1f words/sec", *t->words_per_sec);
      o << buf;
    }
    if (t->accuracy) {
      std::snprintf(buf, sizeof buf, ", accuracy %.2f%%", *t->accuracy * 100);
      o << buf;
    }
    if (t->perplexity) {
      std::snprintf(buf, sizeof buf, ", validation perplexity %.2f", *t->perplexity);
      o << buf;
    }
  }
  o << "\n";
  if (st.phase != JobPhase::kSucceeded && !st.conditions.empty()) {
    for (const Condition& c : st.conditions) {
      if (c.type == PhaseName(st.phase)) o << "reason: " << c.reason << ": " << c.message << "\n";
    }
  }
  o << "details: dljob get " << job.metadata.name << " -o yaml   logs: dljob logs "
    << job.metadata.name << "\n";
}

// " -n NS" when the job is not in the backend's namespace, so a printed command finds it; ""
// for a backend without namespaces.
std::string NamespaceFlag(const DLJob& job, const Backend& backend) {
  const std::string& ns = job.metadata.namespace_;
  if (backend.Namespace().empty() || ns.empty() || ns == backend.Namespace()) return "";
  return " -n " + ns;
}

// `document`: the created job in that format instead of the line saying it was created.
void PrintCreated(const DLJob& job, const Backend& backend, std::optional<OutputFormat> document,
                  CliContext& ctx) {
  std::string name = job.metadata.name + NamespaceFlag(job, backend);
  if (document) {
    ctx.out << FormatJob(job, *document, ctx.clock.Now());
  } else {
    ctx.out << "dljob \"" << job.metadata.name << "\" created in namespace \""
            << job.metadata.namespace_ << "\"\n";
  }
  ctx.err << "follow it: dljob logs -f " << name << "   status: dljob get " << name
          << "   stop it: dljob delete " << name << "\n";
}

// What to tell a user whose submit failed, or "".
std::string SubmitHint(const Status& s, const DLJob& job, const Backend& backend) {
  if (s.code() == StatusCode::kAlreadyExists) {
    if (job.metadata.name.empty()) {  // a generateName: every name drawn was taken
      return "submit again to draw other names, or name the job with --name";
    }
    return "delete it first (dljob delete " + job.metadata.name + NamespaceFlag(job, backend) +
           ") or pick another name with --name";
  }
  if (s.message().find("not found next to dljob") != std::string::npos) {
    return "build dljob's programs (cmake --build build) or put the program on PATH";
  }
  if (s.message().find("does not exist") != std::string::npos) {
    return "check spec.data; Fashion-MNIST comes from: apt-get install dataset-fashion-mnist";
  }
  return "";
}

// -o: none (""), or yaml or json, the documents submit prints; kInvalidArgument for another.
Result<std::optional<OutputFormat>> DocumentFormat(const std::string& output) {
  if (output.empty()) return std::optional<OutputFormat>();
  Result<OutputFormat> format = ParseOutputFormat(output);
  if (!format.ok() || *format == OutputFormat::kTable || *format == OutputFormat::kWide) {
    return Status::InvalidArgument("submit prints the job as yaml or json, not \"" + output + "\"");
  }
  return std::optional<OutputFormat>(*format);
}

}  // namespace

int RunSubmit(const SubmitOptions& options, CliContext& ctx) {
  if (options.file.empty() && options.flags.command.empty()) {
    PrintError(ctx, "nothing to run: give -f FILE or a command after --",
               "dljob submit --local -f examples/mnist-job.yaml, or dljob submit --local "
               "--name NAME --gpus 2 --image IMAGE -- dljob-train --model=mnist_cnn");
    return kExitUsage;
  }
  Result<std::optional<OutputFormat>> format =
      DocumentFormat(options.dry_run && options.output.empty() ? "yaml" : options.output);
  if (!format.ok()) {
    PrintError(ctx, format.status().message(), "use -o yaml or -o json");
    return kExitUsage;
  }
  const std::optional<OutputFormat> document = *format;
  // The backend first (not for --dry-run): a cluster's context names the namespace a job without
  // one goes to.
  BackendPtr backend;
  if (!options.dry_run) {
    Result<BackendPtr> made = ctx.make_backend();
    if (!made.ok()) {
      PrintError(ctx, made.status().message());
      return made.status().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitFailed;
    }
    backend = std::move(made).value();
  }
  Result<DLJob> job =
      LoadJob(options.file, &options.flags, ctx, backend ? backend->Namespace() : "");
  if (!job.ok()) return kExitFailed;

  if (options.dry_run) {  // a job with no name shows its generateName: the name is not drawn yet
    ctx.out << FormatJob(*job, *document, ctx.clock.Now());
    return kExitOk;
  }

  // With -o, stdout carries only the document: the job's own output goes to stderr.
  std::ostream& job_out = document ? ctx.err : ctx.out;
  TerminalObserver::Options view;
  view.tty = ctx.err_is_tty;
  view.quiet = options.quiet;
  view.tag_ranks = job->spec.gpus.value_or(1) > 1;
  view.width = ctx.terminal_width;
  TerminalObserver observer(job_out, ctx.err, ctx.clock, view);
  Result<DLJob> done = backend->Submit(*job, observer);
  observer.Finish();
  if (!done.ok()) {
    PrintError(ctx, done.status().message(), SubmitHint(done.status(), *job, *backend));
    return kExitFailed;
  }
  if (!IsFinished(done->status.phase)) {  // a cluster backend: created, runs there
    PrintCreated(*done, *backend, document, ctx);
    return kExitOk;
  }
  PrintSummary(*done, job_out, ctx.err);
  if (document) ctx.out << FormatJob(*done, *document, ctx.clock.Now());
  switch (done->status.phase) {
    case JobPhase::kSucceeded:
      return kExitOk;
    case JobPhase::kInterrupted:
      return kExitInterrupted;
    default:
      return kExitFailed;
  }
}

void AddSubmitCommand(CommandRegistry& registry) {
  auto o = std::make_shared<SubmitOptions>();
  CLI::App* cmd = registry.Add(
      "submit", "Run a DLJob (from -f FILE or from flags -- CMD ARGS…) on the cluster or --local",
      [o](CommandShared& shared) {
        o->flags.command = shared.job_command;
        shared.backend.local = o->local;
        shared.backend.namespace_ = o->flags.namespace_;
        shared.needs_cluster = true;
        shared.install_interrupt_handlers();
        return RunSubmit(*o, shared.ctx);
      });
  cmd->add_flag("--local", o->local, "Run on this machine through mpirun (no cluster needed)");
  cmd->add_option("-f,--filename", o->file, "DLJob YAML or JSON file ('-' for stdin)");
  cmd->add_option("--name", o->flags.name,
                  "Job name (overrides the file's); without one, a name is made from the model or "
                  "image, e.g. resnet50-x7k2p");
  cmd->add_option("-n,--namespace", o->flags.namespace_, "Namespace (cluster backend)");
  cmd->add_option("--image", o->flags.image, "Container image (recorded; not pulled locally)");
  cmd->add_option("--gpus", o->flags.gpus, "Total GPUs, one MPI rank each");
  cmd->add_option("--gpus-per-worker", o->flags.gpus_per_worker, "GPUs per worker pod");
  cmd->add_option("--env", o->flags.env, "Environment variable KEY=VALUE (repeatable)");
  cmd->add_option("--data", o->flags.data,
                  "Data volume SOURCE:MOUNTPATH, e.g. hostPath:/srv/mnist:/data/mnist");
  cmd->add_option("--workdir", o->flags.working_dir, "Working directory of the command");
  cmd->add_option("--backoff-limit", o->flags.backoff_limit, "Whole-job restarts before failing");
  cmd->add_option("--active-deadline", o->flags.active_deadline_seconds,
                  "Stop the job after this many seconds");
  cmd->add_flag("--dry-run", o->dry_run, "Print the DLJob that would run, and stop");
  cmd->add_option("-o,--output", o->output,
                  "Print the job as yaml or json (with its name): the one created, the finished "
                  "one for --local, the one that would run for --dry-run (default yaml)");
  cmd->add_flag("-q,--quiet", o->quiet, "Show only progress, not the job's output");
  // --local and -n are submit's own (above); it takes the cluster flags of every job command.
  AddBackendFlags(cmd, registry.shared().backend, /*with_local_and_namespace=*/false,
                  /*with_all_namespaces=*/false);
  cmd->footer(std::string("The job's command goes after --, e.g.\n"
                          "  dljob submit --gpus 16 --image registry/trainer:cuda --data "
                          "oss://bucket/imagenet:/data -- dljob-train --model=resnet50\n"
                          "  dljob submit --local --gpus 2 --image dljob/trainer:cpu "
                          "-- dljob-train --model=mnist_cnn\n"
                          "Without --name (or a name in the file) the job is named after its model "
                          "or image, e.g. mnist-cnn-x7k2p.\n\n") +
              kBackendRule);
}

}  // namespace dljob
