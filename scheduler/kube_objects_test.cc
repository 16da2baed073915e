#include "scheduler/kube_objects.h"

#include <gtest/gtest.h>

namespace dljob::scheduler {
namespace {

using Json = nlohmann::json;

TEST(SchedulerNodeOf, ReadsAllocatableLabelsTaintsAndReadiness) {
  Json node = {
      {"metadata", {{"name", "gpu-1"}, {"labels", {{"nvidia.com/gpu.clique", "c1"}}}}},
      {"spec",
       {{"taints", Json::array({{{"key", "k"}, {"value", "v"}, {"effect", "NoSchedule"}}})}}},
      {"status",
       {{"allocatable",
         {{"nvidia.com/gpu", "8"}, {"cpu", "95500m"}, {"memory", "1056742Mi"}, {"pods", "110"}}},
        {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
  Node n = SchedulerNodeOf(node);
  EXPECT_EQ(n.name, "gpu-1");
  EXPECT_EQ(n.allocatable, (Resources{8, 95500, 1056742, 110}));
  EXPECT_EQ(n.used, Resources{});
  EXPECT_EQ(n.labels, (std::map<std::string, std::string>{{"nvidia.com/gpu.clique", "c1"}}));
  EXPECT_EQ(n.taints, (std::vector<Taint>{{"k", "v", "NoSchedule"}}));
  EXPECT_TRUE(n.schedulable);

  node["status"]["allocatable"]["memory"] = "1000Ki";  // under a MiB: rounded down
  EXPECT_EQ(SchedulerNodeOf(node).allocatable.memory_mib, 0);
  node["spec"]["unschedulable"] = true;
  EXPECT_FALSE(SchedulerNodeOf(node).schedulable);
  node["spec"].erase("unschedulable");
  node["status"]["conditions"][0]["status"] = "False";
  EXPECT_FALSE(SchedulerNodeOf(node).schedulable);
}

Json Container(Json requests, Json limits = nullptr) {
  Json resources = Json::object();
  if (!requests.is_null()) resources["requests"] = requests;
  if (!limits.is_null()) resources["limits"] = limits;
  return {{"name", "c"}, {"resources", resources}};
}

TEST(PodRequests, CountsAsKubeSchedulerDoes) {
  const struct {
    const char* name;
    Json spec;
    Resources want;
  } cases[] = {
      {"nothing requested", {{"containers", Json::array({Container(nullptr)})}}, {0, 0, 0, 1}},
      {"containers add up",
       {{"containers", Json::array({Container({{"cpu", "500m"}, {"memory", "1Gi"}}),
                                    Container({{"cpu", "2"}, {"memory", "512Mi"}})})}},
       {0, 2500, 1536, 1}},
      {"a request left out is the limit",
       {{"containers",
         Json::array({Container({{"cpu", "1"}},
                                {{"cpu", "4"}, {"memory", "2Gi"}, {"nvidia.com/gpu", 8}})})}},
       {8, 1000, 2048, 1}},
      {"GPUs as a string or a number",
       {{"containers", Json::array({Container(nullptr, {{"nvidia.com/gpu", "2"}}),
                                    Container({{"nvidia.com/gpu", 1}}, {{"nvidia.com/gpu", 1}})})}},
       {3, 0, 0, 1}},
      {"memory rounded up to a MiB",
       {{"containers", Json::array({Container({{"memory", "100M"}})})}},
       {0, 0, 96, 1}},
      {"the largest init container when it is more",
       {{"containers", Json::array({Container({{"cpu", "1"}, {"memory", "1Gi"}})})},
        {"initContainers",
         Json::array({Container({{"cpu", "3"}}), Container({{"memory", "512Mi"}})})}},
       {0, 3000, 1024, 1}},
      {"overhead on top",
       {{"containers", Json::array({Container({{"cpu", "1"}})})},
        {"overhead", {{"cpu", "250m"}, {"memory", "120Mi"}}}},
       {0, 1250, 120, 1}},
      {"what does not parse counts nothing",
       {{"containers", Json::array({Container({{"cpu", "lots"}, {"memory", true}})})}},
       {0, 0, 0, 1}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(PodRequests({{"spec", c.spec}}), c.want) << c.name;
  }
}

TEST(NodeCordonedAndReady, ReadSpecUnschedulableAndTheReadyCondition) {
  const struct {
    const char* name;
    Json node;
    bool cordoned, ready;
  } cases[] = {
      {"bare node", Json::object(), false, true},
      {"cordoned", {{"spec", {{"unschedulable", true}}}}, true, true},
      {"uncordoned", {{"spec", {{"unschedulable", false}}}}, false, true},
      {"not a bool", {{"spec", {{"unschedulable", "yes"}}}}, false, true},
      {"no conditions yet", {{"status", {{"conditions", Json::array()}}}}, false, true},
      {"Ready True",
       {{"status", {{"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}},
       false,
       true},
      {"Ready Unknown",
       {{"status", {{"conditions", Json::array({{{"type", "Ready"}, {"status", "Unknown"}}})}}}},
       false,
       false},
      {"other conditions only",
       {{"status",
         {{"conditions", Json::array({{{"type", "MemoryPressure"}, {"status", "False"}}})}}}},
       false,
       false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(NodeCordoned(c.node), c.cordoned) << c.name;
    EXPECT_EQ(NodeReady(c.node), c.ready) << c.name;
    EXPECT_EQ(SchedulerNodeOf(c.node).schedulable, !c.cordoned && c.ready) << c.name;
  }
}

}  // namespace
}  // namespace dljob::scheduler
