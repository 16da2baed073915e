#include "operator/app/options.h"

#include <gtest/gtest.h>

namespace dljob::op {
namespace {

ParsedArgs Parse(std::vector<std::string> args, std::string pod = "") {
  return ParseOperatorArgs(args, pod, "node-7", 42);
}

TEST(OperatorOptionsTest, ParsesTheChartsFlags) {
  ParsedArgs p = Parse({"--namespace=",
                        "--cluster-domain=corp.local",
                        "--workers=8",
                        "--qps=20",
                        "--burst=40",
                        "--leader-elect=true",
                        "--lease-name=dljob-operator",
                        "--lease-namespace=dljob-system",
                        "--lease-duration=15",
                        "--renew-deadline=10",
                        "--retry-period=2s",
                        "--metrics-port=8080",
                        "--log-archive-dir=/var/log/dljob",
                        "--oss-csi-driver=ossplugin.csi.alibabacloud.com",
                        "--oss-endpoint=",
                        "--oss-secret=team-oss",
                        "--placement-policy=dljob",
                        "--rack-label=dljob.io/rack",
                        "--operator-namespace=ml-system",
                        "--operator-deployment=dljob-operator",
                        "--operator-min-available=50%"},
                       "dljob-operator-5d9c-abcde");
  ASSERT_TRUE(std::holds_alternative<OperatorOptions>(p.result));
  const OperatorOptions& o = std::get<OperatorOptions>(p.result);
  EXPECT_EQ(o.watch_namespace, "");
  EXPECT_EQ(o.cluster_domain, "corp.local");
  EXPECT_EQ(o.workers, 8);
  EXPECT_EQ(o.qps, 20);
  EXPECT_EQ(o.burst, 40);
  EXPECT_TRUE(o.leader_elect);
  EXPECT_EQ(o.lease_duration, std::chrono::seconds(15));
  EXPECT_EQ(o.renew_deadline, std::chrono::seconds(10));
  EXPECT_EQ(o.retry_period, std::chrono::seconds(2));
  EXPECT_EQ(o.metrics_port, 8080);
  EXPECT_EQ(o.log_archive, "/var/log/dljob");
  EXPECT_EQ(o.identity, "dljob-operator-5d9c-abcde");  // the pod's name
  EXPECT_EQ(o.oss_endpoint, "");
  EXPECT_EQ(o.oss_secret, "team-oss");
  EXPECT_EQ(o.operator_namespace, "ml-system");
  EXPECT_EQ(o.operator_deployment, "dljob-operator");
  EXPECT_EQ(o.operator_min_available, "50%");
  EXPECT_EQ(
      std::get<OperatorOptions>(Parse({"--operator-min-available="}).result).operator_min_available,
      "");
}

TEST(OperatorOptionsTest, IdentityFallsBackToHostAndPid) {
  ParsedArgs p = Parse({"--leader-elect=false"});
  const OperatorOptions& o = std::get<OperatorOptions>(p.result);
  EXPECT_FALSE(o.leader_elect);
  EXPECT_EQ(o.identity, "node-7_42");
  EXPECT_EQ(std::get<OperatorOptions>(Parse({"--identity=me"}).result).identity, "me");
}

TEST(OperatorOptionsTest, BadValuesNameTheFlag) {
  for (const auto& [args, needle] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--workers=0"}, "--workers"},
           {{"--lease-duration=soon"}, "--lease-duration"},
           {{"--metrics-port=70000"}, "--metrics-port"},
           {{"--no-such-flag"}, "no-such-flag"},
           {{"--lease-duration=10", "--renew-deadline=10"},
            "--renew-deadline (10s) must be shorter"},
           {{"--placement-policy=random"}, "--placement-policy"},
           {{"--placement-policy=random"}, "known: first-fit, spread, best-fit, dljob"},
           {{"--operator-min-available=0"}, "--operator-min-available"},
           {{"--operator-min-available=half"}, "nor a percentage"},
       }) {
    ParsedArgs p = Parse(args);
    ASSERT_TRUE((std::holds_alternative<std::pair<int, std::string>>(p.result))) << args[0];
    const auto& [code, text] = std::get<std::pair<int, std::string>>(p.result);
    EXPECT_EQ(code, 2) << args[0];
    EXPECT_NE(text.find(needle), std::string::npos) << text;
  }
}

TEST(OperatorOptionsTest, HelpListsTheFlagsAndExitsZero) {
  ParsedArgs p = Parse({"--help"});
  const auto& [code, text] = std::get<std::pair<int, std::string>>(p.result);
  EXPECT_EQ(code, 0);
  for (const char* flag : {"--kubeconfig", "--leader-elect", "--log-archive-dir", "--workers",
                           "--placement-policy", "--rack-label"}) {
    EXPECT_NE(text.find(flag), std::string::npos) << flag;
  }
  EXPECT_NE(text.find("first-fit, spread, best-fit, dljob"), std::string::npos) << text;
}

TEST(OperatorOptionsTest, PlacementPolicyDefaultsToDljob) {
  const OperatorOptions o =
      std::get<OperatorOptions>(Parse({}).result);  // a copy: Parse returns a temporary
  EXPECT_EQ(o.placement_policy, "dljob");
  EXPECT_EQ(o.rack_label, "dljob.io/rack");
  ParsedArgs p = Parse({"--placement-policy=first-fit", "--rack-label=example.com/rack"});
  ASSERT_TRUE(std::holds_alternative<OperatorOptions>(p.result));
  EXPECT_EQ(std::get<OperatorOptions>(p.result).placement_policy, "first-fit");
  EXPECT_EQ(std::get<OperatorOptions>(p.result).rack_label, "example.com/rack");
}

}  // namespace
}  // namespace dljob::op
