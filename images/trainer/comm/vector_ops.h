// Element-wise float loops of the communication layer (scaling a reduced sum into a mean, and
// the same while copying out of a fusion buffer), written so that GCC and Clang vectorise them at
// -O2: a main loop over blocks of a fixed width the compiler unrolls and packs, then a short tail.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>

namespace dljob::trainer {

// p[i] *= scale for i in [0, n).
void ScaleInPlace(float* p, size_t n, float scale);

// dst[i] = src[i] * scale for i in [0, n). REQUIRES: the ranges do not overlap.
void CopyScaled(float* __restrict dst, const float* __restrict src, size_t n, float scale);

}  // namespace dljob::trainer
