#include "storage/pack.h"

#include <unistd.h>

#include <filesystem>

#include "storage/dataset.h"

namespace dljob::storage {
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kProgressEvery = 1024;

Result<PackedSplit> PackSplit(const SplitSource& split, const std::string& to,
                              const PackOptions& options, const PackProgressFn& progress) {
  auto writer = ShardWriter::Create(to, split.name, options.shard);
  if (!writer.ok()) return writer.status();
  if (progress) progress({split.name, 0, split.count});
  for (uint64_t i = 0; i < split.count; ++i) {
    Result<Sample> sample = split.sample(i);
    if (!sample.ok()) return sample.status();
    if (Status s = (*writer)->Append(*sample); !s.ok()) return s;
    if (progress && ((i + 1) % kProgressEvery == 0 || i + 1 == split.count)) {
      progress({split.name, i + 1, split.count});
    }
  }
  auto shards = (*writer)->Finish();
  if (!shards.ok()) return shards.status();
  return PackedSplit{split.name, split.count, (*writer)->bytes(), std::move(shards).value()};
}

Result<SourcePlan> Plan(const std::string& from, const PackOptions& options) {
  std::error_code ec;
  if (!fs::exists(from, ec)) return Status::NotFound(from + ": no such file or directory");
  if (!fs::is_directory(from, ec)) return Status::InvalidArgument(from + ": not a directory");
  Result<SourcePlan> idx = PlanIdxSource(from);
  if (idx.ok() || idx.status().code() != StatusCode::kNotFound) return idx;
  Result<SourcePlan> jpeg = PlanJpegSource(from, options.shuffle_seed);
  if (jpeg.ok() || jpeg.status().code() != StatusCode::kNotFound) return jpeg;
  return Status::InvalidArgument(
      from + ": neither IDX files (train-images-idx3-ubyte[.gz], …) nor class sub-folders of " +
      "JPEG images");
}

}  // namespace

Result<PackResult> PackDataset(const std::string& from, const std::string& to,
                               const PackOptions& options, const PackProgressFn& progress) {
  Result<SourcePlan> plan = Plan(from, options);
  if (!plan.ok()) return plan.status();
  std::error_code ec;
  fs::create_directories(to, ec);
  if (ec) return Status::Unavailable(to + ": " + ec.message());
  PackResult result{plan->kind, plan->classes, {}};
  Status failed;
  for (const SplitSource& split : plan->splits) {
    Result<PackedSplit> packed = PackSplit(split, to, options, progress);
    if (!packed.ok()) {
      failed = packed.status();
      break;
    }
    result.splits.push_back(std::move(packed).value());
  }
  if (failed.ok()) failed = WriteLabels(to, plan->classes);
  if (!failed.ok()) {
    for (const PackedSplit& s : result.splits) {
      for (const std::string& path : s.shards) ::unlink(path.c_str());
    }
    return failed;
  }
  return result;
}

}  // namespace dljob::storage
