#include "tests/apiserver/rest_handler.h"

#include <thread>
#include <tuple>

#include <gtest/gtest.h>

#include "tests/apiserver/fake_writer.h"

namespace dljob::apiserver {
namespace {

class RestHandlerTest : public ::testing::Test {
 protected:
  RestHandlerTest() {
    RestOptions options;
    options.bookmark_interval = std::chrono::milliseconds(1);
    options.idle_check = std::chrono::milliseconds(5);
    auto created = RestHandler::Create(options);
    EXPECT_TRUE(created.ok()) << created.status().message();
    handler_ = std::move(created).value();
  }

  FakeWriter Call(const std::string& method, const std::string& target,
                  const std::string& body = "", HttpHeaders headers = {},
                  int max_writes = 1 << 30) {
    HttpRequest request = RequestFor(method, target, body, std::move(headers));
    FakeWriter out(max_writes);
    handler_->Serve(request, out);
    return out;
  }

  Json MustCall(const std::string& method, const std::string& target, const Json& body,
                int want = 0, HttpHeaders headers = {}) {
    FakeWriter out = Call(method, target, body.is_null() ? "" : body.dump(), std::move(headers));
    if (want) {
      EXPECT_EQ(out.status_, want) << method << " " << target << ": " << out.body_;
    }
    return out.body_.empty() ? Json() : out.json();
  }

  std::unique_ptr<RestHandler> handler_;
  std::atomic<bool> done_{false};
};

Json Pod(const std::string& name, Json labels = Json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"spec", {{"containers", {{{"name", "main"}, {"image", "busybox"}}}}}}};
}

const char kPods[] = "/api/v1/namespaces/default/pods";

TEST_F(RestHandlerTest, DiscoveryDocuments) {
  EXPECT_EQ(MustCall("GET", "/version", nullptr, 200)["major"], "1");
  EXPECT_EQ(MustCall("GET", "/api", nullptr, 200)["versions"], Json({"v1"}));
  Json core = MustCall("GET", "/api/v1", nullptr, 200);
  EXPECT_EQ(core["kind"], "APIResourceList");
  EXPECT_EQ(core["groupVersion"], "v1");
  std::map<std::string, Json> by_name;
  for (const Json& r : core["resources"]) by_name[r["name"]] = r;
  EXPECT_EQ(by_name["pods"]["shortNames"], Json({"po"}));
  EXPECT_EQ(by_name["pods"]["namespaced"], true);
  EXPECT_EQ(by_name["nodes"]["namespaced"], false);
  EXPECT_EQ(by_name["pods/binding"]["kind"], "Binding");
  EXPECT_EQ(by_name["pods/log"]["verbs"], Json({"get"}));
  EXPECT_TRUE(by_name.count("pods/status"));
  Json groups = MustCall("GET", "/apis", nullptr, 200);
  EXPECT_EQ(groups["kind"], "APIGroupList");
  bool has_dljob = false;
  for (const Json& g : groups["groups"]) has_dljob = has_dljob || g["name"] == "dljob.io";
  EXPECT_FALSE(has_dljob);  // no CRD registered yet
  EXPECT_EQ(Call("GET", "/apis/dljob.io/v1alpha1").status_, 404);
}

