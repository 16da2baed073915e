#include "cli/queue_report.h"

#include <gtest/gtest.h>

#include "base/time_format.h"
#include "jobs/codec.h"
#include "jobs/dlqueue_codec.h"

namespace dljob {
namespace {

auto Now() { return *ParseRfc3339("2026-11-22T06:00:00Z"); }

DLQueue TeamA() {
  DLQueue q;
  q.metadata.name = "team-a";
  q.metadata.creation_timestamp = "2026-11-20T06:00:00Z";
  q.spec.cohort = "ml";
  q.spec.quotas = {{"A100", 32, std::nullopt}, {"", 8, 4}};
  q.status.used = {{"A100", 40}, {"H100", 2}};
  q.status.borrowed = {{"A100", 8}};
  q.status.pending_jobs = 3;
  q.status.running_jobs = 5;
  return q;
}

DLQueue Fresh() {  // no status written yet
  DLQueue q;
  q.metadata.name = "default";
  q.metadata.creation_timestamp = "2026-11-22T05:00:00Z";
  q.spec.quotas = {{"", 16, 16}};
  return q;
}

DLJob Job(const std::string& ns, const std::string& name, JobPhase phase, int64_t gpus,
          std::optional<std::string> queue, std::optional<int64_t> priority,
          const std::string& created) {
  DLJob j;
  j.metadata.namespace_ = ns;
  j.metadata.name = name;
  j.metadata.creation_timestamp = created;
  j.spec.gpus = gpus;
  j.spec.scheduling.queue = queue;
  j.spec.scheduling.priority = priority;
  j.status.phase = phase;
  return j;
}

DLJob Waiting(const std::string& name, int64_t priority, const std::string& created,
              const std::string& why) {
  DLJob j = Job("ml", name, JobPhase::kQueued, 16, "team-a", priority, created);
  j.status.conditions.push_back({"Queued", "True", "QuotaExceeded", why, "2026-11-22T05:50:00Z"});
  j.spec.scheduling.node_selector["nvidia.com/gpu.product"] = "A100";
  return j;
}

TEST(FormatQueues, OneRowPerProductDashesWhereTheOperatorHasNotWritten) {
  EXPECT_EQ(
      FormatQueues({Fresh(), TeamA()}, OutputFormat::kTable, Now()),
      "NAME      GPU PRODUCT   NOMINAL   BORROWING LIMIT   USED   BORROWED   PENDING   RUNNING\n"
      "default   (any)         16        16                -      -          -         -\n"
      "team-a    A100          32        unlimited         40     8          3         5\n"
      "team-a    (any)         8         4                 0      0          3         5\n"
      "team-a    H100          -         -                 2      0          3         5\n");
  EXPECT_EQ(FormatQueues({Fresh(), TeamA()}, OutputFormat::kWide, Now()),
            "NAME      GPU PRODUCT   NOMINAL   BORROWING LIMIT   USED   BORROWED   PENDING   "
            "RUNNING   COHORT      AGE\n"
            "default   (any)         16        16                -      -          -         -    "
            "     (default)   1h\n"
            "team-a    A100          32        unlimited         40     8          3         5    "
            "     ml          2d\n"
            "team-a    (any)         8         4                 0      0          3         5    "
            "     ml          2d\n"
            "team-a    H100          -         -                 2      0          3         5    "
            "     ml          2d\n");
}

TEST(FormatQueues, AQueueWithoutQuotasStillHasARow) {
  DLQueue q;
  q.metadata.name = "empty";
  EXPECT_EQ(
      FormatQueues({q}, OutputFormat::kTable, Now()),
      "NAME    GPU PRODUCT   NOMINAL   BORROWING LIMIT   USED   BORROWED   PENDING   RUNNING\n"
      "empty   (any)         -         -                 -      -          -         -\n");
}

TEST(FormatQueues, JsonAndYamlAreADLQueueList) {
  for (OutputFormat f : {OutputFormat::kJson, OutputFormat::kYaml}) {
    std::string text = FormatQueues({Fresh(), TeamA()}, f, Now());
    nlohmann::json list =
        f == OutputFormat::kJson ? nlohmann::json::parse(text) : YamlToJson(text).value();
    EXPECT_EQ(list["apiVersion"], "dljob.io/v1alpha1");
    EXPECT_EQ(list["kind"], "DLQueueList");
    ASSERT_EQ(list["items"].size(), 2u);
    EXPECT_EQ(list["items"][1], EncodeQueueTree(TeamA()));
    QueueDecodeResult back = DecodeQueueTree(list["items"][1]);
    EXPECT_TRUE(back.ok());
    EXPECT_EQ(back.queue, TeamA());
  }
}

TEST(QueueOf, DefaultWhenUnsetOrEmpty) {
  const std::pair<std::optional<std::string>, const char*> cases[] = {
      {std::nullopt, "default"}, {"", "default"}, {"team-a", "team-a"}};
  for (const auto& [queue, want] : cases) {
    EXPECT_EQ(QueueOf(Job("ns", "j", JobPhase::kQueued, 1, queue, 0, "")), want);
  }
}

TEST(WaitingReason, TheQueuedConditionsMessageWhileItWaits) {
  DLJob j = Waiting("big", 0, "2026-11-22T05:00:00Z", "needs 16 GPUs (A100) in queue team-a");
  EXPECT_EQ(WaitingReason(j), "needs 16 GPUs (A100) in queue team-a");
  j.status.phase = JobPhase::kUnset;  // the operator wrote the condition first
  EXPECT_EQ(WaitingReason(j), "needs 16 GPUs (A100) in queue team-a");
  j.status.phase = JobPhase::kRunning;  // an old Queued condition says nothing now
  EXPECT_EQ(WaitingReason(j), "");
  DLJob none = Job("ns", "j", JobPhase::kQueued, 1, "q", 0, "");
  EXPECT_EQ(WaitingReason(none), "");
}

TEST(JobsOfQueue, AdmittedFirstThenByPriorityThenAge) {
  std::vector<DLJob> all = {
      Waiting("low-old", 0, "2026-11-22T05:00:00Z", "x"),
      Job("ml", "done", JobPhase::kSucceeded, 8, "team-a", 0, "2026-11-22T04:00:00Z"),
      Waiting("high-new", 10, "2026-11-22T05:30:00Z", "x"),
      Job("ml", "running-new", JobPhase::kRunning, 8, "team-a", 0, "2026-11-22T05:40:00Z"),
      Job("other", "elsewhere", JobPhase::kQueued, 8, "team-b", 100, "2026-11-22T03:00:00Z"),
      Waiting("low-new", 0, "2026-11-22T05:10:00Z", "x"),
      Job("ml", "running-old", JobPhase::kScheduled, 8, "team-a", 50, "2026-11-22T05:20:00Z"),
      Job("ml", "default-queue", JobPhase::kQueued, 8, std::nullopt, 0, "2026-11-22T05:00:00Z"),
  };
  auto names = [](const std::vector<DLJob>& jobs) {
    std::vector<std::string> out;
    for (const DLJob& j : jobs) out.push_back(j.metadata.name);
    return out;
  };
  EXPECT_EQ(
      names(JobsOfQueue(all, "team-a", false)),
      (std::vector<std::string>{"running-old", "running-new", "high-new", "low-old", "low-new"}));
  EXPECT_EQ(names(JobsOfQueue(all, "team-a", true)),
            (std::vector<std::string>{"done", "running-old", "running-new", "high-new", "low-old",
                                      "low-new"}));
  EXPECT_EQ(names(JobsOfQueue(all, "default", false)), (std::vector<std::string>{"default-queue"}));
  EXPECT_TRUE(JobsOfQueue(all, "nobody", true).empty());
}

TEST(FormatQueue, QuotaThenJobsWithWhyTheyWait) {
  std::vector<DLJob> jobs = {
      Job("ml", "small", JobPhase::kRunning, 8, "team-a", std::nullopt, "2026-11-22T05:00:00Z"),
      Waiting("big", 10, "2026-11-22T05:30:00Z",
              "needs 16 GPUs (A100) in queue team-a; quota 32, used 24; 12 free, largest node 8")};
  jobs[1].status.start_estimate = StartEstimateStatus{
      "2026-11-22T06:45:00Z", "Progress", "when small ends in about 45 min, from its steps and …"};
  EXPECT_EQ(
      FormatQueue(TeamA(), jobs, OutputFormat::kTable, Now()),
      "Name:      team-a\n"
      "Cohort:    ml\n"
      "Age:       2d\n"
      "Pending:   3\n"
      "Running:   5\n"
      "\n"
      "GPU PRODUCT   NOMINAL   BORROWING LIMIT   USED   BORROWED\n"
      "A100          32        unlimited         40     8\n"
      "(any)         8         4                 0      0\n"
      "H100          -         -                 2      0\n"
      "\n"
      "NAMESPACE   NAME    PHASE     GPUS   PRIORITY   ESTIMATED START   REASON\n"
      "ml          small   Running   8      0          -                 -\n"
      "ml          big     Queued    16     10         ~45m              needs 16 GPUs (A100) "
      "in queue team-a; quota 32, used 24; 12 free, largest node 8\n");
  std::string wide = FormatQueue(TeamA(), jobs, OutputFormat::kWide, Now());
  EXPECT_NE(wide.find("NAMESPACE   NAME    PHASE     GPUS   PRIORITY   GPU PRODUCT   WAITING   AGE"
                      "   ESTIMATED START   REASON\n"),
            std::string::npos)
      << wide;
  EXPECT_NE(wide.find("ml          big     Queued    16     10         A100          10m       30m"
                      "   ~45m              needs 16 GPUs"),
            std::string::npos)
      << wide;
  EXPECT_NE(wide.find("ml          small   Running   8      0          (any)         -         1h"),
            std::string::npos)
      << wide;
}

TEST(FormatQueue, NoJobsSaysSo) {
  EXPECT_EQ(FormatQueue(Fresh(), {}, OutputFormat::kTable, Now()),
            "Name:      default\n"
            "Cohort:    (default)\n"
            "Age:       1h\n"
            "Pending:   -\n"
            "Running:   -\n"
            "\n"
            "GPU PRODUCT   NOMINAL   BORROWING LIMIT   USED   BORROWED\n"
            "(any)         16        16                -      -\n"
            "\n"
            "No jobs in queue \"default\".\n");
}

TEST(FormatQueue, JsonAndYamlAreTheDLQueueAlone) {
  std::vector<DLJob> jobs = {Waiting("big", 0, "2026-11-22T05:30:00Z", "x")};
  EXPECT_EQ(nlohmann::json::parse(FormatQueue(TeamA(), jobs, OutputFormat::kJson, Now())),
            EncodeQueueTree(TeamA()));
  EXPECT_EQ(FormatQueue(TeamA(), jobs, OutputFormat::kYaml, Now()), EncodeQueueYaml(TeamA()));
}

}  // namespace
}  // namespace dljob
