#include "jobs/run_policy.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace dljob {
namespace {

using std::chrono::seconds;

// Seconds after an arbitrary fixed instant; every time in the table is one of these.
WallTime T(int64_t s) { return WallTime{} + seconds(1'700'000'000 + s); }

constexpr char kCause[] = "worker j-worker-1 exited with code 3 (Error)";

RunPolicy Policy(std::optional<int64_t> backoff, std::optional<int64_t> active = std::nullopt,
                 std::optional<int64_t> progress = std::nullopt) {
  RunPolicy p;
  p.backoff_limit = backoff;
  p.active_deadline_seconds = active;
  p.progress_deadline_seconds = progress;
  return p;
}

RunObservation Running(int64_t restarts = 0) {
  RunObservation o;
  o.attempt = AttemptState::kRunning;
  o.started = T(0);
  o.running_since = T(0);
  o.restarts = restarts;
  return o;
}

RunObservation Failed(int64_t restarts = 0) {
  RunObservation o = Running(restarts);
  o.attempt = AttemptState::kFailed;
  o.running_since.reset();
  o.reason = "WorkerFailed";
  o.message = kCause;
  return o;
}

RunObservation Succeeded() {
  RunObservation o = Running();
  o.attempt = AttemptState::kSucceeded;
  o.reason = "Succeeded";
  o.message = "the launcher's mpirun exited 0";
  return o;
}

template <typename F>
RunObservation With(RunObservation o, F change) {
  change(o);
  return o;
}

struct Row {
  std::string name;
  RunPolicy policy;
  RunObservation seen;
  int64_t now;  // seconds after T(0)
  // expected
  RunAction action;
  std::optional<JobPhase> phase;
  std::string reason;
  std::string message;
  int64_t restarts;
  std::optional<int64_t> recheck_at;  // seconds after T(0)
};

const std::string kSuspendMessage =
    "spec.runPolicy.suspend is true: the job's pods are deleted; set it to false to resume";
const std::string kDeadline100 =
    "the job ran longer than spec.runPolicy.activeDeadlineSeconds (100s) and was stopped";
const std::string kStuck60 =
    "no progress (no new metric line) for spec.runPolicy.progressDeadlineSeconds (60s)";

std::vector<Row> Rows() {
  auto suspended = [](RunObservation& o) { o.suspended = true; };
  auto progress_at = [](int64_t s) { return [s](RunObservation& o) { o.last_progress = T(s); }; };
  return {
      // Nothing to judge.
      {"NoAttemptNoPolicy", Policy(3), RunObservation{}, 0, RunAction::kNone, std::nullopt, "", "",
       0, std::nullopt},
      {"RunningWithoutDeadlines", Policy(3), Running(2), 1000, RunAction::kNone, std::nullopt, "",
       "", 2, std::nullopt},
      // Suspend comes first, whatever the attempt and the deadlines say.
      {"Suspended", Policy(3), With(Running(1), suspended), 5, RunAction::kSuspend,
       JobPhase::kSuspended, "Suspended", kSuspendMessage, 1, std::nullopt},
      {"SuspendedBeatsSucceeded", Policy(3), With(Succeeded(), suspended), 5, RunAction::kSuspend,
       JobPhase::kSuspended, "Suspended", kSuspendMessage, 0, std::nullopt},
      {"SuspendedBeatsAMissedDeadline", Policy(3, 100), With(Failed(), suspended), 500,
       RunAction::kSuspend, JobPhase::kSuspended, "Suspended", kSuspendMessage, 0, std::nullopt},
      // Success is the attempt's own words, and beats the deadlines.
      {"Succeeded", Policy(3), Succeeded(), 5, RunAction::kSucceed, JobPhase::kSucceeded,
       "Succeeded", "the launcher's mpirun exited 0", 0, std::nullopt},
      {"SucceededBeatsTheActiveDeadline", Policy(3, 100), Succeeded(), 100, RunAction::kSucceed,
       JobPhase::kSucceeded, "Succeeded", "the launcher's mpirun exited 0", 0, std::nullopt},
      {"SucceededBeatsTheProgressDeadline", Policy(3, std::nullopt, 60), Succeeded(), 600,
       RunAction::kSucceed, JobPhase::kSucceeded, "Succeeded", "the launcher's mpirun exited 0", 0,
       std::nullopt},
      // activeDeadlineSeconds: from `started`, inclusive, never restarted.
      {"ActiveDeadlineAhead", Policy(3, 100), Running(), 99, RunAction::kNone, std::nullopt, "", "",
       0, 100},
      {"ActiveDeadlineExactlyDue", Policy(3, 100), Running(), 100, RunAction::kFailAndStop,
       JobPhase::kFailed, "DeadlineExceeded", kDeadline100, 0, std::nullopt},
      {"ActiveDeadlinePassedBeatsAFailedAttempt", Policy(3, 100), Failed(1), 150,
       RunAction::kFailAndStop, JobPhase::kFailed, "DeadlineExceeded", kDeadline100, 1,
       std::nullopt},
      {"ActiveDeadlineAppliesWithoutAnAttempt", Policy(3, 100),
       With(RunObservation{}, [](RunObservation& o) { o.started = T(0); }), 100,
       RunAction::kFailAndStop, JobPhase::kFailed, "DeadlineExceeded", kDeadline100, 0,
       std::nullopt},
      {"ActiveDeadlineNotStartedIsNotChecked", Policy(3, 100),
       With(Running(), [](RunObservation& o) { o.started.reset(); }), 10'000, RunAction::kNone,
       std::nullopt, "", "", 0, std::nullopt},
      {"ActiveDeadlineKeepsItsNameWhenRestartsAreUsedUp", Policy(0, 100), Failed(), 100,
       RunAction::kFailAndStop, JobPhase::kFailed, "DeadlineExceeded", kDeadline100, 0,
       std::nullopt},
      // backoffLimit: restarts while restarts < limit.
      {"FailedFirstRestart", Policy(3), Failed(0), 5, RunAction::kRestart, JobPhase::kRestarting,
       "WorkerFailed", std::string(kCause) + "; restarting the whole job (restart 1 of 3)", 1,
       std::nullopt},
      {"FailedLastRestart", Policy(3), Failed(2), 5, RunAction::kRestart, JobPhase::kRestarting,
       "WorkerFailed", std::string(kCause) + "; restarting the whole job (restart 3 of 3)", 3,
       std::nullopt},
      {"FailedLimitReached", Policy(3), Failed(3), 5, RunAction::kFail, JobPhase::kFailed,
       "BackoffLimitExceeded",
       std::string(kCause) + "; no restarts left (spec.runPolicy.backoffLimit is 3)", 3,
       std::nullopt},
      {"FailedLimitZeroFailsAtOnce", Policy(0), Failed(0), 5, RunAction::kFail, JobPhase::kFailed,
       "BackoffLimitExceeded",
       std::string(kCause) + "; no restarts left (spec.runPolicy.backoffLimit is 0)", 0,
       std::nullopt},
      {"FailedLimitUnsetIsTheDefaultThree", Policy(std::nullopt), Failed(2), 5, RunAction::kRestart,
       JobPhase::kRestarting, "WorkerFailed",
       std::string(kCause) + "; restarting the whole job (restart 3 of 3)", 3, std::nullopt},
      {"FailedLimitUnsetReached", Policy(std::nullopt), Failed(3), 5, RunAction::kFail,
       JobPhase::kFailed, "BackoffLimitExceeded",
       std::string(kCause) + "; no restarts left (spec.runPolicy.backoffLimit is 3)", 3,
       std::nullopt},
      {"RestartStillLooksAgainAtTheActiveDeadline", Policy(3, 100), Failed(0), 40,
       RunAction::kRestart, JobPhase::kRestarting, "WorkerFailed",
       std::string(kCause) + "; restarting the whole job (restart 1 of 3)", 1, 100},
      {"FailedIgnoresTheProgressDeadline", Policy(3, std::nullopt, 60), Failed(0), 600,
       RunAction::kRestart, JobPhase::kRestarting, "WorkerFailed",
       std::string(kCause) + "; restarting the whole job (restart 1 of 3)", 1, std::nullopt},
      // progressDeadlineSeconds: from the later of running_since and last_progress, inclusive.
      {"ProgressDeadlineAhead", Policy(3, std::nullopt, 60), Running(), 59, RunAction::kNone,
       std::nullopt, "", "", 0, 60},
      {"ProgressDeadlineExactlyDue", Policy(3, std::nullopt, 60), Running(), 60,
       RunAction::kRestart, JobPhase::kRestarting, "ProgressDeadlineExceeded",
       kStuck60 + "; restarting the whole job (restart 1 of 3)", 1, std::nullopt},
      {"ProgressMovesTheDeadline", Policy(3, std::nullopt, 60), With(Running(), progress_at(50)),
       80, RunAction::kNone, std::nullopt, "", "", 0, 110},
      {"ProgressDeadlineDueAfterTheLastMetric", Policy(3, std::nullopt, 60),
       With(Running(), progress_at(50)), 110, RunAction::kRestart, JobPhase::kRestarting,
       "ProgressDeadlineExceeded", kStuck60 + "; restarting the whole job (restart 1 of 3)", 1,
       std::nullopt},
      {"ProgressFromAnEarlierAttemptDoesNotCount", Policy(3, std::nullopt, 60),
       With(With(Running(1), progress_at(-30)), [](RunObservation& o) { o.running_since = T(10); }),
       69, RunAction::kNone, std::nullopt, "", "", 1, 70},
      {"ProgressDeadlineLimitReached", Policy(2, std::nullopt, 60), Running(2), 60,
       RunAction::kFail, JobPhase::kFailed, "BackoffLimitExceeded",
       kStuck60 + "; no restarts left (spec.runPolicy.backoffLimit is 2)", 2, std::nullopt},
      {"ProgressNotCheckedWithoutRunningSince", Policy(3, std::nullopt, 60),
       With(Running(), [](RunObservation& o) { o.running_since.reset(); }), 600, RunAction::kNone,
       std::nullopt, "", "", 0, std::nullopt},
      {"ProgressNotCheckedWithoutAnAttempt", Policy(3, std::nullopt, 60),
       With(Running(), [](RunObservation& o) { o.attempt = AttemptState::kNone; }), 600,
       RunAction::kNone, std::nullopt, "", "", 0, std::nullopt},
      // Both deadlines: the active one wins when both are due; the earlier one is looked at.
      {"BothDueActiveWins", Policy(3, 100, 60), Running(), 100, RunAction::kFailAndStop,
       JobPhase::kFailed, "DeadlineExceeded", kDeadline100, 0, std::nullopt},
      {"BothAheadProgressFirst", Policy(3, 100, 60), Running(), 30, RunAction::kNone, std::nullopt,
       "", "", 0, 60},
      {"BothAheadActiveFirst", Policy(3, 100, 60), With(Running(), progress_at(70)), 90,
       RunAction::kNone, std::nullopt, "", "", 0, 100},
  };
}

class RunPolicyTest : public ::testing::TestWithParam<Row> {};

TEST_P(RunPolicyTest, Decides) {
  const Row& row = GetParam();
  RunDecision d = DecideRun(row.policy, row.seen, T(row.now));
  EXPECT_EQ(d.action, row.action);
  EXPECT_EQ(d.phase, row.phase);
  EXPECT_EQ(d.reason, row.reason);
  EXPECT_EQ(d.message, row.message);
  EXPECT_EQ(d.restarts, row.restarts);
  std::optional<WallTime> recheck;
  if (row.recheck_at) recheck = T(*row.recheck_at);
  EXPECT_EQ(d.recheck_at, recheck);
}

INSTANTIATE_TEST_SUITE_P(Rules, RunPolicyTest, ::testing::ValuesIn(Rows()),
                         [](const ::testing::TestParamInfo<Row>& info) { return info.param.name; });

// The whole small space of (restarts, backoffLimit): restart exactly while restarts < limit.
TEST(RunPolicySweep, RestartsExactlyWhileBelowTheBackoffLimit) {
  for (int64_t limit = 0; limit <= 6; ++limit) {
    for (int64_t restarts = 0; restarts <= 7; ++restarts) {
      RunDecision d = DecideRun(Policy(limit), Failed(restarts), T(5));
      bool restart = restarts < limit;
      EXPECT_EQ(d.action, restart ? RunAction::kRestart : RunAction::kFail)
          << "restarts " << restarts << " limit " << limit;
      EXPECT_EQ(d.restarts, restart ? restarts + 1 : restarts);
    }
  }
}

// Every second around both deadlines: missed at exactly `due`, never before.
TEST(RunPolicySweep, DeadlinesAreMissedExactlyWhenDue) {
  for (int64_t now = 0; now <= 130; ++now) {
    RunDecision active = DecideRun(Policy(3, 100), Running(), T(now));
    EXPECT_EQ(active.action, now >= 100 ? RunAction::kFailAndStop : RunAction::kNone) << now;
    RunObservation seen = With(Running(), [](RunObservation& o) { o.last_progress = T(40); });
    RunDecision stuck = DecideRun(Policy(3, std::nullopt, 60), seen, T(now));
    EXPECT_EQ(stuck.action, now >= 100 ? RunAction::kRestart : RunAction::kNone) << now;
  }
}

}  // namespace
}  // namespace dljob
