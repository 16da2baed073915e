#include "operator/controller/cluster_view.h"

#include <gtest/gtest.h>

namespace dljob::controller {
namespace {

using Json = nlohmann::json;
using scheduler::Resources;

TEST(LedgerPodView, KeepsWhatTheLedgerReads) {
  Json pod = {
      {"metadata",
       {{"name", "p"},
        {"namespace", "ns"},
        {"uid", "u"},
        {"resourceVersion", "7"},
        {"managedFields", Json::array({{{"manager", "kubectl"}}})},
        {"annotations", {{"kubectl.kubernetes.io/last-applied-configuration", "{...}"}}}}},
      {"spec",
       {{"nodeName", "n1"},
        {"containers", Json::array({{{"name", "c"},
                                     {"command", {"sleep", "1"}},
                                     {"resources", {{"limits", {{"nvidia.com/gpu", 2}}}}}}})},
        {"initContainers",
         Json::array({{{"name", "i"}, {"resources", {{"requests", {{"cpu", "3"}}}}}}})},
        {"overhead", {{"cpu", "100m"}}},
        {"volumes", Json::array()}}},
      {"status", {{"phase", "Running"}, {"conditions", Json::array({{{"type", "Ready"}}})}}}};
  Json view = LedgerPodView(pod);
  EXPECT_EQ(
      view,
      (Json{{"metadata",
             {{"name", "p"}, {"namespace", "ns"}, {"uid", "u"}, {"resourceVersion", "7"}}},
            {"spec",
             {{"nodeName", "n1"},
              {"containers", Json::array({{{"resources", {{"limits", {{"nvidia.com/gpu", 2}}}}}}})},
              {"initContainers", Json::array({{{"resources", {{"requests", {{"cpu", "3"}}}}}}})},
              {"overhead", {{"cpu", "100m"}}}}},
            {"status", {{"phase", "Running"}}}}));
  EXPECT_EQ(PodRequests(view), PodRequests(pod));
  EXPECT_EQ(PodRequests(view), (Resources{2, 3100, 0, 1}));
}

}  // namespace
}  // namespace dljob::controller
