#include "cli/local/job_store.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "base/testing/mem_env.h"

namespace dljob {
namespace {
namespace fs = std::filesystem;

class JobStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/dljob-store-XXXXXX";
    root_ = mkdtemp(tmpl);
  }
  void TearDown() override { fs::remove_all(root_); }
  DLJob Job(const std::string& name) {
    DLJob job;
    job.metadata.name = name;
    job.spec.image = "img";
    job.spec.gpus = 2;
    job.spec.command = {"true"};
    job.status.phase = JobPhase::kQueued;
    return job;
  }
  std::string root_;
};

TEST_F(JobStoreTest, CreateSaveLoadRemove) {
  JobStore store(root_);
  ASSERT_TRUE(store.Create(Job("a")).ok());
  DLJob job = *store.Load("a");
  EXPECT_EQ(job, Job("a"));
  job.status.phase = JobPhase::kSucceeded;
  ASSERT_TRUE(store.Save(job).ok());
  EXPECT_EQ(store.Load("a")->status.phase, JobPhase::kSucceeded);
  EXPECT_EQ(*store.Names(), std::vector<std::string>{"a"});
  ASSERT_TRUE(store.Remove("a").ok());
  EXPECT_EQ(store.Load("a").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store.Remove("a").code(), StatusCode::kNotFound);
}

TEST_F(JobStoreTest, ANameCanBeCreatedOnce) {
  JobStore store(root_);
  ASSERT_TRUE(store.Create(Job("a")).ok());
  Status s = store.Create(Job("a"));
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(s.message(), "job \"a\" already exists");
}

TEST_F(JobStoreTest, SaveLeavesNoTemporaryFiles) {
  JobStore store(root_);
  ASSERT_TRUE(store.Create(Job("a")).ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(store.Save(Job("a")).ok());
  int files = 0;
  for (const auto& e : fs::directory_iterator(store.JobDir("a"))) {
    ++files;
    EXPECT_EQ(e.path().filename(), "job.json");
  }
  EXPECT_EQ(files, 1);
}

TEST_F(JobStoreTest, ADamagedRecordIsReportedNotCrashedOn) {
  JobStore store(root_);
  ASSERT_TRUE(store.Create(Job("a")).ok());
  std::ofstream(store.JobDir("a") + "/job.json") << "{\"apiVersion\": 3";
  Result<DLJob> job = store.Load("a");
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("is damaged"), std::string::npos);
}

TEST_F(JobStoreTest, SupervisorIdentityRoundTripsAndDetectsLiveness) {
  JobStore store(root_);
  ASSERT_TRUE(store.Create(Job("a")).ok());
  ProcessId self = SelfProcessId();
  ASSERT_TRUE(store.WriteSupervisor("a", self).ok());
  EXPECT_EQ(store.ReadSupervisor("a"), self);
  EXPECT_TRUE(IsAlive(self));
  EXPECT_FALSE(IsAlive({self.pid, self.start_ticks + 1}));  // same pid, another process
}

TEST(JobStoreRoot, FollowsXdgStateHome) {
  EXPECT_EQ(JobStore::DefaultRoot({{"XDG_STATE_HOME", "/s"}, {"HOME", "/h"}}), "/s/dljob");
  EXPECT_EQ(JobStore::DefaultRoot({{"HOME", "/h"}}), "/h/.local/state/dljob");
  EXPECT_EQ(JobStore::DefaultRoot({{"XDG_STATE_HOME", "relative"}, {"HOME", "/h"}}),
            "/h/.local/state/dljob");  // the spec says relative values are ignored
}

TEST(LineAppenderTest, AppendsWholeLines) {
  char tmpl[] = "/tmp/dljob-append-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  {
    auto a = LineAppender::Open(dir + "/log");
    ASSERT_TRUE(a.ok());
    ASSERT_TRUE((*a)->Append("one").ok());
    ASSERT_TRUE((*a)->Append("two").ok());
  }
  std::ifstream in(dir + "/log");
  std::string all((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(all, "one\ntwo\n");
  fs::remove_all(dir);
}

// The same store on an in-memory filesystem: what a failed write leaves behind.
TEST(JobStoreOnMemEnvTest, AFailedSaveKeepsTheLastRecordWhole) {
  testing::MemEnv env;
  JobStore store("/state/dljob", env);
  DLJob job;
  job.metadata.name = "a";
  job.spec.image = "img";
  job.spec.gpus = 2;
  job.spec.command = {"true"};
  job.status.phase = JobPhase::kRunning;
  ASSERT_TRUE(store.Create(job).ok());
  EXPECT_EQ(store.Create(job).code(), StatusCode::kAlreadyExists);

  env.FailWrites(1,
                 Status::Unavailable("cannot write \"/state/dljob/jobs/a/job.json\": disk full"));
  DLJob done = job;
  done.status.phase = JobPhase::kSucceeded;
  Status failed = store.Save(done);
  EXPECT_EQ(failed.code(), StatusCode::kUnavailable);
  EXPECT_NE(failed.message().find("disk full"), std::string::npos);
  EXPECT_EQ(store.Load("a")->status.phase, JobPhase::kRunning);

  ASSERT_TRUE(store.Save(done).ok());
  EXPECT_EQ(store.Load("a")->status.phase, JobPhase::kSucceeded);
  EXPECT_EQ(*store.Names(), std::vector<std::string>{"a"});
  ASSERT_TRUE(store.Remove("a").ok());
  EXPECT_EQ(store.Load("a").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store.Remove("a").code(), StatusCode::kNotFound);
}

// The job's log and metrics go through the same Env: a failed append loses that line only.
TEST(JobStoreOnMemEnvTest, AFailedAppendLosesOnlyItsLine) {
  testing::MemEnv env;
  JobStore store("/state/dljob", env);
  DLJob job;
  job.metadata.name = "a";
  job.spec.image = "img";
  job.spec.gpus = 1;
  job.spec.command = {"true"};
  EXPECT_EQ(store.OpenLog("a").status().code(), StatusCode::kNotFound);  // no such job yet
  ASSERT_TRUE(store.Create(job).ok());
  Result<std::unique_ptr<LineAppender>> log = store.OpenLog("a");
  Result<std::unique_ptr<LineAppender>> metrics = store.OpenMetrics("a");
  ASSERT_TRUE(log.ok() && metrics.ok());
  ASSERT_TRUE((*log)->Append("[rank 0] one").ok());
  env.FailWrites(1,
                 Status::Unavailable("cannot write \"/state/dljob/jobs/a/output.log\": disk full"));
  Status failed = (*log)->Append("[rank 0] two");
  EXPECT_EQ(failed.code(), StatusCode::kUnavailable);
  EXPECT_NE(failed.message().find("disk full"), std::string::npos);
  ASSERT_TRUE((*log)->Append("[rank 0] three").ok());
  ASSERT_TRUE((*metrics)->Append(R"({"metric":{"step":1}})").ok());
  EXPECT_EQ(*env.ReadFile(store.LogPath("a")), "[rank 0] one\n[rank 0] three\n");
  EXPECT_EQ(*env.ReadFile(store.MetricsPath("a")), "{\"metric\":{\"step\":1}}\n");
  EXPECT_EQ(*store.Names(), std::vector<std::string>{"a"});
}

TEST(JobStoreOnMemEnvTest, AStoreThatWasNeverWrittenListsNoJobs) {
  testing::MemEnv env;
  JobStore store("/nowhere/dljob", env);
  EXPECT_TRUE(store.Names()->empty());
  EXPECT_EQ(store.Load("x").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace dljob
