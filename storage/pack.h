// Packing a dataset into record shards: the engine behind `dljob data pack`.
//
// Two sources are recognised by their layout:
//  * An IDX directory (MNIST, Fashion-MNIST): train-images-idx3-ubyte[.gz] with
//    train-labels-idx1-ubyte[.gz] become split "train", the t10k-* pair split "test". Records keep
//    the IDX order, so record i of a split is image i; samples are raw 1-channel pixels.
//    labels.txt holds the Fashion-MNIST class names when the directory's name says
//    "fashion", else the label numbers.
//  * A tree of JPEG files, one sub-folder per class (SRC/<class>/*.jpg), or with split folders
//    above the classes (SRC/{train,val,test,validation}/<class>/*.jpg). Labels are the sorted
//    class names; the JPEG bytes are stored as-is after their header is checked with
//    libjpeg-turbo; record order is shuffled with a fixed seed so every shard mixes classes.
//
// Each split goes through a ShardWriter (shard_writer.h). If packing fails, shards it already
// finished are removed, so DIR never holds a half-packed dataset from this run. Stateless;
// thread-safe as long as two packs do not write the same directory.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "storage/shard_writer.h"

namespace dljob::storage {

struct PackOptions {
  ShardWriterOptions shard;
  uint64_t shuffle_seed = 0;  // JPEG trees only
};

struct PackProgress {
  std::string split;
  uint64_t done = 0;   // records of this split written so far; 0 when the split starts
  uint64_t total = 0;  // records this split will have
};
using PackProgressFn = std::function<void(const PackProgress&)>;

struct PackedSplit {
  std::string name;
  uint64_t records = 0;
  uint64_t bytes = 0;
  std::vector<std::string> shards;  // final paths
};

struct PackResult {
  std::string source_kind;  // "idx" or "jpeg"
  std::vector<std::string> classes;
  std::vector<PackedSplit> splits;
};

// Packs `from` into directory `to` (created if missing). kNotFound for a missing source,
// kInvalidArgument for a source in neither layout or with a bad file (named), kAlreadyExists if
// `to` already holds shards of a split being packed.
Result<PackResult> PackDataset(const std::string& from, const std::string& to,
                               const PackOptions& options, const PackProgressFn& progress = {});

// One split to pack: how many samples, and how to make sample i (in record order).
struct SplitSource {
  std::string name;
  uint64_t count = 0;
  std::function<Result<Sample>(uint64_t i)> sample;
};

// The sources' own halves (idx_source.cc, jpeg_source.cc). Each returns the splits and the
// class names, or kNotFound when `dir` is not in its layout at all.
struct SourcePlan {
  std::string kind;
  std::vector<std::string> classes;
  std::vector<SplitSource> splits;
};
Result<SourcePlan> PlanIdxSource(const std::string& dir);
Result<SourcePlan> PlanJpegSource(const std::string& dir, uint64_t shuffle_seed);

}  // namespace dljob::storage
