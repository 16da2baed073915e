// ImagenetShardSource: a rank's training batches from record shards packed by `dljob data pack`
// (a JPEG tree, one folder per class), read through storage/loader — the --data_name=imagenet
// data path of dljob-train.
//
// --data_dir is a local (or NFS) directory holding <split>-*.shard and labels.txt, or an
// oss://bucket/prefix or s3://bucket/prefix URL read with ranged GETs (credentials and endpoint
// from the environment, storage/objstore/object_url.h). Local reads use a global shuffle; object
// stores use shard windows, which keep reads within a few shards at a time.
//
// Images come out float32 [B, C, H, W] at the model's input size (224 for ResNet/VGG, 299 for
// Inception v3), normalised with the ImageNet mean/std, after a RandomResizedCrop and a random
// horizontal flip (deterministic in (seed, epoch, sample)). Each rank reads its own block of the
// epoch's order; the short last batch of an epoch is dropped so every step has batch_size images.
//
// The loader delivers batches strictly in order, which is how the trainer asks for them. The
// loader is opened at the first Get(epoch, step), starting there — which is how a resumed run
// (checkpoint at step k) continues with the data it would have seen. A Get out of sequence
// reopens the split and the loader at the asked position. Tensors share the loader's buffers
// (torch::from_blob; the buffer lives until the last tensor using it is gone).
//
// Get throws std::runtime_error for read failures (a corrupt record names shard and offset);
// dljob-train turns that into an error line and exit code 1. Thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "images/trainer/data/data_source.h"
#include "storage/loader/loader.h"

namespace dljob::trainer {

struct ImagenetShardOptions {
  std::string data_dir;  // directory, oss://bucket/prefix or s3://bucket/prefix
  std::string split = "train";
  std::vector<int64_t> input_shape;  // the model's [C, H, W]; C is 1 or 3
  int64_t num_classes = 0;           // the model's; the split must not have more classes
  int world = 1;
  int rank = 0;
  int64_t batch_size = 1;
  uint64_t seed = 0;
  int threads = 4;  // loader threads (JPEG decode and augmentation)
};

class ImagenetShardSource : public DataSource {
 public:
  // Opens and checks the split (errors name --data_dir and say what is wrong); starts no threads.
  static Result<std::unique_ptr<ImagenetShardSource>> Open(const ImagenetShardOptions& options);

  int64_t steps_per_epoch() const override { return steps_per_epoch_; }
  Batch Get(int64_t epoch, int64_t step) override;

  uint64_t num_samples() const { return num_samples_; }  // in the split, all ranks together
  const std::vector<std::string>& classes() const { return classes_; }
  const storage::loader::LoaderOptions& loader_options() const { return options_; }

 private:
  using Opener = std::function<Result<storage::loader::ShardSet>()>;
  ImagenetShardSource(std::string data_dir, Opener opener, storage::loader::ShardSet shards,
                      storage::loader::LoaderOptions options);
  void Restart(int64_t epoch, int64_t step);

  std::string data_dir_;
  Opener opener_;                                   // opens the split afresh for a new loader
  std::optional<storage::loader::ShardSet> first_;  // opened by Open; the first loader takes it
  storage::loader::LoaderOptions options_;
  int64_t steps_per_epoch_ = 0;
  uint64_t num_samples_ = 0;
  std::vector<std::string> classes_;
  int64_t label_limit_ = 0;  // labels must be below this
  storage::loader::LoaderPtr loader_;
  int64_t next_epoch_ = -1, next_step_ = -1;  // what loader_ delivers next
};

}  // namespace dljob::trainer
