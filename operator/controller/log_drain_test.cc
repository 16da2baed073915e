#include "operator/controller/log_drain.h"

#include <gtest/gtest.h>

#include "base/time_format.h"

namespace dljob::controller {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

const WallTime kFinished = *ParseRfc3339("2026-11-26T04:00:00Z");

json Pod(const std::string& role, const std::string& uid, const std::string& finished_at) {
  json pod = {{"metadata", {{"uid", uid}, {"labels", {{"dljob.io/role", role}}}}},
              {"status", {{"phase", "Succeeded"}}}};
  if (!finished_at.empty()) {
    pod["status"]["containerStatuses"] = {
        {{"name", "launcher"}, {"state", {{"terminated", {{"finishedAt", finished_at}}}}}}};
  }
  return pod;
}

LauncherLogEnded Says(std::optional<bool> ended) {
  return [ended](const std::string& uid) { return uid == "l-1" ? ended : std::nullopt; };
}

const std::vector<json> kPods = {Pod("worker", "w-0", ""),
                                 Pod("launcher", "l-1", "2026-11-26T04:00:00Z")};

TEST(LauncherLogWait, WaitsASecondAtATimeWhileTheCollectorReads) {
  EXPECT_EQ(LauncherLogWait(kPods, Says(false), kFinished), milliseconds(1000));
  EXPECT_EQ(LauncherLogWait(kPods, Says(false), kFinished + seconds(14) + milliseconds(500)),
            milliseconds(500));
}

TEST(LauncherLogWait, NeverPastTheGraceAfterTheContainerFinished) {
  EXPECT_EQ(LauncherLogWait(kPods, Says(false), kFinished + kLauncherLogGrace), std::nullopt);
  EXPECT_EQ(LauncherLogWait(kPods, Says(false), kFinished + seconds(3), seconds(2)), std::nullopt);
}

TEST(LauncherLogWait, NotWhenTheLogIsReadOrNobodyReadsIt) {
  EXPECT_EQ(LauncherLogWait(kPods, Says(true), kFinished), std::nullopt);
  EXPECT_EQ(LauncherLogWait(kPods, Says(std::nullopt), kFinished), std::nullopt);
  EXPECT_EQ(LauncherLogWait(kPods, nullptr, kFinished), std::nullopt);
}

TEST(LauncherLogWait, NotWithoutALauncherOrItsFinishTime) {
  EXPECT_EQ(LauncherLogWait({Pod("worker", "l-1", "2026-11-26T04:00:00Z")}, Says(false), kFinished),
            std::nullopt);
  EXPECT_EQ(LauncherLogWait({Pod("launcher", "l-1", "")}, Says(false), kFinished), std::nullopt);
}

}  // namespace
}  // namespace dljob::controller
