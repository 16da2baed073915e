// `dljob logs` against a cluster: the launcher's log in the job-log format, following across a
// broken stream and a restart, and what is said when there is no launcher to read.
#include "cli/kube/launcher_log.h"

#include <deque>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "jobs/codec.h"
#include "kube/testing/fake_api.h"

namespace dljob {
namespace {

using kube::ApiError;
using kube::ApiResult;
using kube::Json;
using kube::testing::FakeApi;

// One opening of a pod's log: these lines, then the end (or `error`).
struct LogScript {
  std::vector<std::string> lines;
  std::optional<ApiError> error;
};

class ScriptedStream : public kube::LineStream {
 public:
  explicit ScriptedStream(LogScript script) : script_(std::move(script)) {}
  ApiResult<std::optional<std::string>> Next() override {
    if (next_ < script_.lines.size()) return std::optional<std::string>(script_.lines[next_++]);
    if (script_.error) return *script_.error;
    return std::optional<std::string>();
  }
  void Cancel() override {}

 private:
  LogScript script_;
  size_t next_ = 0;
};

// FakeApi keeps no logs: this decorator serves each pod's scripted openings in order and
// forwards everything else.
class LogApi : public kube::Api {
 public:
  explicit LogApi(FakeApi& api) : api_(api) {}
  std::map<std::string, std::deque<LogScript>> scripts;  // by pod name
  std::vector<kube::LogOptions> opened;

  ApiResult<Json> Get(const kube::Resource& r, const std::string& ns,
                      const std::string& name) override {
    return api_.Get(r, ns, name);
  }
  ApiResult<Json> List(const kube::Resource& r, const std::string& ns,
                       const kube::ListOptions& o) override {
    return api_.List(r, ns, o);
  }
  ApiResult<Json> Create(const kube::Resource& r, const std::string& ns, const Json& o) override {
    return api_.Create(r, ns, o);
  }
  ApiResult<Json> Replace(const kube::Resource& r, const std::string& ns, const Json& o) override {
    return api_.Replace(r, ns, o);
  }
  ApiResult<Json> ReplaceStatus(const kube::Resource& r, const std::string& ns,
                                const Json& o) override {
    return api_.ReplaceStatus(r, ns, o);
  }
  ApiResult<Json> MergePatch(const kube::Resource& r, const std::string& ns,
                             const std::string& name, const Json& patch,
                             const std::string& sub) override {
    return api_.MergePatch(r, ns, name, patch, sub);
  }
  ApiResult<Json> Delete(const kube::Resource& r, const std::string& ns, const std::string& name,
                         const kube::DeleteOptions& o) override {
    return api_.Delete(r, ns, name, o);
  }
  ApiResult<kube::WatchStreamPtr> Watch(const kube::Resource& r, const std::string& ns,
                                        const kube::ListOptions& o) override {
    return api_.Watch(r, ns, o);
  }
  ApiResult<Json> Bind(const std::string& ns, const std::string& pod,
                       const std::string& node) override {
    return api_.Bind(ns, pod, node);
  }
  ApiResult<kube::LineStreamPtr> Logs(const std::string& ns, const std::string& pod,
                                      const kube::LogOptions& options) override {
    opened.push_back(options);
    std::deque<LogScript>& queue = scripts[pod];
    if (queue.empty()) return ApiError{404, "NotFound", "no log scripted for " + ns + "/" + pod};
    LogScript next = std::move(queue.front());
    queue.pop_front();
    return kube::LineStreamPtr(new ScriptedStream(std::move(next)));
  }
  // The operator's archive behind the API server's service proxy: `archived` answers, and what
  // was asked is kept.
  std::optional<ApiResult<std::string>> archived;
  std::vector<std::string> proxied;  // "ns service path token_header"
  ApiResult<std::string> ServiceProxyGet(const std::string& ns, const std::string& service,
                                         const std::string& path,
                                         const std::string& token_header) override {
    proxied.push_back(ns + " " + service + " " + path + " " + token_header);
    if (!archived) return ApiError{404, "NotFound", "services \"" + service + "\" not found"};
    return *archived;
  }

