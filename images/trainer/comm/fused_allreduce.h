// FusedAllreducer: Horovod-style tensor fusion for gradient averaging (or summing).
//
// Many small allreduces cost one message latency each; one huge allreduce thrashes the caches.
// FusedAllreducer packs consecutive tensors into a persistent fusion buffer of
// `threshold_bytes`, and reduces each filled buffer ("bucket") as a pipeline of segments of
// `segment_bytes` with up to `max_in_flight` segments outstanding on the Collective
// (StartAllreduceSum/Wait): while one segment is on the wire the next is packed, and a finished
// segment is unpacked (and, when averaging, scaled by 1/world size) while it is still in cache. A
// tensor larger than the buffer, or at least one segment long, is its own bucket and is reduced
// where it lies (copying it would buy no fewer messages, measured in docs/benchmarks/allreduce.md):
// when averaging, segment by segment, each segment scaled right after its reduction while it is in
// cache; with FusionOptions::average = false, in ONE AllreduceSum call over the whole tensor
// (there is no scaling to keep in cache, so segmenting would only add messages). A threshold of 0
// disables fusion: every tensor is its own in-place bucket. With one rank nothing is sent and
// nothing is touched (the mean, and the sum, over one rank is the tensor itself).
//
// average = false is for callers that pre-scale what the ranks contribute (e.g. the loss by
// 1/world, so that backward already yields averaged gradients): the reducer then only sums and
// makes no pass over the gradients besides the reduction (and the packing of small tensors).
//
// With FusionOptions::fp16 (Horovod's fp16 compression) each segment is converted to IEEE half
// on the way into a half staging buffer (in-place buckets included, always segment by segment),
// reduced with the Collective's AllreduceSumHalf (blocking, whatever max_in_flight says), and
// converted back to float times 1/size (times 1 with average = false) on the way out: half the
// bytes on the wire, at half precision (about 3 significant digits; sums past 65504 become
// infinity, values below 2^-24 flush to zero).
//
// The mean is computed as sum * (1/size): exact for power-of-two world sizes, within one rounding
// of sum / size otherwise; the scaling loops are written to vectorise.
//
// Order is the caller's: every rank must pass the same tensor shapes in the same order (the
// Trainer passes gradients in reverse registration order, the order backward produces them), so
// buckets and segments are identical on all ranks. The bucket plan is a pure function
// (PlanBuckets) and is cached while the tensor sizes stay the same.
//
// Ownership: borrows the Collective (must outlive this object); owns the fusion buffer. The
// tensors' storage is borrowed for the duration of one call. Thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "base/status.h"
#include "images/trainer/comm/collective.h"

namespace dljob::trainer {

// A float32 buffer to reduce in place (a gradient's storage).
struct FloatSpan {
  float* data = nullptr;
  size_t count = 0;
};

// Tensors [first, last) of the list, `elements` floats in all. `in_place`: one tensor reduced
// where it lies (it does not fit the fusion buffer, or fusion is off).
struct Bucket {
  size_t first = 0;
  size_t last = 0;
  size_t elements = 0;
  bool in_place = false;
  bool operator==(const Bucket&) const = default;
};

// Groups consecutive tensors greedily into buckets of at most `capacity` elements. A tensor longer
// than `capacity` (every tensor, when capacity is 0), or of at least `in_place_from` elements,
// becomes an in-place bucket of its own. Zero-length tensors join the current bucket. Pure.
std::vector<Bucket> PlanBuckets(const std::vector<size_t>& counts, size_t capacity,
                                size_t in_place_from = std::numeric_limits<size_t>::max());

// Measured best on shared memory with Open MPI 4.1 (docs/benchmarks/allreduce.md): with the
// trainer's sum-only path, 256 KB segments (so tensors from 64K floats up are reduced in place and
// only smaller ones are packed) beat 1 MB ones by 3-8% and match one MPI_Allreduce per tensor.
inline constexpr size_t kDefaultSegmentBytes = size_t{256} << 10;

struct FusionOptions {
  size_t threshold_bytes = size_t{64} << 20;    // fusion buffer size; 0 disables fusion
  size_t segment_bytes = kDefaultSegmentBytes;  // segment; 0: each bucket whole, no in-place
  // Segments outstanding at once (>= 1). 1 uses the blocking AllreduceSum per segment, which
  // measured fastest with Open MPI 4.1 on shared memory (its MPI_Iallreduce is much slower).
  int max_in_flight = 1;
  // Send halves instead of floats (see above). Every rank must use the same setting.
  bool fp16 = false;
  // true: the result is the mean over ranks (sum * 1/size). false: the plain sum, with no
  // scaling pass, and in-place buckets reduced whole in one call. Every rank must agree.
  bool average = true;
};

class FusedAllreducer {
 public:
  // REQUIRES: options.max_in_flight >= 1.
  FusedAllreducer(Collective& collective, FusionOptions options);

