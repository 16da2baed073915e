#include "operator/app/endpoints.h"

#include <gtest/gtest.h>

namespace dljob::op {
namespace {

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

TEST(EndpointsTest, ServesArchivedLogsOnlyToWhomTheAuthorizerAllows) {
  std::vector<std::string> asked;  // "token ns" per authorization, "read ns/job" per read
  LogsEndpoint logs;
  logs.authorize = [&](const std::string& token, const std::string& ns) {
    asked.push_back(token + " " + ns);
    if (token.empty()) return AccessDecision{401, "Unauthorized", ""};
    if (token != "alice") return AccessDecision{403, "Forbidden: User \"bob\" cannot get", "bob"};
    return AccessDecision{200, "", "alice"};
  };
  logs.read = [&](const std::string& ns, const std::string& job) -> Result<std::string> {
    asked.push_back("read " + ns + "/" + job);
    if (job == "resnet") return std::string("[rank 0] hello\n");
    if (job == "broken") return Status::Unavailable("s3://b/logs: connection refused");
    return Status::NotFound("none");
  };
  auto none = [] { return OperatorState{}; };
  EXPECT_EQ(ServeEndpoint("GET", "/logs/a/resnet", none, logs, "").status, 401);
  EndpointAnswer refused = ServeEndpoint("GET", "/logs/a/resnet", none, logs, "bob");
  EXPECT_EQ(refused.status, 403);
  EXPECT_NE(refused.body.find("User \"bob\""), std::string::npos);
  EndpointAnswer a = ServeEndpoint("GET", "/logs/a/resnet", none, logs, "alice");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "[rank 0] hello\n");
  EXPECT_EQ(asked, (std::vector<std::string>{" a", "bob a", "alice a", "read a/resnet"}));
  // Whether a job exists is told only to whom may read it.
  EXPECT_EQ(ServeEndpoint("GET", "/logs/a/other", none, logs, "bob").status, 403);
  EXPECT_EQ(ServeEndpoint("GET", "/logs/a/other", none, logs, "alice").status, 404);
  EXPECT_EQ(ServeEndpoint("GET", "/logs/a/broken", none, logs, "alice").status, 503);
  asked.clear();
  for (const char* bad : {"/logs/../etc", "/logs/a/..", "/logs/a/b/c", "/logs/A/b"}) {
    EXPECT_EQ(ServeEndpoint("GET", bad, none, logs, "alice").status, 404) << bad;
  }
  EXPECT_TRUE(asked.empty());
  // The operator's other endpoints stay open.
  EXPECT_EQ(ServeEndpoint("GET", "/metrics", none, logs, "").status, 200);
  EXPECT_EQ(ServeEndpoint("GET", "/healthz", none, logs, "").status, 200);
}

// A standby without the log asks the leader (LogsEndpoint::leader) after its own check.
TEST(EndpointsTest, ALogThisReplicaLacksIsAskedOfTheLeader) {
  std::vector<std::string> asked;
  LogsEndpoint logs;
  logs.authorize = [](const std::string& token, const std::string&) {
    return token == "alice" ? AccessDecision{200, "", "alice"} : AccessDecision{401, "no", ""};
  };
  logs.read = [](const std::string&, const std::string& job) -> Result<std::string> {
    if (job == "here") return std::string("[rank 0] local\n");
    return Status::NotFound("none");
  };
  Status leader_says = Status::Ok();
  logs.leader = [&](const std::string& path, const std::string& token) -> Result<EndpointAnswer> {
    asked.push_back(path + " " + token);
    if (!leader_says.ok()) return leader_says;
    return EndpointAnswer{200, "text/plain; charset=utf-8", "[rank 0] from the leader\n"};
  };
  auto none = [] { return OperatorState{}; };
  EXPECT_EQ(ServeEndpoint("GET", "/logs/a/here", none, logs, "alice").body, "[rank 0] local\n");
  EXPECT_EQ(ServeEndpoint("GET", "/logs/a/gone", none, logs, "").status, 401);
  EXPECT_TRUE(asked.empty()) << "checked here first, and a local log is served here";
  EXPECT_EQ(ServeEndpoint("GET", "/logs/a/gone", none, logs, "alice").body,
            "[rank 0] from the leader\n");
  EXPECT_EQ(asked, std::vector<std::string>{"/logs/a/gone alice"});
  leader_says = Status::NotFound("this replica holds the Lease");
  EXPECT_EQ(ServeEndpoint("GET", "/logs/a/gone", none, logs, "alice").status, 404);
  leader_says = Status::Unavailable("connection refused");
  EndpointAnswer down = ServeEndpoint("GET", "/logs/a/gone", none, logs, "alice");
  EXPECT_EQ(down.status, 503);
  EXPECT_NE(down.body.find("the leader could not be asked: connection refused"), std::string::npos)
      << down.body;
}

TEST(EndpointsTest, UnknownPathsAndMethods) {
  auto none = [] { return OperatorState{}; };
  EXPECT_EQ(ServeEndpoint("GET", "/", none).status, 404);
  EXPECT_EQ(ServeEndpoint("POST", "/metrics", none).status, 405);
  OperatorState no_archive;
  EndpointAnswer a = ServeEndpoint("GET", "/logs/a/b", [&] { return no_archive; });
  EXPECT_EQ(a.status, 404);
  EXPECT_NE(a.body.find("--log-archive"), std::string::npos);
}

}  // namespace
}  // namespace dljob::op
