// DataSource: where the trainer gets each rank's batches.
//
// A DataSource belongs to one rank. Get(epoch, step) returns that rank's batch for the step:
// images float32 [B, C, H, W] and labels int64 [B], on the CPU (the trainer moves them to its
// device). Every rank's source reports the same steps_per_epoch(), which keeps ranks in lock
// step. A source whose batches are consecutive entries of an epoch order that does not depend on
// the world size is elastic(): a run can continue its position at another world size (elastic.h),
// and GetAt serves batches that start anywhere in the order. Implementations: ShardedDataSource (an
// in-memory Dataset split across ranks by the sampler of storage/loader/sampler.h) and
// SyntheticDataSource (one fixed random batch, no I/O: the throughput baseline).
//
// Thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/types.h>

#include "images/trainer/data/dataset.h"
#include "storage/loader/sampler.h"

namespace dljob::trainer {

struct Batch {
  torch::Tensor images;
  torch::Tensor labels;
  torch::Tensor samples;  // int64 [B]: the samples' numbers in the dataset; undefined if unknown
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  virtual int64_t steps_per_epoch() const = 0;
  // REQUIRES: 0 <= step < steps_per_epoch().
  virtual Batch Get(int64_t epoch, int64_t step) = 0;

  // Whether the position of a checkpoint carries over to another world size (see above).
  virtual bool elastic() const { return false; }
  // Entries of each epoch's global order that the ranks' batches draw from together, with
  // `global_batch` (all ranks' batch) entries a step.
  virtual int64_t epoch_samples(int64_t global_batch) const {
    return steps_per_epoch() * global_batch;
  }
  // This rank's part of the step whose batches start `offset` entries into the epoch's order.
  // The default serves offsets that are whole steps, Get(epoch, offset / global_batch).
  // REQUIRES: offset + global_batch <= epoch_samples(global_batch), and elastic() or offset a
  // multiple of global_batch.
  virtual Batch GetAt(int64_t epoch, int64_t offset, int64_t global_batch) {
    return Get(epoch, offset / global_batch);
  }
};

// Each epoch shuffles the whole dataset by (seed, epoch), the same on every rank; rank r takes
// every world-th sample from r on (Partition::kStrided, EpochSeeding::kSeedXorEpoch), cut into
// batches of batch_size; steps_per_epoch() = floor(N / (world * batch_size)), the rest of the
// epoch's order is skipped. So W ranks x batch B take, step by step, exactly the samples of one
// rank with batch W*B (the sampler's header explains why). Elastic: the epoch's order is the
// same permutation for every W (cut to W*floor(N/W) entries), and GetAt(epoch, offset) takes
// entries offset + r, offset + r + W, ... for rank r.
class ShardedDataSource : public DataSource {
 public:
  // `dataset` is shared, not copied. REQUIRES: world >= 1, 0 <= rank < world, batch_size >= 1.
  ShardedDataSource(Dataset dataset, int world, int rank, int64_t batch_size, uint64_t seed);

  int64_t steps_per_epoch() const override { return steps_per_epoch_; }
  Batch Get(int64_t epoch, int64_t step) override {
    return GetAt(epoch, step * world_ * batch_size_, world_ * batch_size_);
  }
  bool elastic() const override { return true; }
  int64_t epoch_samples(int64_t /*global_batch*/) const override {
    return static_cast<int64_t>(sampler_.per_rank()) * world_;
  }
  // REQUIRES: global_batch == world x batch_size.
  Batch GetAt(int64_t epoch, int64_t offset, int64_t global_batch) override;

 private:
  Dataset dataset_;
  storage::loader::Sampler sampler_;
  int world_;
  int rank_;
  int64_t batch_size_;
  int64_t steps_per_epoch_;
  int64_t cached_epoch_ = -1;
  std::vector<uint64_t> order_;  // the global order of cached_epoch_
};

// Examples in a synthetic "epoch": the size of the Fashion-MNIST training set, so epochs mean the
// same amount of work on synthetic and real data.
inline constexpr int64_t kSyntheticExamplesPerEpoch = 60000;

class SyntheticDataSource : public DataSource {
 public:
  // A fixed batch of `batch_size` normal(0, 1) inputs of `input_shape` ([C, H, W]) with uniform
  // labels in [0, num_classes), drawn from a generator seeded with `seed`.
  SyntheticDataSource(const std::vector<int64_t>& input_shape, int64_t num_classes, int world,
                      int64_t batch_size, uint64_t seed);

  int64_t steps_per_epoch() const override { return steps_per_epoch_; }
  Batch Get(int64_t epoch, int64_t step) override { return batch_; }
  bool elastic() const override { return true; }  // every step's batch is the same
  Batch GetAt(int64_t, int64_t, int64_t) override { return batch_; }

 private:
  Batch batch_;
  int64_t steps_per_epoch_;
};

}  // namespace dljob::trainer
