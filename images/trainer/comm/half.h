// IEEE 754 binary16 ("half") <-> binary32 conversion for fp16 allreduce compression.
//
// Halves travel as raw uint16_t bit patterns (no compiler half type is assumed). Float -> half
// rounds to nearest, ties to even, as the hardware conversions do: values from 65520 up become
// infinity, values below the smallest normal (2^-14) become subnormals or zero, NaNs stay NaNs
// (sign and the top mantissa bits kept, quiet bit set when nothing else would survive) and the
// signs of zero and infinity are kept. Half -> float is exact for every one of the 65536 patterns.
// The bulk forms are what the fusion layer (comm/fused_allreduce.h) packs and unpacks with, and
// what the MPI half-sum operation (comm/mpi_collective.cc) adds with.
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dljob::trainer {

uint16_t FloatToHalf(float value);
float HalfToFloat(uint16_t half);

// dst[i] = FloatToHalf(src[i]) for i in [0, n).
void FloatsToHalves(const float* src, uint16_t* dst, size_t n);
// dst[i] = HalfToFloat(src[i]) * scale for i in [0, n).
void HalvesToFloatsScaled(const uint16_t* src, float* dst, size_t n, float scale);
// inout[i] = FloatToHalf(HalfToFloat(in[i]) + HalfToFloat(inout[i])): one addition in float,
// rounded back to half.
void AddHalves(const uint16_t* in, uint16_t* inout, size_t n);

}  // namespace dljob::trainer
