// PhasesOf / Summarize (phase_breakdown.h): every instant of a job's window in one phase, by the
// order the header gives, so the phases add up to submit→Running.
#include "bench/phase_breakdown.h"

#include <gtest/gtest.h>

namespace dljob::bench {
namespace {

using kube::Span;
using std::chrono::milliseconds;

const WallTime kT0 = WallTime(std::chrono::seconds(1'790'000'000));

WallTime At(int ms) { return kT0 + milliseconds(ms); }

Span S(const std::string& name, int from, int to, const std::string& detail = "") {
  return {"ns/a", name, detail, At(from), At(to)};
}

double Ms(const JobPhases& p, Phase phase) { return p.seconds[static_cast<int>(phase)] * 1e3; }

// Submitted at 0, observed at 10, queued 10-15, a pass 15-40 with a call 20-30, waiting for the
// cluster 40-100 (a pod event at 90 enqueues it), queued 90-95, a pass 95-110 with a call
// 100-105 (the Running status), the client sees Running at 130.
std::vector<Span> OneJob() {
  return {S("observe", 10, 10, "dljob added"),
          S("queue", 10, 15, "normal"),
          S("reconcile", 15, 40, "ok"),
          S("api", 20, 30, "create pods"),
          S("child", 90, 90, "pod a-worker-0 updated Running ready"),
          S("queue", 90, 95, "follow-up"),
          S("reconcile", 95, 110, "ok"),
          S("api", 100, 105, "update dljobs/status")};
}

TEST(PhasesOf, PutsEveryInstantInOnePhaseSoTheyAddUpToTheWindow) {
  JobPhases p = PhasesOf({"ns/a", At(0), At(130)}, OneJob());
  EXPECT_DOUBLE_EQ(Ms(p, Phase::kToOperator), 10);
  EXPECT_DOUBLE_EQ(Ms(p, Phase::kQueue), 10);
  EXPECT_DOUBLE_EQ(Ms(p, Phase::kApi), 15);
  EXPECT_DOUBLE_EQ(Ms(p, Phase::kReconcile), 25);
  EXPECT_DOUBLE_EQ(Ms(p, Phase::kCluster), 50);
  EXPECT_DOUBLE_EQ(Ms(p, Phase::kToClient), 20);
  EXPECT_NEAR(p.total() * 1e3, 130, 1e-6);
  EXPECT_EQ(p.passes, 2);
  EXPECT_EQ(p.api_calls, 2);
}

TEST(PhasesOf, AKeyAddedWhileItsPassRunsCountsAsThePassNotTwice) {
  std::vector<Span> spans = {S("observe", 0, 0), S("queue", 0, 5), S("reconcile", 5, 30),
                             S("queue", 20, 40),  // added during the pass, handed out at 40
                             S("reconcile", 40, 50)};
  JobPhases p = PhasesOf({"ns/a", At(0), At(60)}, spans);
  EXPECT_DOUBLE_EQ(Ms(p, Phase::kQueue), 5 + 10);
  EXPECT_DOUBLE_EQ(Ms(p, Phase::kReconcile), 25 + 10);
  EXPECT_DOUBLE_EQ(Ms(p, Phase::kToClient), 10);
  EXPECT_NEAR(p.total() * 1e3, 60, 1e-6);
}

TEST(PhasesOf, SpansOutsideTheWindowAndAnEmptyWindowCountNothing) {
  std::vector<Span> spans = OneJob();
  spans.push_back(S("reconcile", 200, 250, "ok"));  // after Running: a later pass
  JobPhases p = PhasesOf({"ns/a", At(0), At(130)}, spans);
  EXPECT_EQ(p.passes, 2);
  EXPECT_DOUBLE_EQ(Ms(p, Phase::kToClient), 20);
  EXPECT_DOUBLE_EQ(PhasesOf({"ns/a", At(5), At(5)}, spans).total(), 0);
  // Never observed: the whole window is the way to the operator.
  EXPECT_DOUBLE_EQ(Ms(PhasesOf({"ns/a", At(0), At(30)}, {}), Phase::kToOperator), 30);
}

TEST(Summarize, AveragesJobsAndTimesEveryApiCallByKind) {
  std::vector<Span> spans = OneJob();
  for (Span s : OneJob()) {
    s.key = "ns/b";
    s.start += milliseconds(1000);
    s.end += milliseconds(1000);
    spans.push_back(s);
  }
  spans.push_back({"", "api", "list pods", At(0), At(40)});  // an informer's: no job
  Breakdown b = Summarize(spans, {{"ns/a", At(0), At(130)},
                                  {"ns/b", At(1000), At(1130)},
                                  {"ns/c", At(0), At(1)}});  // no spans: left out
  EXPECT_EQ(b.jobs, 2);
  EXPECT_NEAR(b.mean_total, 0.130, 1e-9);
  EXPECT_NEAR(b.mean[static_cast<int>(Phase::kCluster)], 0.050, 1e-9);
  EXPECT_DOUBLE_EQ(b.mean_passes, 2);
  ASSERT_EQ(b.api.count("create pods"), 1u);
  EXPECT_EQ(b.api.at("create pods").count, 2);
  EXPECT_NEAR(b.api.at("create pods").p50_ms, 10, 1e-6);
  EXPECT_EQ(b.api.at("list pods").count, 1);
  const std::string text = FormatBreakdown(b);
  EXPECT_NE(text.find("waiting for the cluster"), std::string::npos) << text;
  EXPECT_NE(text.find("list pods"), std::string::npos) << text;
}

TEST(FormatTimeline, ListsOneJobsSpansInOrderFromTheOrigin) {
  std::vector<Span> spans = OneJob();
  spans.push_back({"ns/other", "queue", "normal", At(0), At(1)});
  const std::string text = FormatTimeline(spans, "ns/a", At(0));
  EXPECT_EQ(text.find("ns/other"), std::string::npos);
  EXPECT_LT(text.find("dljob added"), text.find("create pods"));
  EXPECT_NE(text.find("+20.0 ms  api          10.00 ms  create pods"), std::string::npos) << text;
}

}  // namespace
}  // namespace dljob::bench
