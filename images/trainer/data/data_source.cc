#include "images/trainer/data/data_source.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

namespace dljob::trainer {

namespace {

storage::loader::SamplerOptions StridedSamplerOptions(int world, int rank, uint64_t seed) {
  storage::loader::SamplerOptions o;
  o.world_size = world;
  o.rank = rank;
  o.seed = seed;
  o.partition = storage::loader::Partition::kStrided;
  o.seeding = storage::loader::EpochSeeding::kSeedXorEpoch;
  return o;
}

}  // namespace

ShardedDataSource::ShardedDataSource(Dataset dataset, int world, int rank, int64_t batch_size,
                                     uint64_t seed)
    : dataset_(std::move(dataset)),
      sampler_({static_cast<uint64_t>(dataset_.size())}, StridedSamplerOptions(world, rank, seed)),
      world_(world),
      rank_(rank),
      batch_size_(batch_size),
      steps_per_epoch_(static_cast<int64_t>(sampler_.per_rank()) / batch_size) {
  assert(batch_size >= 1);
}

Batch ShardedDataSource::GetAt(int64_t epoch, int64_t offset, int64_t global_batch) {
  assert(global_batch == world_ * batch_size_);
  assert(offset >= 0 && offset + global_batch <= epoch_samples(global_batch));
  if (epoch != cached_epoch_) {
    order_ = sampler_.GlobalOrder(epoch);
    cached_epoch_ = epoch;
  }
  std::vector<int64_t> indices(static_cast<size_t>(batch_size_));
  for (int64_t k = 0; k < batch_size_; ++k) {
    indices[static_cast<size_t>(k)] = static_cast<int64_t>(order_[offset + k * world_ + rank_]);
  }
  torch::Tensor index = torch::tensor(indices, torch::kInt64);
  return Batch{dataset_.images.index_select(0, index), dataset_.labels.index_select(0, index),
               index};
}

SyntheticDataSource::SyntheticDataSource(const std::vector<int64_t>& input_shape,
                                         int64_t num_classes, int world, int64_t batch_size,
                                         uint64_t seed)
    : steps_per_epoch_(std::max<int64_t>(1, kSyntheticExamplesPerEpoch / (world * batch_size))) {
  at::Generator generator = at::detail::createCPUGenerator(seed);
  std::vector<int64_t> shape = {batch_size};
  shape.insert(shape.end(), input_shape.begin(), input_shape.end());
  batch_.images = torch::randn(shape, generator, torch::kFloat32);
  batch_.labels = torch::randint(0, num_classes, {batch_size}, generator, torch::kInt64);
}

}  // namespace dljob::trainer
