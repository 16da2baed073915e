#include "images/trainer/comm/vector_ops.h"

namespace dljob::trainer {
namespace {

constexpr size_t kBlock = 16;  // four SSE or two AVX registers per block

}  // namespace

void ScaleInPlace(float* p, size_t n, float scale) {
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (size_t j = 0; j < kBlock; ++j) p[i + j] *= scale;
  }
  for (; i < n; ++i) p[i] *= scale;
}

void CopyScaled(float* __restrict dst, const float* __restrict src, size_t n, float scale) {
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (size_t j = 0; j < kBlock; ++j) dst[i + j] = src[i + j] * scale;
  }
  for (; i < n; ++i) dst[i] = src[i] * scale;
}

}  // namespace dljob::trainer
