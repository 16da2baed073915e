// `dljob data pack|ls|verify|cache`: record-shard datasets (storage/) and cache warm-up
// (storage/objstore/). The work is in storage/pack.h, storage/dataset.h and
// storage/objstore/cache_warmup.h; this file declares the subcommands' flags and turns the
// results and progress into lines on the terminal (base/progress_printer.h) and their Statuses
// into "error: …" + "hint: …" and exit codes.
#include <chrono>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/human_format.h"
#include "base/progress_printer.h"
#include "cli/command_registry.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "storage/dataset.h"
#include "storage/objstore/cache_warmup.h"
#include "storage/objstore/open_store.h"
#include "storage/pack.h"

namespace dljob {
namespace {

const char kPackHint[] =
    "--from takes a Fashion-MNIST IDX directory (e.g. /usr/share/datasets/fashion-mnist) or a "
    "folder with one sub-folder of .jpg images per class";

double Seconds(const Clock& clock, Clock::MonotonicTime since) {
  return std::chrono::duration<double>(clock.MonotonicNow() - since).count();
}

nlohmann::json DatasetJson(const storage::DatasetInfo& info) {
  nlohmann::json splits = nlohmann::json::array();
  for (const storage::SplitInfo& s : info.splits) {
    nlohmann::json shards = nlohmann::json::array();
    for (const storage::ShardInfo& shard : s.shards) {
      shards.push_back({{"path", shard.path}, {"records", shard.records}, {"bytes", shard.bytes}});
    }
    splits.push_back(
        {{"name", s.name}, {"records", s.records}, {"bytes", s.bytes}, {"shards", shards}});
  }
  return {{"dir", info.dir},
          {"classes", info.classes},
          {"records", info.records()},
          {"bytes", info.bytes()},
          {"splits", splits}};
}

std::string DatasetTable(const storage::DatasetInfo& info, bool wide) {
  std::vector<std::vector<std::string>> rows = {{"SPLIT", "SHARDS", "RECORDS", "BYTES"}};
  if (wide) rows[0].push_back("FILE");
  for (const storage::SplitInfo& s : info.splits) {
    rows.push_back(
        {s.name, std::to_string(s.shards.size()), std::to_string(s.records), HumanBytes(s.bytes)});
    if (!wide) continue;
    rows.back().push_back("");
    for (const storage::ShardInfo& shard : s.shards) {
      rows.push_back({"", "", std::to_string(shard.records), HumanBytes(shard.bytes), shard.path});
    }
  }
  std::string out = RenderTable(rows);
  out += "classes: " + std::to_string(info.classes.size());
  for (size_t i = 0; i < info.classes.size() && i < 10; ++i) {
    out += (i == 0 ? " (" : ", ") + info.classes[i];
  }
  if (!info.classes.empty()) out += info.classes.size() > 10 ? ", …)" : ")";
  return out + "\n";
}

Result<storage::DatasetInfo> Inspect(const std::string& dir, CliContext& ctx) {
  Result<storage::DatasetInfo> info = storage::InspectDataset(dir);
  if (!info.ok()) {
    const bool missing = info.status().code() == StatusCode::kNotFound;
    PrintError(ctx, info.status().message(),
               missing ? "pack a dataset first: dljob data pack --from SRC --to " + dir
                       : "the dataset is damaged; re-pack it, or copy it again from its source");
  }
  return info;
}

}  // namespace

int RunDataPack(const DataPackOptions& options, CliContext& ctx) {
  storage::PackOptions pack;
  pack.shard.max_records_per_shard = options.records_per_shard;
  pack.shard.max_shard_bytes = options.shard_size_mb << 20;
  ProgressPrinter printer(ctx.err, ctx.err_is_tty, ctx.clock);
  const Clock::MonotonicTime start = ctx.clock.MonotonicNow();
  Result<storage::PackResult> result = storage::PackDataset(
      options.from, options.to, pack,
      [&](const storage::PackProgress& p) { printer.Update("pack " + p.split, p.done, p.total); });
  if (!result.ok()) {
    const StatusCode code = result.status().code();
    PrintError(ctx, result.status().message(),
               code == StatusCode::kAlreadyExists
                   ? "pack into an empty directory, or remove the old shards first"
               : code == StatusCode::kUnavailable ? "check that --to is writable"
                                                  : kPackHint);
    return kExitFailed;
  }
  uint64_t records = 0;
  ctx.out << "packed " << options.from << " (" << result->source_kind << ", "
          << result->classes.size() << " classes) into " << options.to << "\n";
  for (const storage::PackedSplit& s : result->splits) {
    records += s.records;
    ctx.out << "  " << s.name << ": " << s.records << " records in " << s.shards.size()
            << (s.shards.size() == 1 ? " shard, " : " shards, ") << HumanBytes(s.bytes) << "\n";
  }
  char buf[96];
  const double secs = Seconds(ctx.clock, start);
  std::snprintf(buf, sizeof buf, "  %.2fs, %.0f records/s\n", secs,
                secs > 0 ? records / secs : 0.0);
  ctx.out << buf;
  return kExitOk;
}

int RunDataLs(const DataLsOptions& options, CliContext& ctx) {
  if (!options.output.empty() && options.output != "json" && options.output != "wide") {
    PrintError(ctx, "unknown output format \"" + options.output + "\"", "use -o json or -o wide");
    return kExitUsage;
  }
  Result<storage::DatasetInfo> info = Inspect(options.dir, ctx);
  if (!info.ok()) return kExitFailed;
  if (options.output == "json") {
    ctx.out << DatasetJson(*info).dump(2) << "\n";
  } else {
    ctx.out << DatasetTable(*info, options.output == "wide");
  }
  return kExitOk;
}

int RunDataVerify(const DataVerifyOptions& options, CliContext& ctx) {
  const Clock::MonotonicTime start = ctx.clock.MonotonicNow();
  Result<storage::DatasetInfo> info = Inspect(options.dir, ctx);
  if (!info.ok()) return kExitFailed;
  ProgressPrinter printer(ctx.err, ctx.err_is_tty, ctx.clock);
  const uint64_t total = info->records();
  printer.Update("verify", 0, total);
  Status s =
      storage::VerifyDataset(*info, [&](uint64_t done) { printer.Update("verify", done, total); });
  if (!s.ok()) {
    PrintError(ctx, s.message(),
               "this shard is damaged and must not be trained on; re-pack it, or copy it again "
               "from its source");
    return kExitFailed;
  }
  size_t shards = 0;
  for (const storage::SplitInfo& split : info->splits) shards += split.shards.size();
  char buf[160];
  const double secs = Seconds(ctx.clock, start);
  std::snprintf(
      buf, sizeof buf, "OK: %llu records in %zu shard%s (%s) checked in %.2fs, %.0f MiB/s\n",
      static_cast<unsigned long long>(total), shards, shards == 1 ? "" : "s",
      HumanBytes(info->bytes()).c_str(), secs, secs > 0 ? info->bytes() / secs / (1 << 20) : 0.0);
  ctx.out << buf;
  return kExitOk;
}

int RunDataCache(const DataCacheOptions& options, CliContext& ctx) {
  Result<storage::OpenedSource> source =
      storage::OpenSource(options.from, storage::S3Flags{options.endpoint, options.region, "", ""},
                          storage::ProcessEnv());
  if (!source.ok()) {
    PrintError(ctx, source.status().message(),
               "--from takes oss://bucket/prefix, s3://bucket/prefix or a directory; set "
               "OSS_ENDPOINT (or --endpoint) and the access keys in OSS_ACCESS_KEY_ID / "
               "OSS_ACCESS_KEY_SECRET or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY");
    return source.status().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  const Clock::MonotonicTime start = ctx.clock.MonotonicNow();
  ProgressPrinter printer(ctx.err, ctx.err_is_tty, ctx.clock, {ProgressUnit::kBytes});
  storage::WarmCacheOptions warm;
  warm.parallel = options.parallel;
  warm.verify = !options.no_verify;
  warm.progress = [&](const storage::WarmCacheProgress& p) {
    printer.Update("cache", p.bytes_done, p.bytes_total);
  };
  Result<storage::WarmCacheResult> done =
      storage::WarmCache(*source->store, source->prefix, options.to, warm);
  if (!done.ok()) {
    // A failed check (CRC, MD5) means the source itself is bad; anything else is worth a retry.
    const bool damaged = done.status().code() == StatusCode::kInvalidArgument;
    PrintError(ctx, done.status().message(),
               damaged ? "the object in the source is damaged: upload it again (dljob data verify "
                         "checks a packed dataset before upload)"
                       : "run the same command again: finished objects are kept and partial ones "
                         "resume");
    return kExitFailed;
  }
  if (done->already_complete) {
    ctx.out << options.to << " is already a complete copy of " << options.from << "\n";
    return kExitOk;
  }
  char buf[200];
  const double secs = Seconds(ctx.clock, start);
  std::snprintf(
      buf, sizeof buf,
      "OK: %llu objects (%s) in %s: %llu copied, %llu already there; %s downloaded in "
      "%.1fs, %s/s\n",
      static_cast<unsigned long long>(done->objects), HumanBytes(done->bytes).c_str(),
      options.to.c_str(), static_cast<unsigned long long>(done->objects_copied),
      static_cast<unsigned long long>(done->objects_skipped),
      HumanBytes(done->bytes_downloaded).c_str(), secs,
      HumanBytes(static_cast<uint64_t>(secs > 0 ? done->bytes_downloaded / secs : 0)).c_str());
  ctx.out << buf;
  return kExitOk;
}

void AddDataCommands(CommandRegistry& registry) {
  CLI::App* data =
      registry.app().add_subcommand("data", "Datasets as record shards: pack, ls, verify, cache");
  data->require_subcommand(1);

  auto pack = std::make_shared<DataPackOptions>();
  CLI::App* dp = registry.Add(
      "pack", "Pack Fashion-MNIST IDX files or a JPEG tree into shards",
      [pack](CommandShared& shared) { return RunDataPack(*pack, shared.ctx); }, data);
  dp->add_option("--from", pack->from, "IDX directory, or folder of <class>/*.jpg")->required();
  dp->add_option("--to", pack->to, "Directory for the shards (created if missing)")->required();
  dp->add_option("--records-per-shard", pack->records_per_shard, "Records per shard (0: no limit)")
      ->capture_default_str();
  dp->add_option("--shard-size-mb", pack->shard_size_mb, "Shard size limit in MiB (0: no limit)")
      ->capture_default_str();

  auto ls = std::make_shared<DataLsOptions>();
  CLI::App* dl = registry.Add(
      "ls", "Show a packed dataset's splits, shards and classes",
      [ls](CommandShared& shared) { return RunDataLs(*ls, shared.ctx); }, data);
  dl->add_option("dir", ls->dir, "Dataset directory")->required();
  dl->add_option("-o,--output", ls->output, "json or wide");

  auto verify = std::make_shared<DataVerifyOptions>();
  CLI::App* dv = registry.Add(
      "verify", "Check every record's CRC and every shard's index",
      [verify](CommandShared& shared) { return RunDataVerify(*verify, shared.ctx); }, data);
  dv->add_option("dir", verify->dir, "Dataset directory")->required();

  auto cache = std::make_shared<DataCacheOptions>();
  CLI::App* dc = registry.Add(
      "cache", "Copy a dataset from object storage or NAS to local disk (resumable, verified)",
      [cache](CommandShared& shared) { return RunDataCache(*cache, shared.ctx); }, data);
  dc->add_option("--from", cache->from, "oss://bucket/prefix, s3://bucket/prefix or a directory")
      ->required();
  dc->add_option("--to", cache->to, "Local directory, e.g. on an SSD (created if missing)")
      ->required();
  dc->add_option("--endpoint", cache->endpoint, "Object store endpoint (default $OSS_ENDPOINT)");
  dc->add_option("--region", cache->region, "Region for request signing");
  dc->add_option("--parallel", cache->parallel, "Downloads at once")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  dc->add_flag("--no-verify", cache->no_verify, "Skip MD5 and record-CRC checks");
}

}  // namespace dljob
