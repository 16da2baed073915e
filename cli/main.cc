// dljob: the command line. Parses flags with CLI11 and hands each command to its Run function
// (commands.h). Nothing below a command throws to the user: every failure prints "error: …" and a
// hint, and the last-resort handler here turns anything unexpected into one line, not a trace.
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/backend_choice.h"
#include "cli/bench_report.h"
#include "cli/commands.h"
#include "cli/kube/kube_backend.h"
#include "cli/local/local_backend.h"

namespace {

// Set by SIGINT/SIGTERM while a job runs; read by the supervisor's loop. A signal handler can
// only talk through such a flag, so this one global lives here, at the edge.
volatile std::sig_atomic_t g_interrupt = 0;

void OnSignal(int sig) { g_interrupt = sig; }

void InstallInterruptHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: poll() returns at once
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
}

size_t TerminalWidth() {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

}  // namespace

namespace dljob {
namespace {

constexpr char kBackendRule[] =
    "Where jobs run and are read from:\n"
    "  --local                 this machine (mpirun); jobs recorded under --state-dir\n"
    "  otherwise               the Kubernetes cluster of --kubeconfig, else $KUBECONFIG, else the\n"
    "                          pod's service account, else ~/.kube/config (--context picks a\n"
    "                          context, -n a namespace; default: the context's)\n"
    "  no cluster configured   submit fails (use --local); list, get, logs, delete and top read\n"
    "                          this machine's jobs, as with --local";

// The flags that pick the backend, on every job command. submit binds -n and --local itself.
void AddBackendFlags(CLI::App* cmd, BackendFlags& b, bool with_local_and_namespace,
                     bool with_all_namespaces) {
  if (with_local_and_namespace) {
    cmd->add_flag("--local", b.local, "This machine's jobs, even when a cluster is configured");
    cmd->add_option("-n,--namespace", b.namespace_, "Namespace (default: the context's)");
  }
  cmd->add_option("--kubeconfig", b.kubeconfig, "Kubeconfig file (default: $KUBECONFIG, "
                  "in-cluster, ~/.kube/config)");
  cmd->add_option("--context", b.context, "Kubeconfig context (default: current-context)");
  if (with_all_namespaces) {
    cmd->add_flag("-A,--all-namespaces", b.all_namespaces, "Jobs in every namespace");
  }
  cmd->footer(kBackendRule);
}

void AddSubmitFlags(CLI::App* cmd, SubmitOptions& o) {
  cmd->add_flag("--local", o.local, "Run on this machine through mpirun (no cluster needed)");
  cmd->add_option("-f,--filename", o.file, "DLJob YAML or JSON file ('-' for stdin)");
  cmd->add_option("--name", o.flags.name, "Job name (overrides the file's)");
  cmd->add_option("-n,--namespace", o.flags.namespace_, "Namespace (cluster backend)");
  cmd->add_option("--image", o.flags.image, "Container image (recorded; not pulled locally)");
  cmd->add_option("--gpus", o.flags.gpus, "Total GPUs, one MPI rank each");
  cmd->add_option("--gpus-per-worker", o.flags.gpus_per_worker, "GPUs per worker pod");
  cmd->add_option("--env", o.flags.env, "Environment variable KEY=VALUE (repeatable)");
  cmd->add_option("--data", o.flags.data,
                  "Data volume SOURCE:MOUNTPATH, e.g. hostPath:/srv/mnist:/data/mnist");
  cmd->add_option("--workdir", o.flags.working_dir, "Working directory of the command");
  cmd->add_option("--backoff-limit", o.flags.backoff_limit, "Whole-job restarts before failing");
  cmd->add_option("--active-deadline", o.flags.active_deadline_seconds,
                  "Stop the job after this many seconds");
  cmd->add_flag("--dry-run", o.dry_run, "Print the DLJob that would run, and stop");
  cmd->add_option("-o,--output", o.output, "With --dry-run: yaml (default) or json");
  cmd->add_flag("-q,--quiet", o.quiet, "Show only progress, not the job's output");
}

// The backend `flags` choose (backend_choice.h), made; errors say what to do.
Result<BackendPtr> MakeBackend(const BackendFlags& flags, bool needs_cluster,
                               const std::string& state_dir) {
  Result<BackendKind> kind = ChooseBackend(flags, needs_cluster, ProbeClusterHints());
  if (!kind.ok()) return kind.status();
  if (*kind == BackendKind::kCluster) {
    kube::ConfigSource source;
    source.kubeconfig = flags.kubeconfig;
    source.context = flags.context;
    Result<BackendPtr> backend = MakeKubeBackend(source, flags.namespace_, flags.all_namespaces);
    if (!backend.ok()) {
      return Status::FailedPrecondition(
          "cannot load the cluster config: " + backend.status().message() +
          " (fix it, pass another with --kubeconfig FILE, or use --local for this machine)");
    }
    return backend;
  }
  LocalMachine machine = LocalBackend::ProbeMachine();
  std::string root = state_dir.empty() ? JobStore::DefaultRoot(machine.inherited_env) : state_dir;
  SupervisorOptions options;
  options.interrupt_requested = [] { return static_cast<int>(g_interrupt); };
  return BackendPtr(new LocalBackend(JobStore(root), std::move(machine), std::move(options)));
}

int Main(int argc, char** argv) {
  CliContext ctx{std::cout, std::cerr, static_cast<bool>(isatty(STDERR_FILENO)), TerminalWidth(),
                 {}};
  std::string state_dir;
  BackendFlags backend_flags;
  bool needs_cluster = false;
  ctx.make_backend = [&]() { return MakeBackend(backend_flags, needs_cluster, state_dir); };

  CLI::App app{"dljob: run distributed deep-learning training jobs (locally or on Kubernetes)"};
  app.footer(kBackendRule);
  app.require_subcommand(1);
  app.set_version_flag("--version", "dljob 0.1.0");
  app.add_option("--state-dir", state_dir,
                 "Where local jobs are recorded (default ${XDG_STATE_HOME:-~/.local/state}/dljob)");

  ValidateOptions validate;
  auto* v = app.add_subcommand("validate", "Check a DLJob file and print every problem");
  v->add_option("-f,--filename", validate.file, "DLJob YAML or JSON file ('-' for stdin)")
      ->required();

  SubmitOptions submit;
  auto* s = app.add_subcommand(
      "submit", "Run a DLJob (from -f FILE or from flags -- CMD ARGS…) on the cluster or --local");
  AddSubmitFlags(s, submit);
  AddBackendFlags(s, backend_flags, false, false);
  s->footer(std::string("The job's command goes after --, e.g.\n"
                        "  dljob submit --gpus 16 --image registry/trainer:cuda --data "
                        "oss://bucket/imagenet:/data -- dljob-train --model=resnet50\n"
                        "  dljob submit --local --name mnist --gpus 2 --image dljob/trainer:cpu "
                        "-- dljob-train --model=mnist_cnn\n\n") +
            kBackendRule);

  ListOptions list;
  auto* l = app.add_subcommand("list", "List jobs");
  l->alias("ls");
  l->add_option("-o,--output", list.output, "json, yaml or wide");
  AddBackendFlags(l, backend_flags, true, true);

  GetOptions get;
  auto* g = app.add_subcommand("get", "Show one job");
  g->add_option("name", get.name, "Job name")->required();
  g->add_option("-o,--output", get.output, "json, yaml or wide");
  AddBackendFlags(g, backend_flags, true, false);

  LogsOptions logs;
  auto* lg = app.add_subcommand("logs", "Print a job's output (all ranks, tagged)");
  lg->add_option("name", logs.name, "Job name")->required();
  lg->add_flag("-f,--follow", logs.follow, "Keep printing until the job finishes");
  lg->add_option("--rank", logs.rank, "Only this rank's lines");
  AddBackendFlags(lg, backend_flags, true, false);

  DeleteOptions del;
  auto* d = app.add_subcommand("delete", "Stop a job if it runs and remove it and its record");
  d->add_option("names", del.names, "Job names")->required();
  d->add_flag("--ignore-not-found", del.ignore_not_found, "Succeed if a job does not exist");
  AddBackendFlags(d, backend_flags, true, false);

  TopOptions top;
  auto* t = app.add_subcommand("top", "Show unfinished jobs with their GPUs and images/sec");
  t->add_option("-o,--output", top.output, "json, yaml or wide");
  t->add_flag("-a,--all", top.all, "Finished jobs too");
  AddBackendFlags(t, backend_flags, true, true);

  BenchOptions bench;
  auto* b = app.add_subcommand(
      "bench", "Train a model at several rank counts (per data set and strategy); print "
               "images/sec and scaling efficiency");
  b->add_option("--model", bench.model, "dljob-train model")->capture_default_str();
  b->add_option("--gpus", bench.gpus, "Rank counts to run, e.g. 1,2,4")->capture_default_str();
  b->add_option("--strategies", bench.strategies,
                "Gradient exchange, comma-separated: fused (tensor fusion, overlapped with backward), "
                "per-tensor, no-overlap (fused after backward), fp16 (fused, half-precision "
                "wire), hierarchical (intra-node reduce-scatter/allgather around an inter-node "
                "allreduce), parameter-server (reduce to rank 0, update there, broadcast)")
      ->capture_default_str();
  b->add_option("--data", bench.data,
                "Data sets, comma-separated: synthetic (no I/O, the baseline), fashion-mnist, "
                "imagenet (record shards); each gets its own rows and scaling baseline")
      ->capture_default_str();
  b->add_option("--data-dir", bench.data_dir,
                "--data_dir of the non-synthetic runs, as the ranks see it (default: "
                "dljob-train's)");
  b->add_option("--batch-size", bench.batch_size, "Batch size per rank")->capture_default_str();
  b->add_option("--num-batches", bench.num_batches, "Timed steps per run")->capture_default_str();
  b->add_option("--num-warmup-batches", bench.num_warmup_batches, "Untimed steps first")
      ->capture_default_str();
  b->add_option("--threads-per-rank", bench.threads_per_rank,
                "CPU threads of each rank (OMP_NUM_THREADS); 0: the runner's default (locally "
                "cores/ranks, so every run uses the whole machine and scaling shows overhead "
                "only); give 1 on CPUs to see how ranks scale over cores")
      ->capture_default_str();
  b->add_option("--image", bench.image, "Container image of the runs (cluster)")
      ->capture_default_str();
  b->add_option("-o,--output", bench.output, "json or yaml (default: a table)");
  b->add_option("--plot", bench.plot, "Also write an SVG plot of images/sec vs ranks to FILE");
  b->add_flag("--keep", bench.keep, "Keep each run's job record");
  AddBackendFlags(b, backend_flags, /*with_local_and_namespace=*/true,
                  /*with_all_namespaces=*/false);

  DataPackOptions pack;
  DataLsOptions data_ls;
  DataVerifyOptions verify;
  auto* data = app.add_subcommand("data", "Datasets as record shards: pack, ls, verify, cache");
  data->require_subcommand(1);
  auto* dp = data->add_subcommand("pack", "Pack Fashion-MNIST IDX files or a JPEG tree into shards");
  dp->add_option("--from", pack.from, "IDX directory, or folder of <class>/*.jpg")->required();
  dp->add_option("--to", pack.to, "Directory for the shards (created if missing)")->required();
  dp->add_option("--records-per-shard", pack.records_per_shard, "Records per shard (0: no limit)")
      ->capture_default_str();
  dp->add_option("--shard-size-mb", pack.shard_size_mb, "Shard size limit in MiB (0: no limit)")
      ->capture_default_str();
  auto* dl = data->add_subcommand("ls", "Show a packed dataset's splits, shards and classes");
  dl->add_option("dir", data_ls.dir, "Dataset directory")->required();
  dl->add_option("-o,--output", data_ls.output, "json or wide");
  auto* dv = data->add_subcommand("verify", "Check every record's CRC and every shard's index");
  dv->add_option("dir", verify.dir, "Dataset directory")->required();
  DataCacheOptions cache;
  auto* dc = data->add_subcommand(
      "cache", "Copy a dataset from object storage or NAS to local disk (resumable, verified)");
  dc->add_option("--from", cache.from, "oss://bucket/prefix, s3://bucket/prefix or a directory")
      ->required();
  dc->add_option("--to", cache.to, "Local directory, e.g. on an SSD (created if missing)")
      ->required();
  dc->add_option("--endpoint", cache.endpoint, "Object store endpoint (default $OSS_ENDPOINT)");
  dc->add_option("--region", cache.region, "Region for request signing");
  dc->add_option("--parallel", cache.parallel, "Downloads at once")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  dc->add_flag("--no-verify", cache.no_verify, "Skip MD5 and record-CRC checks");

  // Everything after the first "--" is the job's command, passed through untouched (CLI11 would
  // otherwise try to read "-c" or "--model=x" as dljob's own flags).
  std::vector<std::string> args(argv + 1, argv + argc);
  auto dashdash = std::find(args.begin(), args.end(), "--");
  if (dashdash != args.end()) {
    submit.flags.command.assign(dashdash + 1, args.end());
    args.erase(dashdash, args.end());
  }
  std::reverse(args.begin(), args.end());  // CLI11's vector form takes arguments in reverse
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string where = "dljob";
    for (const CLI::App* sub : app.get_subcommands()) where += " " + sub->get_name();
    PrintError(ctx, e.what(), "see: " + where + " --help");
    return kExitUsage;
  }