 private:
  FakeApi& api_;
};

class LauncherLogTest : public ::testing::Test {
 protected:
  void PutJob(JobPhase phase, int64_t resizes = 0) {
    DLJob job;
    if (resizes > 0) job.status.resizes = resizes;
    job.metadata.name = "resnet";
    job.metadata.namespace_ = "team-a";
    job.spec.image = "trainer";
    job.spec.command = {"dljob-train"};
    job.spec.gpus = 2;
    job.status.phase = phase;
    fake_.Put(kube::resources::kDLJobs, EncodeTree(job));
  }
  void PutLauncher(const std::string& phase) {
    fake_.Put(kube::resources::kPods,
              {{"metadata", {{"name", "resnet-launcher"}, {"namespace", "team-a"}}},
               {"status", {{"phase", phase}}}});
  }
  void EraseLauncher() { fake_.Erase(kube::resources::kPods, "team-a", "resnet-launcher"); }
  void Script(LogScript script) { api_.scripts["resnet-launcher"].push_back(std::move(script)); }

  Status Print(LogOptions options, const std::function<void()>& pause) {
    return PrintLauncherLog(api_, "team-a", "resnet", options, pause, out_);
  }
  static void NoPause() { FAIL() << "did not expect to wait"; }

  FakeApi fake_;
  LogApi api_{fake_};
  std::ostringstream out_;
};

TEST(JobLogLine, TurnsMpirunTagsIntoTheJobLogFormat) {
  EXPECT_EQ(JobLogLine("[1,3]<stdout>:Step 10", {}), "[rank 3] Step 10");
  EXPECT_EQ(JobLogLine("Primary job terminated normally", {}),
            "[mpirun] Primary job terminated normally");
  LogOptions rank3;
  rank3.rank = 3;
  EXPECT_EQ(JobLogLine("[1,3]<stderr>:oops", rank3), "oops");
  EXPECT_EQ(JobLogLine("[1,0]<stdout>:Step 10", rank3), std::nullopt);
  EXPECT_EQ(JobLogLine("mpirun noise", rank3), std::nullopt);
}

TEST_F(LauncherLogTest, PrintsTheLauncherLogOnceInTheJobLogFormat) {
  PutJob(JobPhase::kRunning);
  PutLauncher("Running");
  Script({{"[1,0]<stdout>:Step 1", "[1,1]<stdout>:Step 1", "Warning: a launcher line"}, {}});
  ASSERT_TRUE(Print({}, NoPause).ok());
  EXPECT_EQ(out_.str(), "[rank 0] Step 1\n[rank 1] Step 1\n[mpirun] Warning: a launcher line\n");
  ASSERT_EQ(api_.opened.size(), 1u);
  EXPECT_EQ(api_.opened[0].container, "launcher");
  EXPECT_FALSE(api_.opened[0].follow);
}

TEST_F(LauncherLogTest, RankPrintsOnlyThatRankWithoutTheTag) {
  PutJob(JobPhase::kSucceeded);
  PutLauncher("Succeeded");
  Script({{"[1,0]<stdout>:zero", "[1,1]<stdout>:one", "[1,1]<stderr>:one again", "mpirun"}, {}});
  LogOptions options;
  options.rank = 1;
  ASSERT_TRUE(Print(options, NoPause).ok());
  EXPECT_EQ(out_.str(), "one\none again\n");
}

TEST_F(LauncherLogTest, AJobWithoutLauncherYetSaysHowToFollowIt) {
  PutJob(JobPhase::kQueued);
  Status s = Print({}, NoPause);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("has no running launcher yet (job Queued)"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("dljob logs -f resnet"), std::string::npos) << s.message();
  PutLauncher("Pending");
  s = Print({}, NoPause);
  EXPECT_NE(s.message().find("launcher pod Pending"), std::string::npos) << s.message();
  EXPECT_TRUE(api_.opened.empty());
}

TEST_F(LauncherLogTest, AFinishedJobWhosePodsAreGoneIsReadFromTheOperatorsArchive) {
  PutJob(JobPhase::kSucceeded);
  api_.archived = std::string(
      "[mpirun] dljob: following launcher pod resnet-launcher\n[rank 0] step 1\n[rank 1] step 1\n");
  for (bool follow : {false, true}) {
    LogOptions options;
    options.follow = follow;
    out_.str("");
    ASSERT_TRUE(Print(options, NoPause).ok());
    EXPECT_EQ(out_.str(), *api_.archived.value());
  }
  // Through the API server's proxy to the chart's metrics Service, the token passed on.
  EXPECT_EQ(
      api_.proxied[0],
      "dljob-system dljob-operator-metrics:metrics /logs/team-a/resnet X-Dljob-Authorization");
  LogOptions rank1;
  rank1.rank = 1;
  out_.str("");
  ASSERT_TRUE(Print(rank1, NoPause).ok());
  EXPECT_EQ(out_.str(), "step 1\n");
  EXPECT_TRUE(api_.opened.empty());
}

TEST_F(LauncherLogTest, AnArchiveThatCannotBeReadSaysWhyAndWhatToDo) {
  PutJob(JobPhase::kFailed);
  api_.archived = ApiResult<std::string>(ApiError{0, kube::kReasonNoToken, "no token"});
  Status s = Print({}, NoPause);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  for (const char* part :
       {"launcher pod is gone", "client certificate", "kubectl -n team-a create token",
        "port-forward svc/dljob-operator-metrics"}) {
    EXPECT_NE(s.message().find(part), std::string::npos) << part << ": " << s.message();
  }
  api_.archived = ApiResult<std::string>(ApiError{
      403, "Forbidden",
      "Forbidden: User \"system:serviceaccount:team-a:bob\" cannot get resource \"pods/log\" in "
      "namespace \"team-a\"\n"});
  s = Print({}, NoPause);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("cannot get resource \"pods/log\" in namespace \"team-a\""),
            std::string::npos)
      << s.message();
  api_.archived.reset();  // no such Service
  s = Print({}, NoPause);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("DLJOB_OPERATOR_SERVICE"), std::string::npos) << s.message();
}

