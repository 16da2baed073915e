// Multipart upload planning for S3Store::Put (s3_store.h): how an object is cut into parts.
//
// S3's rules: 1 to 10,000 parts, numbered from 1; every part but the last at least 5 MiB (S3,
// OSS and MinIO refuse smaller ones with EntityTooSmall when the upload is completed); at most
// 5 GiB each. PlanParts cuts `size` bytes into parts of `part_size` bytes (the last one shorter),
// growing the part size when 10,000 parts would not hold the object. It does not enforce the
// 5 MiB minimum, so tests against servers that do not check it (s3rver) can use small parts;
// S3StoreOptions documents the minimum for users.
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace dljob::storage {

inline constexpr int kMaxUploadParts = 10'000;

struct PartRange {
  int number = 0;  // 1-based, as S3 numbers parts
  uint64_t offset = 0, size = 0;
  bool operator==(const PartRange&) const = default;
};

// REQUIRES: size > 0, part_size > 0.
std::vector<PartRange> PlanParts(uint64_t size, uint64_t part_size);

}  // namespace dljob::storage
