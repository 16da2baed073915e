// BatchBuilder: turns a list of sample numbers into one batch of normalised floats and labels —
// the work one loader thread does per batch.
//
// Reads: the batch's records are grouped by shard and sorted by offset; records closer than
// `coalesce_gap_bytes` are read together in one ReadAt of at most `max_read_bytes` (one pread,
// or one ranged GET on an object store), then every record's length and CRC are checked
// (ShardReader::Decode). With Order::kShardWindows a batch's records sit close together, so a
// batch costs a few large reads; with a global shuffle it is one read per record.
// Decodes: JPEG records are decoded (at a reduced scale when the crop allows, see
// jpeg_decoder.h), augmented (image_transform.h, seeded by (seed, epoch, sample)) and normalised;
// raw records (IDX) go through the same crop/flip/normalise path from their pixels.
//
// Any failure — a read error, a CRC mismatch, an undecodable JPEG, a label outside labels.txt,
// a raw sample with more channels than the output — fails the whole batch with a message that
// names the shard, the byte offset and the record. Nothing partial is returned.
//
// Thread-safety: one BatchBuilder per thread (it owns a JPEG decoder and scratch buffers); the
// ShardSet it reads is shared and only read.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "storage/loader/image_transform.h"
#include "storage/loader/jpeg_decoder.h"
#include "storage/loader/sampler.h"
#include "storage/loader/shard_source.h"

namespace dljob::storage::loader {

struct TransformOptions {
  OutputSpec output;
  AugmentOptions augment;
  uint64_t seed = 0;  // of the augmentation streams
  // Reduced-scale JPEG decoding: the factors below 1 it may use; empty = always full size. The
  // default keeps the ones libjpeg-turbo has SIMD inverse DCTs for: 5/8, 3/4, 7/8 decode slower
  // than full size (docs/benchmarks/loader.md).
  std::vector<ScaleFactor> decode_scales = {{1, 2}, {1, 4}, {1, 8}};
  // Decode only the rows and columns the crop needs (JpegDecoder::DecodeCrop).
  bool crop_decode = true;
};

struct ReadOptions {
  // 0 merges only adjacent records: right for local files, where bytes read in a gap cost more
  // than another pread. For object stores, where each read is a request, use ~1 MiB.
  uint64_t coalesce_gap_bytes = 0;
  uint64_t max_read_bytes = 16 << 20;
};

// A group of records of one shard read with one ReadAt: bytes [offset, offset + size).
struct ReadRun {
  uint32_t shard = 0;
  uint64_t offset = 0, size = 0;
  std::vector<size_t> items;  // positions in the batch, in offset order
};

// Groups records into runs as described above. Pure. `refs[k]` is item k's record,
// `offsets[k]`/`sizes[k]` its byte range in its shard.
std::vector<ReadRun> PlanReads(std::span<const RecordRef> refs, std::span<const uint64_t> offsets,
                               std::span<const uint64_t> sizes, const ReadOptions& options);

class BatchBuilder {
 public:
  // `shards` and `sampler` must outlive the builder.
  BatchBuilder(const ShardSet& shards, const Sampler& sampler, TransformOptions transform,
               ReadOptions read);

  // Fills data[k * output.floats() ...] and labels[k] for samples[k].
  // REQUIRES: data and labels sized for samples.size() items.
  Status Build(int64_t epoch, std::span<const uint64_t> samples, std::span<float> data,
               std::span<int64_t> labels);

  // One sample from an already checked record; public for the benchmark and tests.
  Status TransformSample(const Sample& sample, int64_t epoch, uint64_t sample_id, float* out);

 private:
  const ShardSet& shards_;
  const Sampler& sampler_;
  TransformOptions transform_;
  ReadOptions read_;
  JpegDecoder decoder_;
  DecodedImage decoded_;
  ResizeScratch resize_;
  std::vector<uint8_t> buffer_;
};

}  // namespace dljob::storage::loader
