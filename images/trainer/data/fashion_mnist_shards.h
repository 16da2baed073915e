// Fashion-MNIST from record shards: the splits `dljob data pack` writes from the IDX files
// (storage/pack.h: split "train" from train-*, "test" from t10k-*, records in IDX order, raw
// 1-channel 28x28 pixels) loaded into the same normalised Dataset as LoadFashionMnist makes from
// the IDX files themselves — so a run fed from shards is bit-identical to one fed from IDX.
//
// --data_dir is a directory (local, NFS, or the local runner's cache of an oss:// volume) holding
// <split>-*.shard and labels.txt, or an oss://bucket/prefix or s3://bucket/prefix URL read
// straight from the object store with ranged GETs (endpoint and credentials from the environment,
// storage/objstore/object_url.h). Every record's CRC is checked as it is read; a damaged shard is
// an error naming the shard and the byte offset, never data. Records that are not 28x28 grey
// pixels, or labels outside [0, 10), are errors naming the shard and record.
//
// Stateless functions; thread-safe.
#pragma once

#include <string>

#include "base/status.h"
#include "images/trainer/data/dataset.h"
#include "images/trainer/data/fashion_mnist.h"
#include "storage/loader/shard_source.h"

namespace dljob::trainer {

// The shard split a Fashion-MNIST split was packed into: "train" or "test".
const char* ShardSplitName(Split split);

// True when --data_dir is to be read as record shards: an oss:// or s3:// URL, or a directory
// holding shards of the train split (train-*-of-*.shard). Looks at file names only.
bool IsFashionMnistShardDir(const std::string& data_dir);

// Loads one split from the shards under `data_dir` (directory or URL). kNotFound when the split
// has no shards; kInvalidArgument for a damaged shard or a record that is not Fashion-MNIST's.
Result<Dataset> LoadFashionMnistShards(const std::string& data_dir, Split split);

// The core of the above: reads every record of `shards` in shard and record order.
Result<Dataset> FashionMnistFromShards(const storage::loader::ShardSet& shards);

}  // namespace dljob::trainer
