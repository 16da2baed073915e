// Numbers and tables as a person reads them on a terminal: byte counts ("1.5 MiB"), clock-style
// durations ("1:02:03") and kubectl-style tables. The one byte formatter of the project: the CLI's
// data commands, the local backend's fetch notices and the progress printer (progress_printer.h)
// all print through it.
//
// Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace dljob {

// Binary units with one decimal: "512 B", "1.5 KiB", "20.0 MiB", "3.2 GiB" (the largest unit
// whose rounded number stays under 1024; GiB beyond that).
std::string HumanBytes(uint64_t bytes);

// Minutes and seconds, with hours once there are any: "0:21", "1:02:03". Negative reads as 0:00.
std::string ClockDuration(std::chrono::seconds d);

// Left-aligned columns separated by at least three spaces, as kubectl prints them; a line per row.
std::string RenderTable(const std::vector<std::vector<std::string>>& rows);

}  // namespace dljob
