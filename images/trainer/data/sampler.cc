#include "images/trainer/data/sampler.h"

#include <cassert>
#include <random>
#include <utility>

namespace dljob::trainer {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform in [0, bound], by rejection so every value is equally likely.
uint64_t UniformUpTo(std::mt19937_64& rng, uint64_t bound) {
  if (bound == 0) return 0;
  const uint64_t range = bound + 1;
  if (range == 0) return rng();  // bound == UINT64_MAX
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % range);
  uint64_t draw = rng();
  while (draw >= limit) draw = rng();
  return draw % range;
}

}  // namespace

std::vector<int64_t> EpochPermutation(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[static_cast<size_t>(i)] = i;
  std::mt19937_64 rng(SplitMix64(seed ^ SplitMix64(static_cast<uint64_t>(epoch))));
  for (int64_t i = n - 1; i > 0; --i) {
    auto j = static_cast<int64_t>(UniformUpTo(rng, static_cast<uint64_t>(i)));
    std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(j)]);
  }
  return perm;
}

DistributedSampler::DistributedSampler(int64_t num_samples, int world, int rank,
                                       int64_t batch_size, uint64_t seed)
    : num_samples_(num_samples),
      world_(world),
      rank_(rank),
      batch_size_(batch_size),
      seed_(seed),
      steps_per_epoch_(num_samples / (static_cast<int64_t>(world) * batch_size)) {
  assert(num_samples >= 0 && world >= 1 && rank >= 0 && rank < world && batch_size >= 1);
}

std::vector<int64_t> DistributedSampler::BatchIndices(int64_t epoch, int64_t step) {
  assert(step >= 0 && step < steps_per_epoch_);
  if (epoch != cached_epoch_) {
    permutation_ = EpochPermutation(num_samples_, seed_, epoch);
    cached_epoch_ = epoch;
  }
  std::vector<int64_t> indices;
  indices.reserve(static_cast<size_t>(batch_size_));
  for (int64_t k = step * batch_size_; k < (step + 1) * batch_size_; ++k) {
    indices.push_back(permutation_[static_cast<size_t>(rank_ + k * world_)]);
  }
  return indices;
}

}  // namespace dljob::trainer
