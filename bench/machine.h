// The line a benchmark prints about the machine it ran on (docs/benchmarks: every figure states
// its machine and load): "2 CPUs (AMD EPYC 7B13), load average 3.71 at start, build
// RelWithDebInfo". Reads /proc; thread-safe.
#pragma once

#include <string>

namespace dljob::bench {

// `build_type`: the CMake build type the benchmark was compiled with.
std::string MachineLine(const std::string& build_type);

}  // namespace dljob::bench