// Its launcher pod holds only the last run; the archive every run.
TEST_F(LauncherLogTest, AFinishedJobThatRanMoreThanOnceIsReadFromTheArchiveThoughItsPodIsThere) {
  PutJob(JobPhase::kSucceeded, /*resizes=*/2);
  PutLauncher("Succeeded");
  api_.archived = std::string("[rank 0] run 1\n[rank 0] run 2\n[rank 1] run 2\n[rank 0] run 3\n");
  ASSERT_TRUE(Print({}, NoPause).ok());
  EXPECT_EQ(out_.str(), *api_.archived.value());
  EXPECT_TRUE(api_.opened.empty()) << "the pod's log is not read";
  LogOptions rank1;
  rank1.rank = 1;
  out_.str("");
  ASSERT_TRUE(Print(rank1, NoPause).ok());
  EXPECT_EQ(out_.str(), "run 2\n");
}

TEST_F(LauncherLogTest, WhenTheArchiveCannotBeReadTheLastRunIsPrintedWithANote) {
  PutJob(JobPhase::kSucceeded, /*resizes=*/2);
  PutLauncher("Succeeded");
  api_.archived = ApiResult<std::string>(ApiError{0, kube::kReasonNoToken, "no token"});
  Script({{"[1,0]<stdout>:run 3"}, std::nullopt});
  std::ostringstream notes;
  LogOptions options;
  options.notes = &notes;
  ASSERT_TRUE(Print(options, NoPause).ok());
  EXPECT_EQ(out_.str(), "[rank 0] run 3\n");
  for (const char* part : {"ran 3 times", "only the last run", "client certificate"}) {
    EXPECT_NE(notes.str().find(part), std::string::npos) << part << ": " << notes.str();
  }
}

