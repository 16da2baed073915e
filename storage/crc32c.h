// CRC-32C (Castagnoli, polynomial 0x1EDC6F41 reflected as 0x82F63B78), the checksum of every
// record, index and footer in a record shard (storage/record_shard.h).
//
// Crc32c uses the SSE4.2 crc32 instruction when the CPU has it and a table otherwise; both give
// the same value (Crc32cPortable is the table version, kept callable as the tests' oracle).
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace dljob::storage {

// Extends `crc` (0 for a fresh checksum) over `data`. Crc32c(Crc32c(0, a), b) == Crc32c(0, a+b).
uint32_t Crc32c(uint32_t crc, std::span<const uint8_t> data);
uint32_t Crc32cPortable(uint32_t crc, std::span<const uint8_t> data);

inline uint32_t Crc32c(std::span<const uint8_t> data) { return Crc32c(0, data); }

}  // namespace dljob::storage
