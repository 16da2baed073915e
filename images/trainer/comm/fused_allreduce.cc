#include "images/trainer/comm/fused_allreduce.h"

#include <algorithm>
#include <cassert>
#include <climits>
#include <cstdio>
#include <cstring>
#include <deque>
#include <limits>

#include "images/trainer/comm/half.h"
#include "images/trainer/comm/vector_ops.h"

namespace dljob::trainer {

std::vector<Bucket> PlanBuckets(const std::vector<size_t>& counts, size_t capacity,
                                size_t in_place_from) {
  std::vector<Bucket> plan;
  bool open = false;  // the last bucket is a packed one that may take more tensors
  for (size_t i = 0; i < counts.size(); ++i) {
    const size_t n = counts[i];
    if (n > capacity || (n > 0 && n >= in_place_from)) {
      plan.push_back({i, i + 1, n, true});
      open = false;
    } else if (open && plan.back().elements + n <= capacity) {
      plan.back().last = i + 1;
      plan.back().elements += n;
    } else {
      plan.push_back({i, i + 1, n, false});
      open = true;
    }
  }
  return plan;
}

FusedAllreducer::FusedAllreducer(Collective& collective, FusionOptions options)
    : collective_(collective), options_(options) {
  assert(options_.max_in_flight >= 1);
}

const std::vector<Bucket>& FusedAllreducer::Plan(const std::vector<size_t>& counts) {
  if (counts == plan_counts_ && !plan_.empty()) return plan_;
  const size_t capacity = options_.threshold_bytes / sizeof(float);
  const size_t segment = options_.segment_bytes / sizeof(float);
  plan_ = PlanBuckets(counts, capacity, segment > 0 ? segment : std::numeric_limits<size_t>::max());
  starts_.assign(counts.size(), 0);
  size_t offset = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    starts_[i] = offset;
    offset += counts[i];
  }
  plan_counts_ = counts;
  size_t largest_packed = 0;
  size_t largest_segment = 0;
  for (const Bucket& b : plan_) {
    if (!b.in_place) largest_packed = std::max(largest_packed, b.elements);
    largest_segment =
        std::max(largest_segment, segment > 0 ? std::min(segment, b.elements) : b.elements);
  }
  if (options_.fp16) {
    // Only the half staging buffer is used.
    if (half_buffer_.size() < largest_segment) half_buffer_.resize(largest_segment);
  } else if (buffer_.size() < largest_packed) {
    buffer_.resize(largest_packed);
  }
  return plan_;
}

Status FusedAllreducer::Allreduce(const std::vector<FloatSpan>& tensors) {
  std::vector<size_t> counts(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].data == nullptr && tensors[i].count > 0) {
      return Status::InvalidArgument("fusion: null tensor");
    }
    counts[i] = tensors[i].count;
  }
  if (collective_.size() == 1) return Status::Ok();  // mean or sum over one rank: nothing to do
  Plan(counts);
  for (const Bucket& bucket : plan_) {
    if (bucket.elements == 0) continue;
    if (Status s = Reduce(bucket, tensors); !s.ok()) return s;
  }
  return Status::Ok();
}

Status FusedAllreducer::ReduceBucket(size_t index, const std::vector<FloatSpan>& tensors) {
  if (index >= plan_.size() || tensors.size() != plan_counts_.size()) {
    return Status::InvalidArgument("fusion: bucket " + std::to_string(index) +
                                   " is not in the plan for these tensors");
  }
  const Bucket& bucket = plan_[index];
  for (size_t i = bucket.first; i < bucket.last; ++i) {
    if (tensors[i].count != plan_counts_[i] || (tensors[i].data == nullptr && tensors[i].count)) {
      return Status::InvalidArgument("fusion: tensor " + std::to_string(i) +
                                     " does not match the plan");
    }
  }
  if (collective_.size() == 1 || bucket.elements == 0) return Status::Ok();
  return Reduce(bucket, tensors);
}

Status FusedAllreducer::Reduce(const Bucket& bucket, const std::vector<FloatSpan>& tensors) {
  char purpose[64];
  std::snprintf(purpose, sizeof(purpose), "gradient bucket %zu of %zu",
                static_cast<size_t>(&bucket - plan_.data()) + 1, plan_.size());
  collective_.Annotate(purpose);
  size_t segment = options_.segment_bytes / sizeof(float);
  if (segment == 0 || segment > bucket.elements) segment = bucket.elements;
  // Summing an in-place float bucket: nothing to do between segments, so one call for all of it.
  if (!options_.average && !options_.fp16 && bucket.in_place) segment = bucket.elements;
  segment = std::min<size_t>(segment, INT_MAX);
  Status failure =
      options_.fp16 ? ReduceHalf(bucket, tensors, segment) : ReduceFloat(bucket, tensors, segment);
  if (failure.ok()) return failure;
  return failure.WithContext("fused allreduce of tensors " + std::to_string(bucket.first) + ".." +
                             std::to_string(bucket.last - 1));
}

