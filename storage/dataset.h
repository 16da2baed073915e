// A packed dataset directory: the shards of each split plus labels.txt.
//
//   DIR/labels.txt                       class names, one per line; line k names label k
//   DIR/<split>-<iiiii>-of-<nnnnn>.shard  shard i of n of a split (record_shard.h)
//
// InspectDataset lists and opens every shard (header, footer and index; not the payloads) and
// checks that each split's shard set is complete; VerifyDataset additionally reads every record
// and checks its CRC and encoding. Both stop at the first problem and say which file and byte.
// Stateless functions; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/status.h"

namespace dljob::storage {

inline constexpr char kLabelsFile[] = "labels.txt";

struct ShardName {
  std::string split;
  int index = 0;
  int count = 0;
};

// Split names: 1-64 characters of [A-Za-z0-9_].
Status ValidateSplitName(const std::string& split);
// "train-00003-of-00004.shard" for ("train", 3, 4).
std::string ShardFileName(const std::string& split, int index, int count);
// The inverse; nullopt for any other file name.
std::optional<ShardName> ParseShardFileName(const std::string& file_name);

// Writes labels.txt, one class a line, atomically and durably (Env::WriteFileAtomically). Class
// names may not contain newlines.
Status WriteLabels(const std::string& dir, const std::vector<std::string>& classes,
                   Env& env = DefaultEnv());
// Reads labels.txt; kNotFound naming the file if there is none.
Result<std::vector<std::string>> ReadLabels(const std::string& dir, Env& env = DefaultEnv());

struct ShardInfo {
  std::string path;
  ShardName name;
  uint64_t records = 0;
  uint64_t bytes = 0;
};

struct SplitInfo {
  std::string name;
  std::vector<ShardInfo> shards;  // by index, complete
  uint64_t records = 0;
  uint64_t bytes = 0;
};

struct DatasetInfo {
  std::string dir;
  std::vector<std::string> classes;  // empty if there is no labels.txt
  std::vector<SplitInfo> splits;     // sorted by name
  uint64_t records() const;
  uint64_t bytes() const;
};

// kNotFound if `dir` does not exist or holds no shards; kInvalidArgument for an incomplete shard
// set or a shard that fails to open.
Result<DatasetInfo> InspectDataset(const std::string& dir);

// Reads and checks every record of every shard, in split and shard order. `progress`, if set, is
// called after each shard with the records checked so far. Also checks that every label is
// below the number of classes when labels.txt exists.
Status VerifyDataset(const DatasetInfo& dataset,
                     const std::function<void(uint64_t records_done)>& progress = {});

}  // namespace dljob::storage
