#include "operator/app/endpoints.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "operator/metrics/log_collector.h"

namespace dljob::op {
namespace {

namespace fs = std::filesystem;

OperatorState Leading() {
  OperatorState s;
  s.leading = true;
  s.synced = true;
  s.queue_depth = 3;
  s.jobs = {nlohmann::json::parse(R"({"metadata":{"namespace":"a","name":"resnet"},
      "spec":{"gpus":16},"status":{"phase":"Running","throughput":{"imagesPerSec":2950.5}}})")};
  return s;
}

TEST(EndpointsTest, MetricsCarryOperatorAndJobFamilies) {
  EndpointAnswer a = ServeEndpoint("GET", "/metrics", Leading);
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.content_type, "text/plain; version=0.0.4; charset=utf-8");
  for (const char* line : {"dljob_operator_leader 1\n", "dljob_operator_workqueue_depth 3\n",
                           "dljob_job_images_per_second{namespace=\"a\",dljob=\"resnet\"} 2950.5\n",
                           "dljob_jobs{phase=\"Running\"} 1\n"}) {
    EXPECT_NE(a.body.find(line), std::string::npos) << line << a.body;
  }
}

TEST(EndpointsTest, ReadinessFollowsLeadershipAndSync) {
  EXPECT_EQ(ServeEndpoint("GET", "/healthz", [] { return OperatorState{}; }).status, 200);
  EXPECT_EQ(ServeEndpoint("GET", "/readyz", Leading).status, 200);
  OperatorState syncing = Leading();
  syncing.synced = false;
  EndpointAnswer a = ServeEndpoint("GET", "/readyz", [&] { return syncing; });
  EXPECT_EQ(a.status, 503);
  EXPECT_NE(a.body.find("syncing"), std::string::npos);
  EndpointAnswer standby = ServeEndpoint("GET", "/readyz", [] { return OperatorState{}; });
  EXPECT_EQ(standby.status, 200);
  EXPECT_NE(standby.body.find("standing by"), std::string::npos);
}

TEST(EndpointsTest, ServesArchivedLogsAndRefusesPathsOutsideTheArchive) {
  fs::path dir = fs::temp_directory_path() / ("dljob-endpoints-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string path = metrics::LogArchivePath(dir.string(), "a", "resnet");
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << "[rank 0] hello\n";
  OperatorState s;
  s.log_archive_dir = dir.string();
  auto state = [&] { return s; };
  EndpointAnswer a = ServeEndpoint("GET", "/logs/a/resnet", state);
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "[rank 0] hello\n");
  EXPECT_EQ(ServeEndpoint("GET", "/logs/a/other", state).status, 404);
  EXPECT_EQ(ServeEndpoint("GET", "/logs/../etc", state).status, 404);
  EXPECT_EQ(ServeEndpoint("GET", "/logs/a/..", state).status, 404);
  EXPECT_EQ(ServeEndpoint("GET", "/logs/a/b/c", state).status, 404);
  fs::remove_all(dir);
}

TEST(EndpointsTest, UnknownPathsAndMethods) {
  auto none = [] { return OperatorState{}; };
  EXPECT_EQ(ServeEndpoint("GET", "/", none).status, 404);
  EXPECT_EQ(ServeEndpoint("POST", "/metrics", none).status, 405);
  OperatorState no_archive;
  EndpointAnswer a = ServeEndpoint("GET", "/logs/a/b", [&] { return no_archive; });
  EXPECT_EQ(a.status, 404);
  EXPECT_NE(a.body.find("--log-archive-dir"), std::string::npos);
}

}  // namespace
}  // namespace dljob::op