// One run: the pod's log is the whole log, and the archive is not asked.
TEST_F(LauncherLogTest, AFinishedJobThatRanOnceIsReadFromItsPod) {
  PutJob(JobPhase::kSucceeded);
  PutLauncher("Succeeded");
  Script({{"[1,0]<stdout>:done"}, std::nullopt});
  ASSERT_TRUE(Print({}, NoPause).ok());
  EXPECT_EQ(out_.str(), "[rank 0] done\n");
  EXPECT_TRUE(api_.proxied.empty());
}

TEST(ParseOperatorService, NamespaceSlashServiceWithAnOptionalPort) {
  EXPECT_EQ(ParseOperatorService("ops/dljob-operator-metrics:8080")->service,
            "dljob-operator-metrics:8080");
  EXPECT_EQ(ParseOperatorService("ops/svc")->ns, "ops");
  for (const char* bad : {"svc", "/svc", "ops/", "a/b/c"})
    EXPECT_FALSE(ParseOperatorService(bad)) << bad;
}

TEST_F(LauncherLogTest, AMissingJobIsNotFound) {
  Status s = Print({}, NoPause);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "no DLJob \"resnet\" in namespace \"team-a\"");
}

TEST_F(LauncherLogTest, FollowWaitsForTheLauncherAndEndsWhenTheJobFinishes) {
  PutJob(JobPhase::kScheduled);
  Script({{"[1,0]<stdout>:Step 1", "[1,0]<stdout>:Step 2"}, {}});
  int pauses = 0;
  auto pause = [&] {
    ++pauses;
    if (pauses == 1) {  // the workers became ready: the launcher starts
      PutJob(JobPhase::kRunning);
      PutLauncher("Running");
    } else if (pauses == 2) {  // its log ended; the operator marks the job finished
      PutJob(JobPhase::kSucceeded);
    } else {
      FAIL() << "followed past the end of the job";
    }
  };
  LogOptions options;
  options.follow = true;
  Status s = Print(options, pause);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(pauses, 2);
  EXPECT_EQ(out_.str(), "[rank 0] Step 1\n[rank 0] Step 2\n");
  ASSERT_EQ(api_.opened.size(), 1u);
  EXPECT_TRUE(api_.opened[0].follow);
}

TEST_F(LauncherLogTest, FollowReopensABrokenStreamWithoutRepeatingLines) {
  PutJob(JobPhase::kRunning);
  PutLauncher("Running");
  Script({{"[1,0]<stdout>:a", "[1,1]<stdout>:b"}, ApiError{0, "", "connection reset"}});
  Script({{"[1,0]<stdout>:a", "[1,1]<stdout>:b", "[1,0]<stdout>:c"}, {}});
  int pauses = 0;
  auto pause = [&] {
    if (++pauses == 2) PutJob(JobPhase::kSucceeded);
  };
  LogOptions options;
  options.follow = true;
  ASSERT_TRUE(Print(options, pause).ok());
  EXPECT_EQ(out_.str(), "[rank 0] a\n[rank 1] b\n[rank 0] c\n");
  EXPECT_EQ(api_.opened.size(), 2u);
}

TEST_F(LauncherLogTest, FollowGoesOnToTheNextLauncherAfterARestart) {
  PutJob(JobPhase::kRunning);
  PutLauncher("Failed");
  Script({{"[1,1]<stderr>:worker lost"}, {}});
  Script({{"[1,0]<stdout>:resumed from checkpoint"}, {}});
  int pauses = 0;
  auto pause = [&] {
    ++pauses;
    if (pauses == 1) {  // the operator restarts the job: a new launcher incarnation
      PutJob(JobPhase::kRestarting);
      EraseLauncher();
    } else if (pauses == 2) {
      PutJob(JobPhase::kRunning);
      PutLauncher("Running");
    } else if (pauses == 3) {
      PutJob(JobPhase::kSucceeded);
    }
  };
  LogOptions options;
  options.follow = true;
  ASSERT_TRUE(Print(options, pause).ok());
  EXPECT_EQ(out_.str(), "[rank 1] worker lost\n[rank 0] resumed from checkpoint\n");
  EXPECT_EQ(pauses, 3);
}

}  // namespace
}  // namespace dljob