  if (*v) return RunValidate(validate, ctx);
  if (*s) {
    backend_flags.local = submit.local;
    backend_flags.namespace_ = submit.flags.namespace_;
    needs_cluster = true;
    InstallInterruptHandlers();
    return RunSubmit(submit, ctx);
  }
  if (*b) {
    needs_cluster = true;  // as submit: --local, or a configured cluster
    InstallInterruptHandlers();
    return RunBench(bench, ctx);
  }
  list.all_namespaces = top.all_namespaces = backend_flags.all_namespaces;
  if (*t) return RunTop(top, ctx);
  if (*l) return RunList(list, ctx);
  if (*g) return RunGet(get, ctx);
  if (*lg) return RunLogs(logs, ctx);
  if (*d) return RunDelete(del, ctx);
  if (*dp) return RunDataPack(pack, ctx);
  if (*dl) return RunDataLs(data_ls, ctx);
  if (*dv) return RunDataVerify(verify, ctx);
  if (*dc) return RunDataCache(cache, ctx);
  return kExitUsage;
}

}  // namespace
}  // namespace dljob

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);  // `dljob logs x | head` ends quietly instead of dying mid-write
  try {
    return dljob::Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "error: internal error: " << e.what()
              << "\nhint: this is a bug in dljob; please report it with the command you ran\n";
  } catch (...) {
    std::cerr << "error: internal error\nhint: this is a bug in dljob; please report it\n";
  }
  return 1;
}
