// Logs that survive, shown where only the test server can show them (several replicas, operators
// killed at will), for both forms of the archive: a directory (what a PersistentVolumeClaim gives
// every replica) and an S3 bucket (a real s3rver process, keys from a Secret).
//
// Two replicas run a job; the standby serves the job's log from the archive while the leader
// writes it. Both are then SIGKILLed while the job still runs (nothing of theirs survives but the
// archive); a fresh operator serves the same log at once, follows the job to its end, and the log
// holds every line once: the new leader skipped the lines the archive already had.
#include <gtest/gtest.h>

#include "base/base64.h"
#include "storage/objstore/testing/s3rver_process.h"
#include "tests/operator/e2e_fixture.h"
#include "tests/operator/log_readers.h"

namespace dljob::testing {
namespace {

using kube::resources::kDLJobs;

size_t Count(const std::string& text, const std::string& line) {
  size_t n = 0;
  for (size_t at = text.find(line + "\n"); at != std::string::npos;
       at = text.find(line + "\n", at + 1)) {
    if (at == 0 || text[at - 1] == '\n') ++n;
  }
  return n;
}

class OperatorLogsTest : public OperatorE2eTest {
 protected:
  // The case, with the archive flags `archive`.
  void SurvivesReplicasAndRestarts(const std::vector<std::string>& archive) {
    Result<std::string> reader = cluster_->ServiceAccountToken("reader");
    ASSERT_TRUE(reader.ok()) << reader.status().message();
    ASSERT_TRUE(GrantPodLogs(api(), Ns(), "reader").ok());
    std::vector<std::string> args = {"--leader-elect=true", "--lease-duration=4",
                                     "--renew-deadline=3", "--retry-period=1"};
    args.insert(args.end(), archive.begin(), archive.end());
    std::vector<int> ports;
    for (int i = 0; i < 2; ++i) {
      OperatorProcess& op = StartOperator(args);
      ports.push_back(op.MetricsPort());
      ASSERT_GT(ports.back(), 0) << op.Log();
    }
    ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("kept", 2, 1)).ok());
    ASSERT_TRUE(WaitForPhase(api(), "kept", "Running", kWait)) << Describe(api(), "kept");
    for (int i = 1; i <= 3; ++i) {
      ASSERT_TRUE(cluster_->Say("kept", 0, "line " + std::to_string(i)).ok());
    }
    // Both replicas serve what the leader archived: the standby reads the archive too.
    std::string first;
    for (int port : ports) {
      http::testing::ClientResponse logs;
      ASSERT_TRUE(WaitFor(
          [&] {
            logs = FetchLogs(port, Ns(), "kept", *reader);
            return logs.status == 200 && Count(logs.body, "[rank 0] line 3") == 1;
          },
          kWait))
          << port << ": " << logs.status << " " << logs.body;
      if (first.empty()) first = logs.body;
      EXPECT_EQ(logs.body, first);  // the same archive, whichever replica answers
    }

    // Every operator gone at once; the job runs on.
    for (auto& op : operators_) {
      op->Kill();
      op->Wait(kWait);
    }
    OperatorProcess& fresh = StartOperator(args);
    const int port = fresh.MetricsPort();
    ASSERT_GT(port, 0) << fresh.Log();
    http::testing::ClientResponse at_once = FetchLogs(port, Ns(), "kept", *reader);
    EXPECT_EQ(at_once.status, 200) << at_once.body;
    EXPECT_EQ(Count(at_once.body, "[rank 0] line 3"), 1u) << at_once.body;
    ASSERT_TRUE(cluster_->Say("kept", 0, "line 4").ok());
    ASSERT_TRUE(cluster_->EndTraining("kept", 0).ok());
    ASSERT_TRUE(WaitForPhase(api(), "kept", "Succeeded", kWait)) << Describe(api(), "kept");
    http::testing::ClientResponse logs;
    ASSERT_TRUE(WaitFor(
        [&] {
          logs = FetchLogs(port, Ns(), "kept", *reader);
          return logs.status == 200 && Count(logs.body, "[rank 0] line 4") == 1;
        },
        kWait))
        << logs.status << " " << logs.body;
    size_t last = 0;
    for (int i = 1; i <= 4; ++i) {
      const std::string line = "[rank 0] line " + std::to_string(i);
      EXPECT_EQ(Count(logs.body, line), 1u) << line << " in\n" << logs.body;
      size_t at = logs.body.find(line);
      EXPECT_GT(at, last) << logs.body;
      last = at;
    }
    EXPECT_EQ(Count(logs.body, "[mpirun] dljob: following launcher pod kept-launcher"), 1u)
        << logs.body;
    EXPECT_EQ(FetchLogs(port, Ns(), "kept", "").status, 401);
  }
};

TEST_F(OperatorLogsTest, ADirectoryArchiveIsReadFromASecondReplicaAndAfterARestart) {
  StartCluster({.nodes = 1, .kubelet_delay_ms = 0});
  SurvivesReplicasAndRestarts({});  // the operators' shared directory (StartOperatorAt)
}

TEST_F(OperatorLogsTest, ABucketArchiveIsReadFromASecondReplicaAndAfterARestart) {
  storage::testing::S3rverProcess s3("job-logs");
  Status started = s3.Start();
  ASSERT_TRUE(started.ok()) << started.message();
  StartCluster({.nodes = 1, .kubelet_delay_ms = 0});
  // The keys as oss:// data volumes keep them (akId, akSecret, endpoint), in the lease's namespace.
  Json secret = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"metadata", {{"name", "log-bucket"}}},
                 {"data",
                  {{"akId", Base64Encode("S3RVER")},
                   {"akSecret", Base64Encode("S3RVER")},
                   {"endpoint", Base64Encode(s3.endpoint())},
                   {"region", Base64Encode("us-east-1")}}}};
  ASSERT_TRUE(api().Create(kube::resources::kSecrets, Ns(), secret).ok());
  SurvivesReplicasAndRestarts(
      {"--log-archive=s3://job-logs/dljob", "--log-archive-secret=log-bucket"});
  // The log really is in the bucket, not in a directory.
  EXPECT_FALSE(std::filesystem::exists(cluster_->log_archive_dir() + "/" + Ns()));
}

}  // namespace
}  // namespace dljob::testing
