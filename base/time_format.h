// Time stamps and human durations, as Kubernetes and kubectl print them.
//
// Pure functions; the caller passes "now", so tests need no clock. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace dljob {

using WallTime = std::chrono::system_clock::time_point;

// "2026-11-22T05:03:07Z" (UTC, second precision, as metav1.Time marshals).
std::string FormatRfc3339(WallTime t);
// "2026-11-22T05:03:07.123456Z" (UTC, six fractional digits, as metav1.MicroTime marshals: Lease
// times).
std::string FormatRfc3339Micros(WallTime t);
// "2026-11-22T05:03:07.123456789Z" (UTC, nine fractional digits, as the kubelet stamps log lines
// with `timestamps=true`).
std::string FormatRfc3339Nanos(WallTime t);
// Accepts "YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)", keeping the fraction to the nanosecond (digits
// past nine are dropped); nullopt otherwise.
std::optional<WallTime> ParseRfc3339(const std::string& s);

// Whole seconds since the Unix epoch (rounded toward zero), as the scheduler's times are counted.
int64_t UnixSeconds(WallTime t);

// kubectl's age style: "42s", "5m12s", "3h4m", "2d3h", "400d".
std::string HumanDuration(std::chrono::seconds d);

}  // namespace dljob
