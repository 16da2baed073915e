// dljob: the command line. Each subcommand adds its flags and handler from its own file
// (commands.h, command_registry.h); this file lists them, parses with CLI11 and runs the chosen
// one. Nothing below a command throws to the user: every failure prints "error: …" and a
// hint, and the last-resort handler here turns anything unexpected into one line, not a trace.
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/backend_choice.h"
#include "cli/command_registry.h"
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
  return BackendPtr(
      new LocalBackend(JobStore(root), std::move(machine), std::move(options), RealClock()));
}

// The subcommands, in the order `dljob --help` lists them; each file adds its own
// (commands.h, command_registry.h).
constexpr void (*kCommands[])(CommandRegistry&) = {
    AddValidateCommand, AddSubmitCommand, AddListCommand,  AddGetCommand,
    AddLogsCommand,     AddDeleteCommand, AddTopCommand,   AddQueueCommands,
    AddBenchCommand,    AddAdviseCommand, AddDataCommands,
};

int Main(int argc, char** argv) {
  CliContext ctx{std::cout,       std::cerr, static_cast<bool>(isatty(STDERR_FILENO)),
                 TerminalWidth(), {},        RealClock()};
  std::string state_dir;
  CommandShared shared{
      ctx, {}, false, {}, InstallInterruptHandlers, [] { return static_cast<int>(g_interrupt); }};
  ctx.make_backend = [&]() { return MakeBackend(shared.backend, shared.needs_cluster, state_dir); };

  CLI::App app{"dljob: run distributed deep-learning training jobs (locally or on Kubernetes)",
               "dljob"};
  app.footer(kBackendRule);
  app.require_subcommand(1);
  app.set_version_flag("--version", "dljob 0.1.0");
  app.add_option("--state-dir", state_dir,
                 "Where local jobs are recorded (default ${XDG_STATE_HOME:-~/.local/state}/dljob)");
  CommandRegistry registry(app, shared);
  for (auto add : kCommands) add(registry);

  // Everything after the first "--" is the job's command, passed through untouched (CLI11 would
  // otherwise try to read "-c" or "--model=x" as dljob's own flags).
  std::vector<std::string> args(argv + 1, argv + argc);
  auto dashdash = std::find(args.begin(), args.end(), "--");
  if (dashdash != args.end()) {
    shared.job_command.assign(dashdash + 1, args.end());
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
  return registry.RunChosen();
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
