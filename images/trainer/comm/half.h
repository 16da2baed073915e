// IEEE 754 binary16 ("half") <-> binary32 conversion for fp16 allreduce compression.
//
// Halves travel as raw uint16_t bit patterns (no compiler half type is assumed). Float -> half
// rounds to nearest, ties to even, as the hardware conversions do: values from 65520 up become
// infinity, values below the smallest normal (2^-14) become subnormals or zero, and the signs of
// zero and infinity are kept. Half -> float is exact for every non-NaN pattern. NaNs stay NaNs
// with their sign and (the top of) their payload, made quiet both ways, as x86's F16C
// instructions do. The bulk forms are what the fusion layer (comm/fused_allreduce.h) packs and
// unpacks with and what the MPI half-sum operation (comm/mpi_collective.cc) adds with; on CPUs
// with F16C they convert 8 values an instruction, with results identical to the scalar forms.
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
