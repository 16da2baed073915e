// The advisor: runs the plan's axes through a TrialRunner, one after another, each starting from
// what the earlier ones chose, and collects the trials and the choices (plan.h for the axes,
// saturation.h for the rule that picks a setting on the numeric ones).
//
// Trials are run in rounds (every setting once, then again, --repeats times), and a setting an
// earlier axis already ran is reused rather than run again — except on the data axis, whose
// settings all run afresh side by side.
// The data axis is a choice between places, not more or less of something: the trial with the
// highest throughput wins; trials within the band of it are tied, and a tie goes to the one that
// starts faster by at least 1 s and 10% (a job pays its startup every run, the cache fill once per
// node), then to reading in place (no copy to keep). A failed data path never wins.
// The memory axis caps memory at fractions of the peak the chosen setting used uncapped, largest
// first, and stops at the first cap that fails; the uncapped run counts as the point at its own
// peak.
//
// RunAdvice blocks; it stops starting trials once the runner reports an interrupt. Single thread.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/advise/plan.h"
#include "cli/advise/saturation.h"
#include "cli/advise/trial.h"

namespace dljob::advise {

inline constexpr char kAxisThreads[] = "threads";
inline constexpr char kAxisLoader[] = "loader";
inline constexpr char kAxisData[] = "data";
inline constexpr char kAxisMemory[] = "memory";

struct TrialRecord {
  int index = 0;     // 1-based, in run order
  std::string axis;  // kAxis*
  TrialSetting setting;
  TrialMeasurement measurement;
};

struct AxisResult {
  std::string axis;
  std::vector<int> trials;               // indexes of its trials
  std::optional<Saturation> saturation;  // numeric axes
  std::string choice;       // the setting chosen, as text ("2", "cache", "512Mi"); "" none
  std::string explanation;  // why
};

struct AdviceRun {
  std::vector<TrialRecord> trials;
  std::vector<AxisResult> axes;
  TrialSetting chosen;                          // every axis's choice together
  std::optional<int64_t> memory_cap_bytes;      // the memory axis's choice
  std::optional<int64_t> reference_peak_bytes;  // the chosen setting's peak, uncapped
  std::string unit = "images/sec";
  bool interrupted = false;
};

// What the caller hears while the trials run.
struct AdviceProgress {
  // Before trial `index` of about `planned` (the memory axis is planned once it starts).
  std::function<void(const TrialRecord& trial, int planned)> started = [](auto&, int) {};
  std::function<void(const TrialRecord& trial)> finished = [](auto&) {};
};

AdviceRun RunAdvice(const DLJob& job, const AdvisePlan& plan, const AdviseOptions& options,
                    TrialRunner& runner, JobObserver& observer,
                    const AdviceProgress& progress = {});

// "512Mi", "2Gi": bytes rounded up to a multiple of 64 MiB (Gi when whole). For memoryPerGpu.
std::string MemoryQuantity(int64_t bytes);

}  // namespace dljob::advise
