#include "jobs/dljob_types.h"

#include <array>
#include <utility>

namespace dljob {
namespace {

constexpr std::array<std::pair<JobPhase, const char*>, 8> kPhaseNames = {{
    {JobPhase::kQueued, "Queued"},
    {JobPhase::kScheduled, "Scheduled"},
    {JobPhase::kRunning, "Running"},
    {JobPhase::kRestarting, "Restarting"},
    {JobPhase::kSucceeded, "Succeeded"},
    {JobPhase::kFailed, "Failed"},
    {JobPhase::kSuspended, "Suspended"},
    {JobPhase::kInterrupted, "Interrupted"},
}};

}  // namespace

const char* PhaseName(JobPhase phase) {
  for (const auto& [p, name] : kPhaseNames) {
    if (p == phase) return name;
  }
  return "";
}

std::vector<std::string_view> AllPhaseNames() {
  std::vector<std::string_view> names;
  for (const auto& [p, name] : kPhaseNames) names.push_back(name);
  return names;
}

std::optional<JobPhase> ParsePhase(const std::string& name) {
  if (name.empty()) return JobPhase::kUnset;
  for (const auto& [p, n] : kPhaseNames) {
    if (name == n) return p;
  }
  return std::nullopt;
}

bool IsFinished(JobPhase phase) {
  return phase == JobPhase::kSucceeded || phase == JobPhase::kFailed ||
         phase == JobPhase::kInterrupted;
}

}  // namespace dljob
