// Sampler: which samples each rank reads in each epoch, and in what order, drawn from the
// random-number kit (base/random.h: SplitMix64, MixSeed, Shuffle). The one sampler of the project:
// storage/loader reads record shards through it, and dljob-train's in-memory data sources split
// their datasets with it. Pure.
//
// The records of a split are numbered globally: record r of shard s is sample offset(s) + r, with
// the shards in index order (an in-memory dataset is one shard). For each epoch the sampler
// builds one global order of all N samples, the same on every rank because it depends only on
// (seed, epoch):
//   * kGlobalShuffle: a uniform permutation of [0, N) (Fisher-Yates).
//   * kShardWindows (sequential-friendly): the shards in a shuffled order, each shard's records
//     in file order, and then every run of `window` consecutive entries shuffled in place. Reads
//     stay within a few shards at a time and mostly move forward, which is what object stores
//     and spinning disks like; randomness is coarser than kGlobalShuffle.
//   * shuffle = false: [0, N) in order (evaluation).
// The epoch's random stream is seeded by `seeding`:
//   * EpochSeeding::kMixSeed (default): MixSeed(seed, epoch).
//   * EpochSeeding::kSeedXorEpoch: SplitMix64(seed ^ SplitMix64(epoch)), the stream dljob-train's
//     in-memory sources (Fashion-MNIST) shuffle with.
// When N is not a multiple of W (the world size) the order is cut or extended to W*M entries:
//   * Remainder::kDrop (default) — M = floor(N / W); the N mod W samples at the end of the order
//     are skipped this epoch (a different few each epoch when shuffling). Every sample is used at
//     most once per epoch, and exactly once when W divides N.
//   * Remainder::kPad — M = ceil(N / W); the order is extended with its own first entries, so
//     every sample is used at least once and W*M - N of them twice.
// Rank r then takes its M = per_rank() entries of that order by `partition`:
//   * Partition::kBlocks (default): the contiguous block [r*M, (r+1)*M).
//   * Partition::kStrided: entries r, r+W, r+2W, ... (dljob-train's in-memory sources). Cut into
//     batches of B, rank r's batch s is then entries r + k*W for k in [s*B, (s+1)*B), so the W
//     ranks' step-s batches together are exactly order[s*W*B, (s+1)*W*B): the batch one rank with
//     batch W*B takes at step s. W ranks x batch B compute the same gradients as 1 rank x batch
//     W*B, up to float rounding (tests/ rely on it).
// Either way every rank gets the same M, which keeps ranks in lock step.
//
// The permutations use std::mt19937_64 (output fixed by the standard) and an own bounded draw, so
// the order is the same on every platform. Thread-safe: all methods are const.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "base/random.h"
#include "base/status.h"

namespace dljob::storage::loader {

enum class Order { kGlobalShuffle, kShardWindows };
enum class Remainder { kDrop, kPad };
enum class Partition { kBlocks, kStrided };
enum class EpochSeeding { kMixSeed, kSeedXorEpoch };

struct SamplerOptions {
  int world_size = 1;
  int rank = 0;
  uint64_t seed = 0;
  bool shuffle = true;
  Order order = Order::kGlobalShuffle;
  uint64_t window = 1024;  // kShardWindows: entries shuffled together
  Remainder remainder = Remainder::kDrop;
  Partition partition = Partition::kBlocks;
  EpochSeeding seeding = EpochSeeding::kMixSeed;
};

// kInvalidArgument naming the field ("sampler.rank: ...") for a world size below 1, a rank
// outside [0, world_size) or a zero window.
Status ValidateSamplerOptions(const SamplerOptions& options);

// Where a sample lives.
struct RecordRef {
  uint32_t shard = 0;
  uint64_t record = 0;
};

class Sampler {
 public:
  // `shard_records`: records per shard, in shard order. REQUIRES: ValidateSamplerOptions is OK.
  Sampler(std::vector<uint64_t> shard_records, SamplerOptions options);

  uint64_t num_samples() const { return starts_.back(); }
  // Samples each rank takes per epoch (M above).
  uint64_t per_rank() const { return per_rank_; }
  const SamplerOptions& options() const { return options_; }

  // The epoch's global order, already dropped or padded to world_size * per_rank() entries.
  std::vector<uint64_t> GlobalOrder(int64_t epoch) const;
  // This rank's samples for the epoch, in the order it reads them.
  std::vector<uint64_t> RankOrder(int64_t epoch) const;
  // REQUIRES: sample < num_samples().
  RecordRef Locate(uint64_t sample) const;

 private:
  SamplerOptions options_;
  std::vector<uint64_t> starts_;  // starts_[s] = first sample of shard s; back() = N
  uint64_t per_rank_ = 0;
};

}  // namespace dljob::storage::loader
