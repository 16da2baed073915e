// The recommendation of `dljob advise`, from the advisor's choices (advisor.h), and the plain
// statement of what carries over from this machine to a GPU node.
//
//   resources.cpuPerGpu     threads per rank + loader threads (when the loader axis ran): the
//                           cores one rank kept busy before more stopped helping.
//   resources.memoryPerGpu  the memory axis's chosen cap (all ranks together) × 1.25 headroom,
//                           divided by the ranks, rounded up to 64 MiB. Without a memory axis, not
//                           recommended.
//   loader threads          the loader axis's choice, when it ran.
//   cache                   yes when the data axis chose "cache"; no for "store" and for data on
//                           local disk already.
// Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/advise/advisor.h"
#include "cli/advise/plan.h"

namespace dljob::advise {

inline constexpr double kMemoryHeadroom = 1.25;

struct RecommendationLine {
  std::string field;  // "resources.cpuPerGpu", "loader threads", …
  std::string value;  // "2", "768Mi", "yes", or "-" when not recommended
  std::string why;
};

struct Recommendation {
  int threads_per_rank = 1;
  std::optional<int> loader_threads;
  std::string cpu_per_gpu;
  std::optional<std::string> memory_per_gpu;
  std::optional<bool> cache;  // nullopt: the job has no data volume
  std::vector<RecommendationLine> lines;
};

Recommendation Recommend(const AdviceRun& run, const AdvisePlan& plan);

// A note per numeric axis whose band the trials' noise widened beyond `tolerance`: its
// conclusion is weaker, and how to firm it up.
std::vector<std::string> NoiseNotes(const AdviceRun& run, double tolerance);

// Which conclusions hold only for CPU ranks and how to run advise on a GPU node. `on_gpu`: the
// trials ran on GPUs (then only the note on running it as a job remains).
std::vector<std::string> CarryOverNotes(bool on_gpu, const std::string& job_file);

}  // namespace dljob::advise
