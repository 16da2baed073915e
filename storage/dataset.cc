#include "storage/dataset.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "storage/shard_reader.h"

namespace dljob::storage {
namespace fs = std::filesystem;

namespace {

constexpr char kShardSuffix[] = ".shard";

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Groups the shard files in `dir` by split and checks each set is 0..n-1 of the same n.
Result<std::map<std::string, std::vector<ShardInfo>>> ListShards(const std::string& dir) {
  std::map<std::string, std::vector<ShardInfo>> by_split;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::optional<ShardName> name = ParseShardFileName(entry.path().filename().string());
    if (name) by_split[name->split].push_back({entry.path().string(), *name, 0, 0});
  }
  if (ec) return Status::Unavailable(dir + ": " + ec.message());
  for (auto& [split, shards] : by_split) {
    std::sort(shards.begin(), shards.end(),
              [](const ShardInfo& a, const ShardInfo& b) { return a.name.index < b.name.index; });
    const int count = shards.front().name.count;
    for (int i = 0; i < static_cast<int>(shards.size()) || i < count; ++i) {
      if (i >= static_cast<int>(shards.size()) || shards[i].name.index != i ||
          shards[i].name.count != count) {
        return Status::InvalidArgument(dir + ": split \"" + split + "\" is incomplete: expected " +
                                       ShardFileName(split, i, count));
      }
    }
  }
  return by_split;
}

}  // namespace

Status ValidateSplitName(const std::string& split) {
  bool ok =
      !split.empty() && split.size() <= 64 && std::all_of(split.begin(), split.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
      });
  return ok ? Status::Ok()
            : Status::InvalidArgument("split name \"" + split +
                                      "\" must be 1-64 letters, digits or underscores");
}

std::string ShardFileName(const std::string& split, int index, int count) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "-%05d-of-%05d", index, count);
  return split + buf + kShardSuffix;
}

std::optional<ShardName> ParseShardFileName(const std::string& file_name) {
  // <split>-<iiiii>-of-<nnnnn>.shard, read from the right.
  const std::string suffix = kShardSuffix;
  if (file_name.size() <= suffix.size() || !file_name.ends_with(suffix)) return std::nullopt;
  std::string stem = file_name.substr(0, file_name.size() - suffix.size());
  size_t of = stem.rfind("-of-");
  if (of == std::string::npos) return std::nullopt;
  std::string count = stem.substr(of + 4);
  size_t dash = stem.rfind('-', of - 1);
  if (of == 0 || dash == std::string::npos) return std::nullopt;
  std::string index = stem.substr(dash + 1, of - dash - 1);
  ShardName name{stem.substr(0, dash), 0, 0};
  if (!AllDigits(index) || !AllDigits(count) || index.size() > 9 || count.size() > 9 ||
      !ValidateSplitName(name.split).ok()) {
    return std::nullopt;
  }
  name.index = std::stoi(index);
  name.count = std::stoi(count);
  if (name.count <= 0 || name.index >= name.count) return std::nullopt;
  if (ShardFileName(name.split, name.index, name.count) != file_name) return std::nullopt;
  return name;
}

Status WriteLabels(const std::string& dir, const std::vector<std::string>& classes, Env& env) {
  std::string text;
  for (const std::string& c : classes) {
    if (c.find('\n') != std::string::npos) {
      return Status::InvalidArgument("class name \"" + c + "\" contains a newline");
    }
    text += c + "\n";
  }
  return env.WriteFileAtomically(dir + "/" + kLabelsFile, text);
}

Result<std::vector<std::string>> ReadLabels(const std::string& dir, Env& env) {
  Result<std::string> text = env.ReadFile(dir + "/" + kLabelsFile);
  if (!text.ok()) return text.status();
  std::vector<std::string> classes;
  for (size_t start = 0; start < text->size();) {
    size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    classes.push_back(text->substr(start, end - start));
    start = end + 1;
  }
  return classes;
}

uint64_t DatasetInfo::records() const {
  uint64_t n = 0;
  for (const SplitInfo& s : splits) n += s.records;
  return n;
}

uint64_t DatasetInfo::bytes() const {
  uint64_t n = 0;
  for (const SplitInfo& s : splits) n += s.bytes;
  return n;
}

Result<DatasetInfo> InspectDataset(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound(dir + ": no such directory");
  auto listed = ListShards(dir);
  if (!listed.ok()) return listed.status();
  if (listed->empty()) return Status::NotFound(dir + ": no shard files (*.shard)");
  DatasetInfo info{dir, {}, {}};
  if (auto labels = ReadLabels(dir); labels.ok()) info.classes = std::move(labels).value();
  for (auto& [split, shards] : *listed) {
    SplitInfo s{split, std::move(shards), 0, 0};
    for (ShardInfo& shard : s.shards) {
      auto reader = ShardReader::Open(shard.path);
      if (!reader.ok()) return reader.status();
      shard.records = (*reader)->num_records();
      shard.bytes = (*reader)->file_size();
      s.records += shard.records;
      s.bytes += shard.bytes;
    }
    info.splits.push_back(std::move(s));
  }
  return info;
}

Status VerifyDataset(const DatasetInfo& dataset,
                     const std::function<void(uint64_t records_done)>& progress) {
  const uint64_t num_classes = dataset.classes.size();
  uint64_t done = 0;
  for (const SplitInfo& split : dataset.splits) {
    for (const ShardInfo& shard : split.shards) {
      auto reader = ShardReader::Open(shard.path);
      if (!reader.ok()) return reader.status();
      const ShardReader& r = **reader;
      Status s = r.ForEach([&](uint64_t i, const Sample& sample) {
        if (num_classes > 0 && sample.label >= num_classes) {
          return Status::InvalidArgument(
              r.name() + ": at byte " + std::to_string(r.record_offset(i)) + ": record " +
              std::to_string(i) + ": label " + std::to_string(sample.label) + " but " +
              kLabelsFile + " names only " + std::to_string(num_classes) + " classes");
        }
        return Status::Ok();
      });
      if (!s.ok()) return s;
      done += r.num_records();
      if (progress) progress(done);
    }
  }
  return Status::Ok();
}

}  // namespace dljob::storage