  // Replaces every tensor by its element-wise reduction over all ranks: the mean (the sum times
  // 1/size()) with options().average, else the sum (with one rank the values are left as they
  // are and nothing is sent). On error the tensors' contents are unspecified and the Collective
  // is unusable. AllreduceAverage is another name for Allreduce: it sums, not averages, when
  // options().average is false.
  Status Allreduce(const std::vector<FloatSpan>& tensors);
  Status AllreduceAverage(const std::vector<FloatSpan>& tensors) { return Allreduce(tensors); }

  // The same, one bucket at a time, for callers that reduce buckets as their tensors become
  // ready (the gradient overlap path). Plan() fixes the buckets for these tensor sizes (cached
  // while the sizes stay the same); ReduceBucket(i, tensors) reduces (averages or sums, as
  // Allreduce) the tensors of plan()[i].
  // REQUIRES: Plan() was called with the sizes of `tensors`; every rank reduces the same buckets
  // in the same order.
  const std::vector<Bucket>& Plan(const std::vector<size_t>& counts);
  Status ReduceBucket(size_t index, const std::vector<FloatSpan>& tensors);

  // The plan of the last call, for tests and logs.
  const std::vector<Bucket>& plan() const { return plan_; }
  const FusionOptions& options() const { return options_; }

 private:
  struct Segment {
    uint64_t request = 0;
    size_t begin = 0;  // offsets within the bucket
    size_t end = 0;
  };

  Status Reduce(const Bucket& bucket, const std::vector<FloatSpan>& tensors);
  // The float path of Reduce: blocking or pipelined segments through buffer_ (or in place).
  Status ReduceFloat(const Bucket& bucket, const std::vector<FloatSpan>& tensors, size_t segment);
  // The fp16 path of Reduce: segment by segment through half_buffer_, blocking.
  Status ReduceHalf(const Bucket& bucket, const std::vector<FloatSpan>& tensors, size_t segment);
  // Copies bucket elements [begin, end) between the tensors and the fusion buffer; on the way
  // back (`unpack`) each value is scaled by Scale() (in place for in-place buckets; nothing to do
  // there when Scale() is 1).
  void Pack(const Bucket& bucket, const std::vector<FloatSpan>& tensors, size_t begin, size_t end);
  void Unpack(const Bucket& bucket, const std::vector<FloatSpan>& tensors, size_t begin,
              size_t end);
  // 1/size() when averaging, else 1.
  float Scale() const;

  Collective& collective_;
  FusionOptions options_;
  std::vector<float> buffer_;          // the persistent fusion buffer
  std::vector<uint16_t> half_buffer_;  // fp16: one segment as halves
  std::vector<size_t> plan_counts_;    // tensor sizes the plan was made for
  std::vector<size_t> starts_;         // tensor i starts at starts_[i] in the concatenation
  std::vector<Bucket> plan_;
};

}  // namespace dljob::trainer
