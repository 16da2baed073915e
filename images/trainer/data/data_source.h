// DataSource: where the trainer gets each rank's batches.
//
// A DataSource belongs to one rank. Get(epoch, step) returns that rank's batch for the step:
// images float32 [B, C, H, W] and labels int64 [B], on the CPU (the trainer moves them to its
// device). Every rank's source reports the same steps_per_epoch(), which keeps ranks in lock
// step. Implementations: ShardedDataSource (an in-memory Dataset split across ranks by the
// sampler of storage/loader/sampler.h) and SyntheticDataSource (one fixed random batch, no I/O: the
// throughput baseline).
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
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  virtual int64_t steps_per_epoch() const = 0;
  // REQUIRES: 0 <= step < steps_per_epoch().
  virtual Batch Get(int64_t epoch, int64_t step) = 0;
};

// Each epoch shuffles the whole dataset by (seed, epoch), the same on every rank; rank r takes
// every world-th sample from r on (Partition::kStrided, EpochSeeding::kSeedXorEpoch), cut into
// batches of batch_size; steps_per_epoch() = floor(N / (world * batch_size)), the rest of the
// epoch's order is skipped. So W ranks x batch B take, step by step, exactly the samples of one
// rank with batch W*B (the sampler's header explains why).
class ShardedDataSource : public DataSource {
 public:
  // `dataset` is shared, not copied. REQUIRES: world >= 1, 0 <= rank < world, batch_size >= 1.
  ShardedDataSource(Dataset dataset, int world, int rank, int64_t batch_size, uint64_t seed);

  int64_t steps_per_epoch() const override { return steps_per_epoch_; }
  Batch Get(int64_t epoch, int64_t step) override;

 private:
  Dataset dataset_;
  storage::loader::Sampler sampler_;
  int64_t batch_size_;
  int64_t steps_per_epoch_;
  int64_t cached_epoch_ = -1;
  std::vector<uint64_t> order_;  // this rank's samples in cached_epoch_
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

 private:
  Batch batch_;
  int64_t steps_per_epoch_;
};

}  // namespace dljob::trainer
