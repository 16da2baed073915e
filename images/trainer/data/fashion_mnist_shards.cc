#include "images/trainer/data/fashion_mnist_shards.h"

#include <filesystem>
#include <memory>

#include "storage/dataset.h"
#include "storage/objstore/open_store.h"

namespace dljob::trainer {
namespace {

namespace ld = storage::loader;

constexpr uint16_t kImageSide = 28;
constexpr char kRepack[] =
    "; copy the dataset again, or re-pack it with `dljob data pack --from <Fashion-MNIST IDX "
    "directory> --to <directory>`";

// Appends what to do to a damaged-shard message, unless it already says so.
Status WithRepackAdvice(const Status& s) {
  if (s.code() != StatusCode::kInvalidArgument ||
      s.message().find("re-pack") != std::string::npos) {
    return s;
  }
  return Status(s.code(), s.message() + kRepack);
}

bool IsObjectStoreUrl(const std::string& dir) {
  return dir.rfind("oss://", 0) == 0 || dir.rfind("s3://", 0) == 0;
}

// "<shard>: at byte b: record i: <what>", the way ShardReader names a place in a shard.
Status BadRecord(const storage::ShardReader& shard, uint64_t i, const std::string& what) {
  return Status::InvalidArgument(shard.name() + ": at byte " +
                                 std::to_string(shard.record_offset(i)) + ": record " +
                                 std::to_string(i) + ": " + what + " (not a Fashion-MNIST record)");
}

}  // namespace

const char* ShardSplitName(Split split) { return split == Split::kTrain ? "train" : "test"; }

bool IsFashionMnistShardDir(const std::string& data_dir) {
  if (IsObjectStoreUrl(data_dir)) return true;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(data_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::optional<storage::ShardName> name =
        storage::ParseShardFileName(it->path().filename().string());
    if (name && name->split == ShardSplitName(Split::kTrain)) return true;
  }
  return false;
}

Result<Dataset> FashionMnistFromShards(const ld::ShardSet& shards) {
  if (shards.classes.size() > static_cast<size_t>(kFashionMnistClasses)) {
    return Status::InvalidArgument(
        "labels.txt names " + std::to_string(shards.classes.size()) +
        " classes; Fashion-MNIST has 10 (these shards hold another dataset)");
  }
  uint64_t total = 0;
  for (const storage::ShardReaderPtr& shard : shards.shards) total += shard->num_records();
  IdxArray images, labels;
  images.dims = {static_cast<int64_t>(total), kImageSide, kImageSide};
  labels.dims = {static_cast<int64_t>(total)};
  images.data.reserve(total * kImageSide * kImageSide);
  labels.data.reserve(total);
  for (const storage::ShardReaderPtr& shard : shards.shards) {
    Status s = shard->ForEach([&](uint64_t i, const storage::Sample& sample) -> Status {
      if (sample.format != storage::SampleFormat::kRaw || sample.channels != 1 ||
          sample.height != kImageSide || sample.width != kImageSide) {
        return BadRecord(*shard, i,
                         "a " + storage::SampleFormatName(sample.format) + " " +
                             std::to_string(sample.height) + "x" + std::to_string(sample.width) +
                             "x" + std::to_string(sample.channels) +
                             " sample, not raw 28x28 grey pixels");
      }
      if (sample.label >= kFashionMnistClasses) {
        return BadRecord(*shard, i, "label " + std::to_string(sample.label) + " is not in [0, 10)");
      }
      images.data.insert(images.data.end(), sample.data.begin(), sample.data.end());
      labels.data.push_back(static_cast<uint8_t>(sample.label));
      return Status::Ok();
    });
    // ShardReader's checksum failures name the shard and byte already; add what to do.
    if (!s.ok()) return WithRepackAdvice(s);
  }
  return FashionMnistFromIdx(images, labels, "split \"" + shards.split + "\"");
}

Result<Dataset> LoadFashionMnistShards(const std::string& data_dir, Split split) {
  const std::string name = ShardSplitName(split);
  auto open = [&]() -> Result<ld::ShardSet> {
    if (!IsObjectStoreUrl(data_dir)) return ld::OpenLocalSplit(data_dir, name);
    Result<storage::OpenedSource> source =
        storage::OpenSource(data_dir, {}, storage::ProcessEnv(), "--data_dir");
    if (!source.ok()) return source.status();
    // The loader wants "" or a prefix ending in '/'; users write oss://bucket/dir.
    std::string prefix = source->prefix;
    if (!prefix.empty() && prefix.back() != '/') prefix += '/';
    return ld::OpenStoreSplit(std::shared_ptr<storage::ObjectStore>(std::move(source->store)),
                              prefix, name);
  };
  Result<ld::ShardSet> shards = open();
  if (!shards.ok()) return WithRepackAdvice(shards.status());
  return FashionMnistFromShards(*shards);
}

}  // namespace dljob::trainer
