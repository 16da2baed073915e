#include "images/trainer/data/data_source.h"

#include <algorithm>
#include <utility>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

namespace dljob::trainer {

ShardedDataSource::ShardedDataSource(Dataset dataset, int world, int rank, int64_t batch_size,
                                     uint64_t seed)
    : dataset_(std::move(dataset)), sampler_(dataset_.size(), world, rank, batch_size, seed) {}

Batch ShardedDataSource::Get(int64_t epoch, int64_t step) {
  std::vector<int64_t> indices = sampler_.BatchIndices(epoch, step);
  torch::Tensor index = torch::tensor(indices, torch::kInt64);
  return Batch{dataset_.images.index_select(0, index), dataset_.labels.index_select(0, index)};
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
