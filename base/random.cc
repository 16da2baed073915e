#include "base/random.h"

namespace dljob {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t MixSeed(uint64_t seed, uint64_t a, uint64_t b) {
  return SplitMix64(SplitMix64(SplitMix64(seed) ^ a) ^ b);
}

uint64_t NondeterministicSeed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace dljob
