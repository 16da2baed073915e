// The dljob commands, each a function from its parsed options to an exit code.
//
// Each cmd_*.cc adds its subcommands to the command line (Add…Command, through
// command_registry.h), binding their flags to these option structs; main.cc lists the Add
// functions once. The Run functions do the work through the Backend interface and print through
// the context's streams, so they can be driven from tests. Exit codes: 0 success; 1 the job
// failed, a file is invalid, or a job is not found; 2 usage error; 130 the job was interrupted.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "base/clock.h"
#include "cli/backend/backend.h"
#include "cli/job_flags.h"
#include "cli/output.h"

namespace CLI {
class App;
}  // namespace CLI

namespace dljob {

class CommandRegistry;

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInterrupted = 130;

struct CliContext {
  std::ostream& out;
  std::ostream& err;
  bool err_is_tty = false;
  size_t terminal_width = 0;
  // The backend the command's flags chose (backend_choice.h); its error says what to do.
  std::function<Result<BackendPtr>()> make_backend;
  // The one source of time for the commands (ages, progress, polling waits): RealClock() in
  // main.cc.
  Clock& clock;
};

// "error: <cause>" and, if given, "hint: <what to do>" on ctx.err.
void PrintError(CliContext& ctx, const std::string& cause, const std::string& hint = "");

// A command's -o value (output.h's ParseOutputFormat); when it is not one, the error and the
// formats to use are printed on ctx.err.
Result<OutputFormat> ParseOutputFlag(CliContext& ctx, const std::string& name);

struct ValidateOptions {
  std::string file;
};
int RunValidate(const ValidateOptions& options, CliContext& ctx);

struct SubmitOptions {
  bool local = false;
  std::string file;  // "" = the flag form
  SubmitFlags flags;
  bool dry_run = false;
  std::string output;  // yaml or json: print the job (for --dry-run the default is yaml)
  bool quiet = false;
};
int RunSubmit(const SubmitOptions& options, CliContext& ctx);

struct ListOptions {
  std::string output;
  bool all_namespaces = false;  // cluster: every namespace, with a NAMESPACE column
};
int RunList(const ListOptions& options, CliContext& ctx);

struct GetOptions {
  std::string name;
  std::string output;
};
int RunGet(const GetOptions& options, CliContext& ctx);

struct LogsOptions {
  std::string name;
  bool follow = false;
  std::optional<int> rank;
};
int RunLogs(const LogsOptions& options, CliContext& ctx);

struct DeleteOptions {
  std::vector<std::string> names;
  bool ignore_not_found = false;
};
int RunDelete(const DeleteOptions& options, CliContext& ctx);

// dljob top: the unfinished jobs (all with `all`) and how fast they train.
struct TopOptions {
  std::string output;
  bool all = false;
  bool all_namespaces = false;
};
int RunTop(const TopOptions& options, CliContext& ctx);

// dljob top nodes: the cluster's nodes and GPUs (cmd_top_nodes.cc, node_report.h).
struct TopNodesOptions {
  std::string output;
};
int RunTopNodes(const TopNodesOptions& options, CliContext& ctx);

// dljob queue list | get NAME: the cluster's DLQueues (cmd_queue.cc, queue_report.h).
struct QueueListOptions {
  std::string output;
};
int RunQueueList(const QueueListOptions& options, CliContext& ctx);

struct QueueGetOptions {
  std::string name;
  std::string output;
  bool all = false;  // finished jobs too
};
int RunQueueGet(const QueueGetOptions& options, CliContext& ctx);

// `dljob data …`: record-shard datasets (cmd_data.cc, storage/).
struct DataPackOptions {
  std::string from, to;
  uint64_t records_per_shard = 16384;  // 0 = no limit
  uint64_t shard_size_mb = 256;        // 0 = no limit
};
int RunDataPack(const DataPackOptions& options, CliContext& ctx);

struct DataLsOptions {
  std::string dir;
  std::string output;  // "", json or wide
};
int RunDataLs(const DataLsOptions& options, CliContext& ctx);

struct DataVerifyOptions {
  std::string dir;
};
int RunDataVerify(const DataVerifyOptions& options, CliContext& ctx);

// dljob bench: the scaling table of dljob-train across rank counts (bench_report.h).
struct BenchOptions;
int RunBench(const BenchOptions& options, CliContext& ctx);

// dljob advise: right-sizing by short trials on this machine (cmd_advise.cc, cli/advise/).
// `interrupt_requested` returns the signal that asked to stop (Ctrl-C), else 0.
struct AdviseCommandOptions;
int RunAdvise(const AdviseCommandOptions& options, CliContext& ctx,
              const std::function<int()>& interrupt_requested);

// dljob data cache: copies a dataset from object storage (or a NAS directory) to local disk.
struct DataCacheOptions {
  std::string from, to;
  std::string endpoint, region;  // override OSS_ENDPOINT / AWS_REGION
  int parallel = 8;
  bool no_verify = false;
};
int RunDataCache(const DataCacheOptions& options, CliContext& ctx);

// The subcommands, each added by its own file, in the order `dljob --help` lists them.
void AddValidateCommand(CommandRegistry& registry);  // cmd_validate.cc
void AddSubmitCommand(CommandRegistry& registry);    // cmd_submit.cc
void AddListCommand(CommandRegistry& registry);      // cmd_jobs.cc
void AddGetCommand(CommandRegistry& registry);       // cmd_jobs.cc
void AddLogsCommand(CommandRegistry& registry);      // cmd_jobs.cc
void AddDeleteCommand(CommandRegistry& registry);    // cmd_jobs.cc
void AddTopCommand(CommandRegistry& registry);       // cmd_jobs.cc
// `top nodes`, under `top` (cmd_top_nodes.cc); AddTopCommand calls it.
void AddTopNodesCommand(CommandRegistry& registry, CLI::App* top);
void AddQueueCommands(CommandRegistry& registry);  // cmd_queue.cc: queue list|get
void AddBenchCommand(CommandRegistry& registry);   // cmd_bench.cc
void AddDataCommands(CommandRegistry& registry);   // cmd_data.cc: data pack|ls|verify|cache
void AddAdviseCommand(CommandRegistry& registry);  // cmd_advise.cc

}  // namespace dljob
