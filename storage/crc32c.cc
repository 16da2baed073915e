#include "storage/crc32c.h"

#include <array>
#include <cstring>

namespace dljob::storage {
namespace {

constexpr uint32_t kPolyReflected = 0x82F63B78u;

constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPolyReflected : c >> 1;
    table[i] = c;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = MakeTable();

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(uint32_t crc,
                                                       std::span<const uint8_t> data) {
  uint64_t c = ~crc;
  const uint8_t* p = data.data();
  size_t n = data.size();
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = __builtin_ia32_crc32di(c, word);
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  for (; n > 0; --n, ++p) c32 = __builtin_ia32_crc32qi(c32, *p);
  return ~c32;
}

bool HaveSse42() {
  static const bool have = __builtin_cpu_supports("sse4.2");
  return have;
}
#endif

}  // namespace

uint32_t Crc32cPortable(uint32_t crc, std::span<const uint8_t> data) {
  uint32_t c = ~crc;
  for (uint8_t b : data) c = kTable[(c ^ b) & 0xFF] ^ (c >> 8);
  return ~c;
}

uint32_t Crc32c(uint32_t crc, std::span<const uint8_t> data) {
#if defined(__x86_64__)
  if (HaveSse42()) return Crc32cSse42(crc, data);
#endif
  return Crc32cPortable(crc, data);
}

}  // namespace dljob::storage
