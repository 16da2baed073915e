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

TEST(JobPodView, KeepsMetadataStatusAndWhatSchedulingReadsNotWhatThePodRuns) {
  // What the view keeps; the pod is that and what the pod runs.
  const Json kept = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "j-launcher"},
        {"labels", {{"dljob.io/job-name", "j"}}},
        {"annotations", {{"dljob.io/spec-revision", "abc"}}},
        {"deletionTimestamp", "2026-11-28T00:00:00Z"}}},
      {"spec",
       {{"nodeName", "n1"},
        {"hostAliases", Json::array({{{"ip", "10.0.0.6"}, {"hostnames", {"w0"}}}})},
        {"nodeSelector", {{"kubernetes.io/hostname", "n1"}}},
        {"terminationGracePeriodSeconds", 60},
        {"containers", Json::array({{{"name", "c"},
                                     {"image", "dljob/trainer:cpu"},
                                     {"resources", {{"limits", {{"nvidia.com/gpu", 2}}}}}}})},
        {"initContainers", Json::array({{{"name", "i"}}})}}},
      {"status",
       {{"phase", "Running"},
        {"podIP", "10.0.0.5"},
        {"conditions", Json::array({{{"type", "Ready"},
                                     {"status", "True"},
                                     {"lastProbeTime", nullptr},
                                     {"lastTransitionTime", "2026-11-28T00:00:00Z"}}})},
        {"containerStatuses",
         Json::array({{{"name", "c"},
                       {"state", {{"terminated", {{"exitCode", 0}, {"reason", "Completed"}}}}}}})},
        {"initContainerStatuses",
         Json::array({{{"name", "i"}, {"state", {{"running", Json::object()}}}}})}}}};
  Json pod = kept;
  pod["metadata"]["managedFields"] = Json::array({{{"manager", "dljob-operator"}}});
  Json& c = pod["spec"]["containers"][0];
  c["command"] = {"mpirun", "-np", "4"};
  c["env"] = Json::array({{{"name", "A"}, {"value", "1"}}});
  c["volumeMounts"] = Json::array({{{"name", "v"}}});
  pod["spec"]["initContainers"][0]["args"] = {"warm"};
  pod["spec"]["volumes"] = Json::array({{{"name", "v"}, {"emptyDir", Json::object()}}});
  pod["spec"]["securityContext"] = {{"runAsUser", 0}};
  Json& st = pod["status"];
  st["hostIP"] = "192.168.0.2";
  st["podIPs"] = Json::array({{{"ip", "10.0.0.5"}}});
  st["qosClass"] = "BestEffort";
  st["startTime"] = "2026-11-28T00:00:00Z";
  Json& cs = st["containerStatuses"][0];
  cs["image"] = "dljob/trainer:cpu";
  cs["imageID"] = "docker.io/dljob/trainer@sha256:0123";
  cs["containerID"] = "containerd://4567";
  cs["lastState"] = Json::object();
  cs["ready"] = false;
  cs["restartCount"] = 0;
  cs["started"] = false;
  Json view = JobPodView(pod);
  EXPECT_EQ(view, kept);
  EXPECT_EQ(PodRequests(view), PodRequests(pod));
  EXPECT_EQ(JobPodView(view), view);  // a view of a view changes nothing
}

TEST(NodeView, KeepsTheNodeButItsImagesAndManagedFields) {
  Json node = {
      {"metadata",
       {{"name", "n1"},
        {"labels", {{"kubernetes.io/hostname", "n1"}}},
        {"annotations", {{"dljob.io/cached-datasets", "oss://b/d"}}},
        {"managedFields", Json::array({{{"manager", "kubelet"}}})}}},
      {"spec", {{"unschedulable", true}}},
      {"status",
       {{"allocatable", {{"nvidia.com/gpu", "8"}}},
        {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})},
        {"images",
         Json::array({{{"names", Json::array({"dljob/train:dev"})}, {"sizeBytes", 123456789}}})}}}};
  Json view = NodeView(node);
  Json expected = node;
  expected["metadata"].erase("managedFields");
  expected["status"].erase("images");
  EXPECT_EQ(view, expected);
  EXPECT_EQ(SchedulerNodeOf(view), SchedulerNodeOf(node));  // what the ledger reads, unchanged
  EXPECT_EQ(NodeView(Json::object()), Json::object());
}

TEST(SecretMetadataView, KeepsWhoOwnsItNotTheKeys) {
  Json kept = Json::parse(R"({"apiVersion": "v1", "kind": "Secret",
      "metadata": {"name": "j-ssh", "namespace": "a", "uid": "u1", "resourceVersion": "7",
                   "labels": {"dljob.io/job-name": "j"},
                   "ownerReferences": [{"kind": "DLJob", "name": "j", "uid": "u0",
                                        "controller": true}]}})");
  Json secret = kept;
  secret["metadata"]["managedFields"] = Json::array({{{"manager", "dljob-operator"}}});
  secret["type"] = "Opaque";
  secret["data"] = {{"id_rsa", "LS0tLS1CRUdJTi..."}, {"authorized_keys", "c3NoLXJzYSBB..."}};
  EXPECT_EQ(SecretMetadataView(secret), kept);
  EXPECT_EQ(SecretMetadataView(kept), kept);
}

}  // namespace
}  // namespace dljob::controller
