// The random-number kit: every seeded stream in dljob (the loader's sampler and augmentations,
// dljob-train's data order and dropout seeds, the simulator's traces) draws from it, so one
// seed gives one run on every platform.
//
// Rng is std::mt19937_64, whose output the standard fixes; the draws below (bounded integers,
// uniform and normal doubles, permutations) are computed here rather than by the standard
// library's distributions, whose results differ between implementations. Seeds are spread with
// SplitMix64/MixSeed so that nearby seeds (seed, seed + 1; consecutive epochs) give unrelated
// streams. Tests use fixed seeds; NondeterministicSeed() is for identifiers that must differ
// between runs and never for anything a test compares.
//
// Pure functions of their inputs; an Rng belongs to one thread (callers that share one guard it).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <utility>

namespace dljob {

using Rng = std::mt19937_64;

// One step of splitmix64's finaliser: spreads nearby inputs (seed, seed + 1) far apart.
uint64_t SplitMix64(uint64_t x);

// Mixes (seed, a, b) into one well-spread 64-bit value (three SplitMix64 steps); the seed of
// every per-epoch and per-sample stream (MixSeed(seed, epoch, sample)).
uint64_t MixSeed(uint64_t seed, uint64_t a, uint64_t b = 0);

// A seed from the operating system's entropy (std::random_device), different on every call.
uint64_t NondeterministicSeed();

// Uniform in [0, n) from a 64-bit generator, by rejection (no modulo bias). REQUIRES: n > 0.
template <typename R>
uint64_t UniformBelow(R& rng, uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t v;
  do v = rng();
  while (v >= limit);
  return v % n;
}

// Uniform in [0, 1) from the top 53 bits of one draw.
template <typename R>
double Uniform01(R& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

// Uniform in [lo, hi).
template <typename R>
double UniformIn(R& rng, double lo, double hi) {
  return lo + (hi - lo) * Uniform01(rng);
}

// A standard normal (mean 0, deviation 1) by Box-Muller, from two draws.
template <typename R>
double Normal(R& rng) {
  const double u = 1.0 - Uniform01(rng), v = Uniform01(rng);
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2 * M_PI * v);
}

// Fisher-Yates: a uniform permutation of [first, last) drawn from `rng` (UniformBelow per swap,
// from the back), identical on every platform.
template <typename It, typename R>
void Shuffle(It first, It last, R& rng) {
  const auto n = static_cast<uint64_t>(last - first);
  for (uint64_t i = n; i > 1; --i) std::swap(first[i - 1], first[UniformBelow(rng, i)]);
}

}  // namespace dljob
