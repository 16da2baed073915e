// LocalBackend's reading of job records on the injected clock: a Queued job whose supervising
// process has not written its pid yet is a submit in its first moments for 30 s; after that the
// record is corrected to Failed (SupervisorLost), stamped with the clock's time.
#include "cli/local/local_backend.h"

#include <gtest/gtest.h>

#include "base/testing/fake_clock.h"
#include "base/testing/mem_env.h"
#include "base/time_format.h"
#include "jobs/conditions.h"

namespace dljob {
namespace {

TEST(LocalBackendTest, AQueuedJobWithNoSupervisorIsLostOnlyAfterTheGracePeriod) {
  testing::MemEnv env;
  testing::FakeClock clock;
  DLJob job;
  job.metadata.name = "a";
  job.metadata.creation_timestamp = FormatRfc3339(clock.Now());
  job.spec.image = "img";
  job.spec.gpus = 1;
  job.spec.command = {"true"};
  job.status.phase = JobPhase::kQueued;
  ASSERT_TRUE(JobStore("/state/dljob", env).Create(job).ok());
  LocalBackend backend(JobStore("/state/dljob", env), LocalMachine{}, SupervisorOptions{}, clock);

  clock.Advance(std::chrono::seconds(29));
  Result<DLJob> early = backend.Get("a");
  ASSERT_TRUE(early.ok()) << early.status().message();
  EXPECT_EQ(early->status.phase, JobPhase::kQueued);

  clock.Advance(std::chrono::seconds(2));
  Result<DLJob> late = backend.Get("a");
  ASSERT_TRUE(late.ok()) << late.status().message();
  EXPECT_EQ(late->status.phase, JobPhase::kFailed);
  const Condition* lost = FindCondition(late->status, "Failed");
  ASSERT_NE(lost, nullptr);
  EXPECT_EQ(lost->reason, "SupervisorLost");
  EXPECT_EQ(lost->last_transition_time, FormatRfc3339(clock.Now()));
  EXPECT_EQ(JobStore("/state/dljob", env).Load("a")->status.phase, JobPhase::kFailed)
      << "the corrected record is saved";
}

}  // namespace
}  // namespace dljob
