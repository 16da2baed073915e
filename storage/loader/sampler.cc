#include "storage/loader/sampler.h"

#include <algorithm>
#include <cassert>
#include <string>

namespace dljob::storage::loader {
namespace {

uint64_t EpochSeed(const SamplerOptions& o, int64_t epoch) {
  const auto e = static_cast<uint64_t>(epoch);
  return o.seeding == EpochSeeding::kMixSeed ? MixSeed(o.seed, e)
                                             : SplitMix64(o.seed ^ SplitMix64(e));
}

}  // namespace

Status ValidateSamplerOptions(const SamplerOptions& o) {
  if (o.world_size < 1) {
    return Status::InvalidArgument("sampler.world_size: must be at least 1, got " +
                                   std::to_string(o.world_size));
  }
  if (o.rank < 0 || o.rank >= o.world_size) {
    return Status::InvalidArgument("sampler.rank: must be in [0, " + std::to_string(o.world_size) +
                                   "), got " + std::to_string(o.rank));
  }
  if (o.window == 0) return Status::InvalidArgument("sampler.window: must be at least 1");
  return Status::Ok();
}

Sampler::Sampler(std::vector<uint64_t> shard_records, SamplerOptions options) : options_(options) {
  assert(ValidateSamplerOptions(options).ok());
  starts_.reserve(shard_records.size() + 1);
  uint64_t total = 0;
  for (uint64_t n : shard_records) {
    starts_.push_back(total);
    total += n;
  }
  starts_.push_back(total);
  const uint64_t w = static_cast<uint64_t>(options.world_size);
  per_rank_ = options.remainder == Remainder::kDrop ? total / w : (total + w - 1) / w;
}

std::vector<uint64_t> Sampler::GlobalOrder(int64_t epoch) const {
  const uint64_t n = num_samples();
  std::vector<uint64_t> order;
  order.reserve(std::max<uint64_t>(n, per_rank_ * options_.world_size));
  Rng rng(EpochSeed(options_, epoch));
  if (!options_.shuffle) {
    for (uint64_t i = 0; i < n; ++i) order.push_back(i);
  } else if (options_.order == Order::kGlobalShuffle) {
    for (uint64_t i = 0; i < n; ++i) order.push_back(i);
    Shuffle(order.begin(), order.end(), rng);
  } else {
    std::vector<uint32_t> shards(starts_.size() - 1);
    for (uint32_t s = 0; s < shards.size(); ++s) shards[s] = s;
    Shuffle(shards.begin(), shards.end(), rng);
    for (uint32_t s : shards) {
      for (uint64_t i = starts_[s]; i < starts_[s + 1]; ++i) order.push_back(i);
    }
    for (uint64_t at = 0; at < n; at += options_.window) {
      Shuffle(order.begin() + at, order.begin() + std::min(n, at + options_.window), rng);
    }
  }
  const uint64_t want = per_rank_ * options_.world_size;
  if (want <= n) {
    order.resize(want);
  } else {
    for (uint64_t i = 0; order.size() < want; ++i) order.push_back(order[i]);
  }
  return order;
}

std::vector<uint64_t> Sampler::RankOrder(int64_t epoch) const {
  std::vector<uint64_t> order = GlobalOrder(epoch);
  if (options_.partition == Partition::kStrided) {
    std::vector<uint64_t> mine;
    mine.reserve(per_rank_);
    const auto world = static_cast<uint64_t>(options_.world_size);
    for (uint64_t k = 0; k < per_rank_; ++k) mine.push_back(order[options_.rank + k * world]);
    return mine;
  }
  const auto first = order.begin() + static_cast<int64_t>(per_rank_) * options_.rank;
  return {first, first + static_cast<int64_t>(per_rank_)};
}

RecordRef Sampler::Locate(uint64_t sample) const {
  assert(sample < num_samples());
  auto it = std::upper_bound(starts_.begin(), starts_.end(), sample) - 1;
  const auto shard = static_cast<uint32_t>(it - starts_.begin());
  return {shard, sample - *it};
}

}  // namespace dljob::storage::loader