TEST_F(RestHandlerTest, CrdFromTheChartServesDLJobsWithPrinterColumns) {
  ASSERT_TRUE(handler_->LoadCrdFile("charts/dljob/crds/dljob.io_dljobs.yaml").ok());
  Json group = MustCall("GET", "/apis/dljob.io", nullptr, 200);
  EXPECT_EQ(group["preferredVersion"]["groupVersion"], "dljob.io/v1alpha1");
  Json resources = MustCall("GET", "/apis/dljob.io/v1alpha1", nullptr, 200);
  bool has_status = false;
  for (const Json& r : resources["resources"])
    has_status = has_status || r["name"] == "dljobs/status";
  EXPECT_TRUE(has_status);
  Json crd =
      MustCall("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/dljobs.dljob.io",
               nullptr, 200);
  EXPECT_EQ(crd["status"]["conditions"][1]["type"], "Established");

  const std::string jobs = "/apis/dljob.io/v1alpha1/namespaces/default/dljobs";
  Json job = {{"apiVersion", "dljob.io/v1alpha1"},
              {"kind", "DLJob"},
              {"metadata", {{"name", "j"}}},
              {"spec", {{"image", "i"}, {"command", {"c"}}, {"gpus", 8}}}};
  MustCall("POST", jobs, job, 201);
  MustCall("PATCH", jobs + "/j/status", {{"status", {{"phase", "Running"}}}}, 200,
           {{"Content-Type", "application/merge-patch+json"}});
  // kubectl apply sends strategic merge patches only for built-in types: 415 for a CRD.
  EXPECT_EQ(
      Call("PATCH", jobs + "/j", "{}", {{"Content-Type", "application/strategic-merge-patch+json"}})
          .status_,
      415);
  Json table =
      MustCall("GET", jobs, nullptr, 200,
               {{"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}});
  EXPECT_EQ(table["kind"], "Table");
  EXPECT_EQ(table["columnDefinitions"][0]["name"], "Name");
  EXPECT_EQ(table["columnDefinitions"][1]["name"], "Status");
  EXPECT_EQ(table["rows"][0]["cells"][0], "j");
  EXPECT_EQ(table["rows"][0]["cells"][1], "Running");
  EXPECT_EQ(table["rows"][0]["cells"][2], 8);
  EXPECT_EQ(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");

  MustCall("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/dljobs.dljob.io",
           nullptr, 200);
  EXPECT_EQ(Call("GET", jobs).status_, 404);
}

TEST_F(RestHandlerTest, CrudOverRestWithStatusBodies) {
  Json created = MustCall("POST", kPods, Pod("p"), 201);
  EXPECT_EQ(created["status"]["phase"], "Pending");
  Json again = MustCall("POST", kPods, Pod("p"), 409);
  EXPECT_EQ(again["kind"], "Status");
  EXPECT_EQ(again["reason"], "AlreadyExists");
  EXPECT_EQ(again["code"], 409);
  Json list = MustCall("GET", "/api/v1/pods", nullptr, 200);
  EXPECT_EQ(list["kind"], "PodList");
  EXPECT_EQ(list["items"].size(), 1u);
  EXPECT_FALSE(list["metadata"]["resourceVersion"].get<std::string>().empty());

  Json stale = created;
  stale["metadata"]["labels"] = {{"a", "b"}};
  Json updated = MustCall("PUT", std::string(kPods) + "/p", stale, 200);
  EXPECT_EQ(MustCall("PUT", std::string(kPods) + "/p", stale, 409)["reason"], "Conflict");
  Json patched = MustCall("PATCH", std::string(kPods) + "/p",
                          {{"metadata", {{"labels", {{"a", nullptr}, {"c", "d"}}}}}}, 200,
                          {{"Content-Type", "application/merge-patch+json"}});
  EXPECT_EQ(patched["metadata"]["labels"], Json({{"c", "d"}}));
  Json strategic = MustCall("PATCH", std::string(kPods) + "/p",
                            {{"spec",
                              {{"containers", {{{"name", "main"}, {"image", "alpine"}}}},
                               {"$setElementOrder/containers", {{{"name", "main"}}}}}}},
                            200, {{"Content-Type", "application/strategic-merge-patch+json"}});
  EXPECT_EQ(strategic["spec"]["containers"][0]["image"], "alpine");
  EXPECT_FALSE(strategic["spec"].contains("$setElementOrder/containers"));
  // Server-side apply needs a field manager (rest_apply_test.cc has the rest).
  EXPECT_EQ(Call("PATCH", std::string(kPods) + "/p", "{}",
                 {{"Content-Type", "application/apply-patch+yaml"}})
                .status_,
            422);
  EXPECT_EQ(
      Call("PATCH", std::string(kPods) + "/p", "{}", {{"Content-Type", "text/plain"}}).status_,
      415);
  Json by_label = MustCall("GET", std::string(kPods) + "?labelSelector=c%3Dd", nullptr, 200);
  EXPECT_EQ(by_label["items"].size(), 1u);
  EXPECT_EQ(
      MustCall("GET", std::string(kPods) + "?labelSelector=c%3Dx", nullptr, 200)["items"].size(),
      0u);
  EXPECT_EQ(MustCall("DELETE", std::string(kPods) + "/p", {{"propagationPolicy", "Background"}},
                     200)["metadata"]["name"],
            "p");
  EXPECT_EQ(MustCall("GET", std::string(kPods) + "/p", nullptr, 404)["message"],
            "pods \"p\" not found");
  EXPECT_EQ(Call("GET", "/api/v1/namespaces/default/widgets").status_, 404);
}

TEST_F(RestHandlerTest, BindingSetsNodeOnceAndPodTableShowsIt) {
  MustCall("POST", kPods, Pod("p"), 201);
  Json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", "p"}}},
                  {"target", {{"kind", "Node"}, {"name", "gpu-1"}}}};
  EXPECT_EQ(MustCall("POST", std::string(kPods) + "/p/binding", binding, 201)["status"], "Success");
  EXPECT_EQ(MustCall("GET", std::string(kPods) + "/p", nullptr, 200)["spec"]["nodeName"], "gpu-1");
  EXPECT_EQ(MustCall("POST", std::string(kPods) + "/p/binding", binding, 409)["reason"],
            "Conflict");

  MustCall("POST", "/_test/pods/default/p/status", {{"phase", "Running"}}, 200);
  Json table = MustCall("GET", kPods, nullptr, 200,
                        {{"Accept", "application/json;as=Table;g=meta.k8s.io;v=v1"}});
  Json cells = table["rows"][0]["cells"];
  EXPECT_EQ(cells[0], "p");
  EXPECT_EQ(cells[1], "1/1");
  EXPECT_EQ(cells[2], "Running");
  EXPECT_EQ(cells[3], "0");
  EXPECT_EQ(cells[6], "gpu-1");
}

TEST_F(RestHandlerTest, BindingReplacesAnUnschedulableConditionAndRefusesAPodBeingDeleted) {
  MustCall("POST", kPods, Pod("p"), 201);
  Json unschedulable = {{"type", "PodScheduled"},
                        {"status", "False"},
                        {"reason", "Unschedulable"},
                        {"message", "0/2 nodes are available"},
                        {"lastTransitionTime", "2026-01-02T03:04:05Z"}};
  MustCall("PATCH", std::string(kPods) + "/p/status",
           {{"status", {{"conditions", Json::array({unschedulable})}}}}, 200,
           {{"Content-Type", "application/merge-patch+json"}});
  Json binding = {{"target", {{"kind", "Node"}, {"name", "gpu-1"}}}};
  MustCall("POST", std::string(kPods) + "/p/binding", binding, 201);
  Json conditions =
      MustCall("GET", std::string(kPods) + "/p", nullptr, 200)["status"]["conditions"];
  ASSERT_EQ(conditions.size(), 1u) << conditions;
  EXPECT_EQ(conditions[0]["type"], "PodScheduled");
  EXPECT_EQ(conditions[0]["status"], "True");
  EXPECT_FALSE(conditions[0].contains("reason")) << conditions;
  EXPECT_FALSE(conditions[0].contains("message")) << conditions;

  // A finalizer keeps a deleted pod, marked with a deletionTimestamp, until it is removed.
  Json deleting = Pod("q");
  deleting["metadata"]["finalizers"] = {"example.com/hold"};
  MustCall("POST", kPods, deleting, 201);
  Json marked = MustCall("DELETE", std::string(kPods) + "/q", nullptr, 200);
  EXPECT_TRUE(marked["metadata"].contains("deletionTimestamp")) << marked;
  Json refused = MustCall("POST", std::string(kPods) + "/q/binding", binding, 409);
  EXPECT_EQ(refused["reason"], "Conflict");
  EXPECT_NE(refused["message"].get<std::string>().find("is being deleted"), std::string::npos)
      << refused;
}

TEST_F(RestHandlerTest, WatchFromVersionWithBookmarksAndTimeout) {
  Json first = MustCall("POST", kPods, Pod("a"), 201);
  MustCall("POST", kPods, Pod("b"), 201);
  std::string rv = first["metadata"]["resourceVersion"];
  FakeWriter out = Call("GET", std::string(kPods) + "?watch=1&resourceVersion=" + rv +
                                   "&allowWatchBookmarks=true&timeoutSeconds=0");
  EXPECT_TRUE(out.streamed_);
  EXPECT_EQ(out.status_, 200);
  std::vector<Json> events = out.Events();
  ASSERT_GE(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[0]["object"]["metadata"]["name"], "b");

  // A watch from "0" starts with the current objects; the client leaves after three events
  // (two ADDED and one BOOKMARK at least — bookmarks come every millisecond here).
  FakeWriter zero =
      Call("GET", std::string(kPods) + "?watch=true&resourceVersion=0&allowWatchBookmarks=true", "",
           {}, 3);
  std::vector<Json> z = zero.Events();
  ASSERT_EQ(z.size(), 3u);
  EXPECT_EQ(z[0]["type"], "ADDED");
  EXPECT_EQ(z[1]["type"], "ADDED");
  EXPECT_EQ(z[2]["type"], "BOOKMARK");
  EXPECT_EQ(z[2]["object"]["kind"], "Pod");
}

TEST_F(RestHandlerTest, WatchFromCompactedVersionIsAnErrorEvent) {
  Json first = MustCall("POST", kPods, Pod("a"), 201);
  MustCall("POST", kPods, Pod("b"), 201);
  MustCall("POST", "/_test/compact", nullptr, 200);  // b's change is no longer in the history
  FakeWriter out = Call("GET", std::string(kPods) + "?watch=1&resourceVersion=" +
                                   first["metadata"]["resourceVersion"].get<std::string>());
  std::vector<Json> events = out.Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "ERROR");
  EXPECT_EQ(events[0]["object"]["code"], 410);
}

TEST_F(RestHandlerTest, DroppedWatchEnds) {
  std::thread dropper([this] {
    // Keep dropping until the watch below is gone; the watch ends on the first drop it sees.
    for (int i = 0; i < 2000 && !done_; ++i) {
      handler_->DropWatches();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  FakeWriter out = Call("GET", std::string(kPods) + "?watch=1");
  done_ = true;
  dropper.join();
  EXPECT_TRUE(out.streamed_);
  EXPECT_TRUE(out.chunks_.empty());
}

TEST_F(RestHandlerTest, InjectedFaultsAnswerTheGivenCodeNTimes) {
  MustCall("POST", "/_test/faults",
           {{"method", "GET"},
            {"pathPrefix", "/api/v1/namespaces/default/pods"},
            {"code", 503},
            {"count", 2}},
           201);
  EXPECT_EQ(Call("POST", kPods, Pod("p").dump()).status_, 201);  // other methods pass
  FakeWriter first = Call("GET", kPods);
  EXPECT_EQ(first.status_, 503);
  EXPECT_EQ(first.json()["reason"], "ServiceUnavailable");
  EXPECT_EQ(Call("GET", std::string(kPods) + "/p").status_, 503);
  EXPECT_EQ(Call("GET", kPods).status_, 200);
  MustCall("POST", "/_test/faults", {{"code", 429}}, 201);
  FakeWriter limited = Call("GET", "/api/v1/nodes");
  EXPECT_EQ(limited.status_, 429);
  EXPECT_EQ(limited.headers_.size(), 2u);  // Content-Type and Retry-After
}

TEST_F(RestHandlerTest, NodesLogsAndFollow) {
  Json node = MustCall("POST", "/_test/nodes", {{"name", "gpu-1"}, {"gpus", 4}}, 201);
  EXPECT_EQ(node["status"]["allocatable"]["nvidia.com/gpu"], "4");
  EXPECT_EQ(node["status"]["conditions"][0]["type"], "Ready");
  MustCall("POST", kPods, Pod("p"), 201);
  EXPECT_EQ(Call("POST", "/_test/pods/default/p/log", "line 1\nline 2\n").status_, 200);
  FakeWriter log = Call("GET", std::string(kPods) + "/p/log");
  EXPECT_EQ(log.body_, "line 1\nline 2\n");
  EXPECT_EQ(Call("GET", std::string(kPods) + "/p/log?tailLines=1").body_, "line 2\n");

  std::thread finisher([this] {
    Call("POST", "/_test/pods/default/p/log", "line 3\n");
    Call("POST", "/_test/pods/default/p/status",
         Json({{"phase", "Failed"}, {"exitCode", 3}}).dump());
  });
  FakeWriter follow = Call("GET", std::string(kPods) + "/p/log?follow=true");
  finisher.join();
  std::string all;
  for (const std::string& c : follow.chunks_) all += c;
  EXPECT_EQ(all, "line 1\nline 2\nline 3\n");
  Json pod = MustCall("GET", std::string(kPods) + "/p", nullptr, 200);
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 3);
}

TEST_F(RestHandlerTest, KubeletStartsBoundPods) {
  MustCall("POST", "/_test/kubelet", {{"enabled", true}, {"delayMilliseconds", 0}}, 200);
  Json created = MustCall("POST", kPods, Pod("p"), 201);
  MustCall("POST", std::string(kPods) + "/p/binding",
           {{"target", {{"kind", "Node"}, {"name", "gpu-1"}}}}, 201);
  // Watch the pod until it is Running (no timing assumption: the watch waits for it).
  std::string target = std::string(kPods) +
                       "?watch=1&fieldSelector=status.phase%3DRunning&resourceVersion=" +
                       created["metadata"]["resourceVersion"].get<std::string>();
  FakeWriter running = Call("GET", target, "", {}, 1);
  ASSERT_EQ(running.Events().size(), 1u);
  EXPECT_EQ(running.Events()[0]["object"]["status"]["conditions"].size(), 4u);
}

// Told to finish (sim.dljob.io/exit-code, sim_objects.h): Succeeded with 0, Failed otherwise.
TEST_F(RestHandlerTest, KubeletFinishesARunningPodToldTo) {
  MustCall("POST", "/_test/kubelet", {{"enabled", true}, {"delayMilliseconds", 0}}, 200);
  for (const auto& [name, code, phase] :
       {std::tuple{"ok", "0", "Succeeded"}, std::tuple{"bad", "3", "Failed"}}) {
    Json created = MustCall("POST", kPods, Pod(name), 201);
    MustCall("POST", std::string(kPods) + "/" + name + "/binding",
             {{"target", {{"kind", "Node"}, {"name", "gpu-1"}}}}, 201);
    std::string version = created["metadata"]["resourceVersion"];
    FakeWriter running =
        Call("GET",
             std::string(kPods) +
                 "?watch=1&fieldSelector=status.phase%3DRunning&resourceVersion=" + version,
             "", {}, 1);
    ASSERT_EQ(running.Events().size(), 1u) << name;
    Json told = MustCall("PATCH", std::string(kPods) + "/" + name,
                         {{"metadata", {{"annotations", {{"sim.dljob.io/exit-code", code}}}}}}, 200,
                         {{"Content-Type", "application/merge-patch+json"}});
    FakeWriter ended =
        Call("GET",
             std::string(kPods) + "?watch=1&fieldSelector=status.phase%3D" + phase +
                 "&resourceVersion=" + told["metadata"]["resourceVersion"].get<std::string>(),
             "", {}, 1);
    ASSERT_EQ(ended.Events().size(), 1u) << name;
    const Json status = ended.Events()[0]["object"]["status"];  // Events() is a copy
    EXPECT_EQ(status["containerStatuses"][0]["state"]["terminated"]["exitCode"], std::stoi(code));
    EXPECT_EQ(status["podIP"], running.Events()[0]["object"]["status"]["podIP"]) << name;
  }
}

// Graceful deletion is the default (RestOptions::graceful_pod_deletion), as on a real cluster.
TEST_F(RestHandlerTest, KubeletRemovesAGracefullyDeletedPod) {
  MustCall("POST", "/_test/kubelet", {{"enabled", true}, {"delayMilliseconds", 0}}, 200);
  Json created = MustCall("POST", kPods, Pod("p"), 201);
  MustCall("POST", std::string(kPods) + "/p/binding",
           {{"target", {{"kind", "Node"}, {"name", "gpu-1"}}}}, 201);
  FakeWriter running =
      Call("GET",
           std::string(kPods) + "?watch=1&fieldSelector=status.phase%3DRunning&resourceVersion=" +
               created["metadata"]["resourceVersion"].get<std::string>(),
           "", {}, 1);
  ASSERT_EQ(running.Events().size(), 1u);
  // A running pod is only marked; the kubelet then deletes it (grace 0) and it is gone.
  Json marked = MustCall("DELETE", std::string(kPods) + "/p", {{"gracePeriodSeconds", 10}}, 200);
  EXPECT_EQ(marked["metadata"]["deletionGracePeriodSeconds"], 10) << marked;
  FakeWriter gone = Call("GET",
                         std::string(kPods) + "?watch=1&resourceVersion=" +
                             marked["metadata"]["resourceVersion"].get<std::string>(),
                         "", {}, 1);
  ASSERT_EQ(gone.Events().size(), 1u);
  EXPECT_EQ(gone.Events()[0]["type"], "DELETED");
  EXPECT_EQ(Call("GET", std::string(kPods) + "/p").status_, 404);
}

// With a log delay (RestOptions::log_delay), a pod that writes its last line and finishes at once
// still has that line in its followed log: the stream ends only after the line has arrived.
TEST(RestHandlerLogDelayTest, AFollowedLogEndsOnlyAfterAFinishedPodsLastLine) {
  RestOptions options;
  options.log_delay = std::chrono::milliseconds(100);
  options.idle_check = std::chrono::milliseconds(5);
  RestHandler handler(options);
  auto call = [&](const std::string& method, const std::string& target, const std::string& body) {
    FakeWriter out(1 << 30);
    handler.Serve(RequestFor(method, target, body, {}), out);
    return out;
  };
  ASSERT_EQ(call("POST", kPods, Pod("p").dump()).status_, 201);
  std::thread finisher([&] {
    call("POST", "/_test/pods/default/p/log", "last line\n");
    call("POST", "/_test/pods/default/p/status", Json({{"phase", "Succeeded"}}).dump());
  });
  FakeWriter follow = call("GET", std::string(kPods) + "/p/log?follow=true", "");
  finisher.join();
  std::string all;
  for (const std::string& c : follow.chunks_) all += c;
  EXPECT_EQ(all, "last line\n");
}

TEST(RestHandlerOptOutTest, WithoutGracefulDeletionARunningPodGoesAtOnce) {
  RestOptions options;
  options.graceful_pod_deletion = false;
  RestHandler handler(options);
  auto call = [&](const std::string& method, const std::string& target, const Json& body) {
    FakeWriter out(1);  // a watch ends after its first event
    handler.Serve(RequestFor(method, target, body.is_null() ? "" : body.dump(), {}), out);
    return out;
  };
  EXPECT_EQ(call("POST", "/_test/kubelet", {{"enabled", true}, {"delayMilliseconds", 0}}).status_,
            200);
  FakeWriter created = call("POST", kPods, Pod("p"));
  ASSERT_EQ(created.status_, 201) << created.body_;
  ASSERT_EQ(call("POST", std::string(kPods) + "/p/binding",
                 {{"target", {{"kind", "Node"}, {"name", "gpu-1"}}}})
                .status_,
            201);
  FakeWriter running =
      call("GET",
           std::string(kPods) + "?watch=1&fieldSelector=status.phase%3DRunning&resourceVersion=" +
               created.json()["metadata"]["resourceVersion"].get<std::string>(),
           nullptr);
  ASSERT_EQ(running.Events().size(), 1u);
  FakeWriter deleted = call("DELETE", std::string(kPods) + "/p", {{"gracePeriodSeconds", 10}});
  ASSERT_EQ(deleted.status_, 200) << deleted.body_;
  EXPECT_FALSE(deleted.json()["metadata"].contains("deletionTimestamp")) << deleted.body_;
  EXPECT_EQ(call("GET", std::string(kPods) + "/p", nullptr).status_, 404);
}

}  // namespace
}  // namespace dljob::apiserver