Status FusedAllreducer::ReduceFloat(const Bucket& bucket, const std::vector<FloatSpan>& tensors,
                                    size_t segment) {
  float* base = bucket.in_place ? tensors[bucket.first].data : buffer_.data();
  Status failure;
  if (options_.max_in_flight == 1) {
    // No pipelining: the blocking allreduce, which backends usually implement best.
    for (size_t begin = 0; begin < bucket.elements && failure.ok(); begin += segment) {
      const size_t end = std::min(bucket.elements, begin + segment);
      Pack(bucket, tensors, begin, end);
      failure = collective_.AllreduceSum(base + begin, end - begin);
      if (failure.ok()) Unpack(bucket, tensors, begin, end);
    }
    return failure;
  }
  std::deque<Segment> in_flight;
  auto finish_oldest = [&]() {
    Segment done = in_flight.front();
    in_flight.pop_front();
    Status s = collective_.Wait(done.request);
    if (s.ok() && failure.ok()) Unpack(bucket, tensors, done.begin, done.end);
    if (failure.ok()) failure = s;
  };
  for (size_t begin = 0; begin < bucket.elements && failure.ok(); begin += segment) {
    if (in_flight.size() >= static_cast<size_t>(options_.max_in_flight)) finish_oldest();
    if (!failure.ok()) break;
    const size_t end = std::min(bucket.elements, begin + segment);
    Pack(bucket, tensors, begin, end);
    Result<uint64_t> id = collective_.StartAllreduceSum(base + begin, end - begin);
    if (!id.ok()) {
      failure = id.status();
      break;
    }
    in_flight.push_back({*id, begin, end});
  }
  while (!in_flight.empty()) finish_oldest();
  return failure;
}

namespace {

// Calls fn(tensor_data + tensor_offset, buffer_offset, n) for every piece of the tensors
// [bucket.first, bucket.last) that lies in bucket elements [begin, end).
template <typename Fn>
void ForEachPiece(const Bucket& bucket, const std::vector<FloatSpan>& tensors,
                  const std::vector<size_t>& starts, size_t begin, size_t end, Fn fn) {
  const size_t origin = starts[bucket.first];
  // The last tensor that starts at or before `begin`.
  auto first =
      std::upper_bound(starts.begin() + static_cast<ptrdiff_t>(bucket.first),
                       starts.begin() + static_cast<ptrdiff_t>(bucket.last), origin + begin);
  size_t i = static_cast<size_t>(first - starts.begin()) - 1;
  for (; i < bucket.last; ++i) {
    const size_t t_begin = starts[i] - origin;
    if (t_begin >= end) break;
    const size_t from = std::max(begin, t_begin);
    const size_t to = std::min(end, t_begin + tensors[i].count);
    if (to > from) fn(tensors[i].data + (from - t_begin), from, to - from);
  }
}

}  // namespace

void FusedAllreducer::Pack(const Bucket& bucket, const std::vector<FloatSpan>& tensors,
                           size_t begin, size_t end) {
  if (bucket.in_place) return;
  float* buffer = buffer_.data();
  ForEachPiece(bucket, tensors, starts_, begin, end, [buffer](float* src, size_t at, size_t n) {
    std::memcpy(buffer + at, src, n * sizeof(float));
  });
}

void FusedAllreducer::Unpack(const Bucket& bucket, const std::vector<FloatSpan>& tensors,
                             size_t begin, size_t end) {
  const float scale = Scale();
  if (bucket.in_place) {
    if (!options_.average) return;
    ScaleInPlace(tensors[bucket.first].data + begin, end - begin, scale);
    return;
  }
  const float* buffer = buffer_.data();
  if (!options_.average) {
    ForEachPiece(bucket, tensors, starts_, begin, end, [buffer](float* dst, size_t at, size_t n) {
      std::memcpy(dst, buffer + at, n * sizeof(float));
    });
    return;
  }
  ForEachPiece(
      bucket, tensors, starts_, begin, end,
      [buffer, scale](float* dst, size_t at, size_t n) { CopyScaled(dst, buffer + at, n, scale); });
}

float FusedAllreducer::Scale() const {
  return options_.average ? 1.0f / static_cast<float>(collective_.size()) : 1.0f;
}

Status FusedAllreducer::ReduceHalf(const Bucket& bucket, const std::vector<FloatSpan>& tensors,
                                   size_t segment) {
  const float scale = Scale();
  uint16_t* staged = half_buffer_.data();
  for (size_t begin = 0; begin < bucket.elements; begin += segment) {
    const size_t end = std::min(bucket.elements, begin + segment);
    if (bucket.in_place) {
      FloatsToHalves(tensors[bucket.first].data + begin, staged, end - begin);
    } else {
      ForEachPiece(bucket, tensors, starts_, begin, end,
                   [staged, begin](float* src, size_t at, size_t n) {
                     FloatsToHalves(src, staged + (at - begin), n);
                   });
    }
    if (Status s = collective_.AllreduceSumHalf(staged, end - begin); !s.ok()) return s;
    if (bucket.in_place) {
      HalvesToFloatsScaled(staged, tensors[bucket.first].data + begin, end - begin, scale);
    } else {
      ForEachPiece(bucket, tensors, starts_, begin, end,
                   [staged, begin, scale](float* dst, size_t at, size_t n) {
                     HalvesToFloatsScaled(staged + (at - begin), dst, n, scale);
                   });
    }
  }
  return Status::Ok();
}

}  // namespace dljob::trainer
