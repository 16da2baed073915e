#include "storage/loader/shard_source.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "storage/dataset.h"

namespace dljob::storage::loader {
namespace {

using Opener = std::function<Result<RandomAccessFilePtr>(const std::string& file_name)>;

// Picks `split`'s shards out of a directory listing, checks the set is complete, opens each.
Result<ShardSet> OpenShards(const std::string& where, const std::vector<std::string>& file_names,
                            const std::string& split, const Opener& open) {
  if (Status s = ValidateSplitName(split); !s.ok()) return s;
  std::map<int, ShardName> found;
  std::set<std::string> splits;
  for (const std::string& file : file_names) {
    std::optional<ShardName> name = ParseShardFileName(file);
    if (!name) continue;
    splits.insert(name->split);
    if (name->split == split) found[name->index] = *name;
  }
  if (found.empty()) {
    std::string have;
    for (const std::string& s : splits) have += (have.empty() ? "" : ", ") + s;
    return Status::NotFound(where + ": no shards of split \"" + split + "\" (splits here: " +
                            (have.empty() ? "none; pack one with 'dljob data pack'" : have) + ")");
  }
  const int count = found.begin()->second.count;
  for (int i = 0; i < count; ++i) {
    auto it = found.find(i);
    if (it == found.end() || it->second.count != count || int(found.size()) != count) {
      return Status::InvalidArgument(
          where + ": split \"" + split + "\" is incomplete: " + ShardFileName(split, i, count) +
          " is missing or the " + "shard counts disagree; re-pack or re-copy the dataset");
    }
  }
  ShardSet set;
  set.split = split;
  for (int i = 0; i < count; ++i) {
    Result<RandomAccessFilePtr> file = open(ShardFileName(split, i, count));
    if (!file.ok()) return file.status();
    Result<ShardReaderPtr> reader = ShardReader::Open(std::move(file).value());
    if (!reader.ok()) return reader.status();
    set.shards.push_back(std::move(reader).value());
  }
  return set;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

Result<RandomAccessFilePtr> ObjectStoreFile::Open(std::shared_ptr<ObjectStore> store,
                                                  std::string key) {
  Result<ObjectInfo> info = store->Head(key);
  if (!info.ok()) return info.status();
  return RandomAccessFilePtr(new ObjectStoreFile(std::move(store), std::move(key), info->size));
}

Status ObjectStoreFile::ReadAt(uint64_t offset, std::span<uint8_t> dst) const {
  if (dst.empty()) return Status::Ok();
  if (offset > size_ || dst.size() > size_ - offset) {
    return Status::InvalidArgument(name_ + ": at byte " + std::to_string(offset) +
                                   ": truncated: reading " + std::to_string(dst.size()) +
                                   " bytes past the end of a " + std::to_string(size_) +
                                   "-byte object");
  }
  Result<std::string> bytes = store_->GetRange(key_, offset, dst.size());
  if (!bytes.ok()) return bytes.status();
  if (bytes->size() != dst.size()) {
    return Status::InvalidArgument(
        name_ + ": at byte " + std::to_string(offset) + ": got " + std::to_string(bytes->size()) +
        " bytes of " + std::to_string(dst.size()) + " (the object changed or was truncated)");
  }
  std::copy(bytes->begin(), bytes->end(), dst.begin());
  return Status::Ok();
}

std::vector<uint64_t> ShardSet::records() const {
  std::vector<uint64_t> out;
  for (const ShardReaderPtr& s : shards) out.push_back(s->num_records());
  return out;
}

Result<ShardSet> OpenLocalSplit(const std::string& dir, const std::string& split) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return Status::NotFound(dir + ": no such dataset directory");
  }
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    names.push_back(entry.path().filename().string());
  }
  if (ec) return Status::Unavailable(dir + ": cannot list: " + ec.message());
  Result<ShardSet> set = OpenShards(
      dir, names, split, [&](const std::string& file) { return OpenLocalFile(dir + "/" + file); });
  if (!set.ok()) return set;
  Result<std::vector<std::string>> classes = ReadLabels(dir);
  if (classes.ok()) {
    set->classes = std::move(classes).value();
  } else if (classes.status().code() != StatusCode::kNotFound) {
    return classes.status();
  }
  return set;
}

Result<ShardSet> OpenStoreSplit(std::shared_ptr<ObjectStore> store, const std::string& dir,
                                const std::string& split) {
  const std::string prefix = dir.empty() || dir.back() == '/' ? dir : dir + "/";
  Result<std::vector<ObjectInfo>> objects = ListAll(*store, prefix);
  if (!objects.ok()) return objects.status();
  std::vector<std::string> names;
  for (const ObjectInfo& o : *objects) {
    std::string rest = o.key.substr(prefix.size());
    if (rest.find('/') == std::string::npos) names.push_back(rest);
  }
  Result<ShardSet> set = OpenShards(store->Url(prefix), names, split, [&](const std::string& f) {
    return ObjectStoreFile::Open(store, prefix + f);
  });
  if (!set.ok()) return set;
  Result<std::string> labels = store->Get(prefix + kLabelsFile);
  if (labels.ok()) {
    set->classes = Lines(*labels);
  } else if (labels.status().code() != StatusCode::kNotFound) {
    return labels.status();
  }
  return set;
}

}  // namespace dljob::storage::loader
