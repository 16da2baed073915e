#include "images/trainer/job_errors.h"

#include <iostream>

namespace dljob::trainer {

void PrintError(const std::string& message, const std::string& hint) {
  std::cerr << "dljob-train: error: " << message << "\n";
  if (!hint.empty()) std::cerr << "hint: " << hint << "\n";
  std::cerr.flush();
}

std::string RankPrefix(int rank) { return rank != 0 ? "rank " + std::to_string(rank) + ": " : ""; }

std::optional<int> ExitIfAnyRankFailed(Collective& c, const Status& local, int exit_code,
                                       const std::string& hint) {
  int first_failed = -1;
  Status comm;
  if (AllRanksOk(c, local, &first_failed, &comm)) return std::nullopt;
  if (!comm.ok()) {
    PrintError(RankPrefix(c.rank()) + comm.message());
    return kRuntimeExitCode;
  }
  if (first_failed == c.rank()) PrintError(RankPrefix(c.rank()) + local.message(), hint);
  return exit_code;
}

}  // namespace dljob::trainer
