// CommandRegistry: how each dljob subcommand joins the command line.
//
// Every cmd_*.cc has an Add…Command function (commands.h) that adds its CLI11 subcommand, binds
// the subcommand's flags to an options struct the handler owns, and registers the handler to run
// when the user chose that subcommand. main.cc calls those functions from one explicit list, in
// the order `dljob --help` shows the commands, parses the arguments, and runs the chosen handler
// (RunChosen). Nothing registers itself during static initialisation: the list in main.cc is the
// whole set.
//
// What the commands share during one run lives in CommandShared, owned by main.cc and borrowed by
// the registry for as long as it lives. Used from main's thread only.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/backend_choice.h"
#include "cli/commands.h"

namespace dljob {

// The state all commands of one dljob run share.
struct CommandShared {
  CliContext& ctx;
  // The flags that pick the backend (backend_choice.h), bound by every job command; ctx's
  // make_backend reads them.
  BackendFlags backend;
  // Set by commands that run jobs (submit, bench): without --local they need a cluster.
  bool needs_cluster = false;
  // The arguments after the first "--": the job's command (submit's CMD ARGS…).
  std::vector<std::string> job_command;
  // Called by commands that run jobs before they start one, so Ctrl-C stops the job cleanly.
  std::function<void()> install_interrupt_handlers;
  // After install_interrupt_handlers: the signal that asked to stop (SIGINT, SIGTERM), else 0.
  std::function<int()> interrupt_requested = [] { return 0; };
};

// Runs a chosen subcommand; returns the process's exit code (commands.h).
using CommandHandler = std::function<int(CommandShared&)>;

class CommandRegistry {
 public:
  CommandRegistry(CLI::App& app, CommandShared& shared) : app_(app), shared_(shared) {}
  CommandRegistry(const CommandRegistry&) = delete;
  CommandRegistry& operator=(const CommandRegistry&) = delete;

  CLI::App& app() { return app_; }
  CommandShared& shared() { return shared_; }

  // Adds the subcommand `name` under `parent` (the top-level app when null) and registers `run`
  // for it. Returns the subcommand, owned by CLI11, for its flags.
  CLI::App* Add(const std::string& name, const std::string& description, CommandHandler run,
                CLI::App* parent = nullptr);

  // After a successful parse: the handler of the subcommand chosen (a leaf: `data` itself has
  // none, `data pack` has), else kExitUsage. A command may have a handler and subcommands of its
  // own (`top`, `top nodes`): the subcommand, added after its parent, wins when both parsed.
  int RunChosen();

 private:
  CLI::App& app_;
  CommandShared& shared_;
  std::vector<std::pair<CLI::App*, CommandHandler>> commands_;
};

// Where jobs run and are read from: the footer of `dljob --help` and of every job command.
extern const char kBackendRule[];

// The flags that pick the backend, bound to `flags`, on a job command: --kubeconfig and --context
// always; --local and -n when `with_local_and_namespace` (submit binds its own); -A when
// `with_all_namespaces`. Sets kBackendRule as the command's footer.
void AddBackendFlags(CLI::App* cmd, BackendFlags& flags, bool with_local_and_namespace,
                     bool with_all_namespaces);

}  // namespace dljob
