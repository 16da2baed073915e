// DistributedSampler: which samples each rank trains on at each step.
//
// Each epoch has one permutation of [0, N), seeded by (seed, epoch) and therefore identical on
// every rank. Rank r owns perm[r], perm[r + W], perm[r + 2W], ... (W = world size), and at step s
// takes the B consecutive entries s*B .. s*B+B-1 of that list. Every rank runs
// steps_per_epoch() = floor(N / (W*B)) steps, so the ranks stay in lock step and no sample is
// used twice in an epoch; the N mod (W*B) left over are skipped that epoch (a different set each
// epoch).
//
// Consequence, relied on by tests: the union over the W ranks of their step-s batches is exactly
// perm[s*W*B .. (s+1)*W*B), i.e. the batch a single rank with batch W*B takes at step s. So
// W ranks x batch B compute the same gradients as 1 rank x batch W*B, up to float rounding.
//
// Thread-compatible (BatchIndices caches the current epoch's permutation).
#pragma once

#include <cstdint>
#include <vector>

namespace dljob::trainer {

// A deterministic permutation of [0, n) for (seed, epoch), the same on every platform (it uses
// std::mt19937_64, whose output the standard fixes, and its own bounded draw).
std::vector<int64_t> EpochPermutation(int64_t n, uint64_t seed, int64_t epoch);

class DistributedSampler {
 public:
  // REQUIRES: num_samples >= 0, world >= 1, 0 <= rank < world, batch_size >= 1.
  DistributedSampler(int64_t num_samples, int world, int rank, int64_t batch_size, uint64_t seed);

  int64_t steps_per_epoch() const { return steps_per_epoch_; }

  // The dataset indices of this rank's batch. REQUIRES: 0 <= step < steps_per_epoch().
  std::vector<int64_t> BatchIndices(int64_t epoch, int64_t step);

 private:
  int64_t num_samples_;
  int world_;
  int rank_;
  int64_t batch_size_;
  uint64_t seed_;
  int64_t steps_per_epoch_;
  int64_t cached_epoch_ = -1;
  std::vector<int64_t> permutation_;
};

}  // namespace dljob::trainer
