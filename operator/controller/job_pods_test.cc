#include "operator/controller/job_pods.h"

#include <functional>
#include <vector>

#include <gtest/gtest.h>

#include "operator/controller/builders.h"
#include "operator/controller/children.h"

namespace dljob::controller {
namespace {

using Json = nlohmann::json;

Json Pod(const std::string& name, const std::string& job, const std::string& role = "worker") {
  Json pod = {{"metadata", {{"name", name}, {"namespace", "ns"}}}};
  if (!job.empty()) pod["metadata"]["labels"][kJobNameLabel] = job;
  if (!role.empty()) pod["metadata"]["labels"][kRoleLabel] = role;
  return pod;
}

std::vector<std::string> Keys(const PodBriefs& briefs) {
  std::vector<std::string> out;
  for (const PodBriefPtr& b : briefs) out.push_back(b->key);
  return out;
}

TEST(JobPods, BriefOfReadsWhatPassesOverEveryPodRead) {
  Json pod = Pod("j-worker-1", "j");
  pod["metadata"]["annotations"][kIncarnationAnnotation] = "3";
  pod["metadata"]["deletionTimestamp"] = "2026-11-28T10:00:00Z";
  pod["spec"]["nodeName"] = "n1";
  pod["status"]["phase"] = "Running";
  PodBrief b = BriefOf(pod);
  EXPECT_EQ(b, (PodBrief{.key = "ns/j-worker-1",
                         .job_key = "ns/j",
                         .node = "n1",
                         .phase = "Running",
                         .incarnation = 3,
                         .worker = true,
                         .deleting = true}));
  EXPECT_FALSE(b.Live());  // being deleted

  PodBrief launcher = BriefOf(Pod("j-launcher", "j", "launcher"));
  EXPECT_FALSE(launcher.worker);
  EXPECT_TRUE(launcher.node.empty());
  EXPECT_EQ(launcher.incarnation, 0);
  EXPECT_TRUE(launcher.Live());  // no phase yet
  for (const char* phase : {"Succeeded", "Failed"}) {
    Json done = Pod("j-worker-0", "j");
    done["status"]["phase"] = phase;
    EXPECT_FALSE(BriefOf(done).Live()) << phase;
  }
}

TEST(JobPods, APodStartingToRunIsCountedAsBeforeAndOneGoingAwayIsNot) {
  PodBrief pending = BriefOf(Pod("j-worker-0", "j"));
  pending.node = "n1";
  pending.phase = "Pending";
  PodBrief running = pending;
  running.phase = "Running";
  EXPECT_FALSE(QueueCountsDifferently(pending, running));
  EXPECT_FALSE(QueueCountsDifferently(running, running));

  // Each of these is counted differently: no longer live (its GPUs are free), going, elsewhere,
  // of another run, role or job.
  const std::vector<std::function<void(PodBrief&)>> changes = {
      [](PodBrief& b) { b.phase = "Succeeded"; }, [](PodBrief& b) { b.deleting = true; },
      [](PodBrief& b) { b.node = "n2"; },         [](PodBrief& b) { b.incarnation = 1; },
      [](PodBrief& b) { b.worker = false; },      [](PodBrief& b) { b.job_key = "ns/other"; }};
  for (size_t i = 0; i < changes.size(); ++i) {
    PodBrief changed = running;
    changes[i](changed);
    EXPECT_TRUE(QueueCountsDifferently(running, changed)) << "change " << i;
  }
}

TEST(JobPods, KeepsEachJobsPodsAndFollowsTheirChanges) {
  JobPods pods;
  pods.Upsert(Pod("j-worker-1", "j"));
  pods.Upsert(Pod("j-worker-0", "j"));
  pods.Upsert(Pod("k-worker-0", "k"));
  pods.Upsert(Pod("stray", ""));  // no job label: not kept
  EXPECT_EQ(pods.Size(), 3u);
  EXPECT_EQ(Keys(pods.OfJob("ns/j")), (std::vector<std::string>{"ns/j-worker-0", "ns/j-worker-1"}));
  EXPECT_TRUE(pods.OfJob("ns/none").empty());

  Json bound = Pod("j-worker-0", "j");
  bound["spec"]["nodeName"] = "n1";
  pods.Upsert(bound);
  EXPECT_EQ(pods.OfJob("ns/j")[0]->node, "n1");
  EXPECT_EQ(pods.JobsOn("n1"), std::set<std::string>{"ns/j"});
  EXPECT_TRUE(pods.JobsOn("n2").empty());

  // A pod relabelled to another job moves; one that loses its label goes.
  pods.Upsert(Pod("j-worker-1", "k"));
  EXPECT_EQ(Keys(pods.OfJob("ns/k")), (std::vector<std::string>{"ns/j-worker-1", "ns/k-worker-0"}));
  pods.Upsert(Pod("k-worker-0", ""));
  EXPECT_EQ(Keys(pods.OfJob("ns/k")), std::vector<std::string>{"ns/j-worker-1"});

  pods.Remove("ns/j-worker-0");
  pods.Remove("ns/j-worker-1");
  pods.Remove("ns/never-there");
  EXPECT_TRUE(pods.OfJob("ns/j").empty());
  EXPECT_TRUE(pods.OfJob("ns/k").empty());
  EXPECT_TRUE(pods.JobsOn("n1").empty());
  EXPECT_EQ(pods.Size(), 0u);
}

}  // namespace
}  // namespace dljob::controller
