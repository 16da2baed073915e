// KubeBackend over the in-memory FakeApi: the API calls each command makes, and what a user sees
// when the cluster answers with an error.
#include "cli/kube/kube_backend.h"

#include <set>

#include <gtest/gtest.h>

#include "base/testing/fake_clock.h"
#include "jobs/codec.h"
#include "jobs/defaults.h"
#include "jobs/dlqueue_codec.h"
#include "kube/testing/fake_api.h"

namespace dljob {
namespace {

using kube::Json;
using kube::testing::FakeApi;

class NullObserver : public JobObserver {
 public:
  void OnOutput(int, bool, std::string_view) override {}
  void OnUpdate(const DLJob&) override {}
  void OnNotice(std::string_view) override {}
};

DLJob NewJob(const std::string& name, const std::string& ns) {
  DLJob job;
  job.metadata.name = name;
  job.metadata.namespace_ = ns;
  job.spec.image = "registry.example.com/trainer:cuda";
  job.spec.command = {"dljob-train", "--model=resnet50"};
  job.spec.gpus = 16;
  job.spec.data.push_back({});
  job.spec.data[0].name = "imagenet";
  job.spec.data[0].source = "oss://bucket/imagenet";
  job.spec.data[0].mount_path = "/data";
  ApplyDefaults(job);
  return job;
}

// A stored DLJob as the operator would have left it.
Json StoredJob(const std::string& name, const std::string& ns, const std::string& created,
               JobPhase phase) {
  DLJob job = NewJob(name, ns);
  job.metadata.creation_timestamp = created;
  job.status.phase = phase;
  return EncodeTree(job);
}

class KubeBackendTest : public ::testing::Test {
 protected:
  KubeBackend Backend(const std::string& ns = "team-a", bool all = false) {
    KubeBackendOptions options;
    options.namespace_ = ns;
    options.all_namespaces = all;
    options.cluster = "http://127.0.0.1:1 from kubeconfig /k";
    options.clock = &clock_;
    return KubeBackend(api_, options);
  }
  void TearDown() override { EXPECT_TRUE(clock_.sleeps().empty()) << "nothing here waits"; }

  dljob::testing::FakeClock clock_;
  FakeApi api_;
  NullObserver observer_;
};

TEST_F(KubeBackendTest, SubmitCreatesTheDLJobAndReturnsAtOnce) {
  KubeBackend backend = Backend();
  DLJob job = NewJob("resnet", "team-b");
  job.status.phase = JobPhase::kSucceeded;  // never sent: the operator owns status
  Result<DLJob> created = backend.Submit(job, observer_);
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_EQ(api_.CallStrings(), std::vector<std::string>{"create dljobs team-b/resnet"});
  Json sent = api_.Calls()[0].body;
  EXPECT_FALSE(sent.contains("status")) << sent.dump();
  DLJob expected = NewJob("resnet", "team-b");
  Json want = EncodeTree(expected);
  want.erase("status");
  EXPECT_EQ(sent, want);
  EXPECT_EQ(created->metadata.uid, "uid-1");
  EXPECT_EQ(created->spec, expected.spec);
  EXPECT_EQ(created->status.phase, JobPhase::kUnset);
}

TEST_F(KubeBackendTest, SubmitOfAJobWithoutNamespaceUsesTheBackendsNamespace) {
  KubeBackend backend = Backend("team-a");
  DLJob job = NewJob("resnet", "");
  job.metadata.namespace_ = "";
  ASSERT_TRUE(backend.Submit(job, observer_).ok());
  EXPECT_EQ(api_.CallStrings(), std::vector<std::string>{"create dljobs team-a/resnet"});
}

TEST_F(KubeBackendTest, SubmitOfAnExistingNameIsAlreadyExists) {
  api_.Put(kube::resources::kDLJobs,
           StoredJob("resnet", "team-a", "2026-01-01T00:00:00Z", JobPhase::kRunning));
  Result<DLJob> again = Backend().Submit(NewJob("resnet", "team-a"), observer_);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(again.status().message(),
            "a DLJob named \"resnet\" already exists in namespace \"team-a\"");
}

TEST_F(KubeBackendTest, AJobWithoutANameIsSentWithItsGenerateNameAndNamedByTheServer) {
  DLJob job = NewJob("", "team-a");
  job.metadata.generate_name = "resnet50-";
  Result<DLJob> created = Backend().Submit(job, observer_);
  ASSERT_TRUE(created.ok()) << created.status().message();
  ASSERT_EQ(api_.Calls().size(), 1u) << "one create: naming is the server's, retries too";
  const Json sent = api_.Calls()[0].body;  // Calls() is a copy
  EXPECT_EQ(sent["metadata"]["generateName"], "resnet50-");
  EXPECT_FALSE(sent["metadata"].contains("name")) << sent.dump();
  EXPECT_EQ(created->metadata.name, "resnet50-00001") << "the name the server chose comes back";
  EXPECT_EQ(created->metadata.generate_name, "resnet50-");
}

TEST_F(KubeBackendTest, AGenerateNameTheServerFoundNoNameForIsSaidSo) {
  api_.FailNext("create", "dljobs",
                {409, "AlreadyExists",
                 "dljobs.dljob.io \"resnet50-b2c4d\" already exists, the server was not able to "
                 "generate a unique name for the object"});
  DLJob job = NewJob("", "team-a");
  job.metadata.generate_name = "resnet50-";
  Result<DLJob> created = Backend().Submit(job, observer_);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(created.status().message(),
            "the API server found no free name starting \"resnet50-\" in namespace \"team-a\": "
            "dljobs.dljob.io \"resnet50-b2c4d\" already exists, the server was not able to "
            "generate a unique name for the object");
  EXPECT_EQ(api_.Calls().size(), 1u) << "not retried: the server drew 8 names already";
}

TEST_F(KubeBackendTest, SubmitWithoutTheCrdSaysToInstallDljob) {
  api_.FailNext("create", "dljobs", {404, "NotFound", "the server could not find the resource"});
  Result<DLJob> created = Backend().Submit(NewJob("resnet", "team-a"), observer_);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(created.status().message().find("helm install dljob charts/dljob"), std::string::npos)
      << created.status().message();
}

TEST_F(KubeBackendTest, AFailedCredentialPluginIsOneLineWithItsOwnWords) {
  api_.FailNext("list", "dljobs",
                {0, kube::kReasonNoCredentials,
                 "/k: users[eks].user.exec: the credential plugin \"aws eks get-token\" exited "
                 "with status 255: An error occurred (ExpiredToken)"});
  Result<std::vector<DLJob>> jobs = Backend().List();
  ASSERT_FALSE(jobs.ok());
  EXPECT_EQ(jobs.status().code(), StatusCode::kFailedPrecondition);
  const std::string m = jobs.status().message();
  EXPECT_NE(m.find(": no credentials for the Kubernetes API server (cluster http://127.0.0.1:1 "
                   "from kubeconfig /k): /k: users[eks].user.exec: the credential plugin \"aws "
                   "eks get-token\" exited with status 255: An error occurred (ExpiredToken)"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("cannot reach"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
}

TEST_F(KubeBackendTest, AnUnreachableClusterIsNamedWithWhatToDo) {
  api_.FailNext("list", "dljobs", {0, "", "connection refused"});
  Result<std::vector<DLJob>> jobs = Backend().List();
  ASSERT_FALSE(jobs.ok());
  EXPECT_EQ(jobs.status().code(), StatusCode::kUnavailable);
  const std::string m = jobs.status().message();  // status() is a copy: keep the text, not a ref
  EXPECT_NE(m.find("cannot reach the Kubernetes API server (cluster http://127.0.0.1:1 from "
                   "kubeconfig /k): connection refused"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("--local"), std::string::npos) << m;
}

TEST_F(KubeBackendTest, ListIsNewestFirstInTheNamespace) {
  api_.Put(kube::resources::kDLJobs,
           StoredJob("old", "team-a", "2026-01-01T00:00:00Z", JobPhase::kSucceeded));
  api_.Put(kube::resources::kDLJobs,
           StoredJob("new", "team-a", "2026-01-03T00:00:00Z", JobPhase::kRunning));
  api_.Put(kube::resources::kDLJobs,
           StoredJob("mid", "team-a", "2026-01-02T00:00:00Z", JobPhase::kQueued));
  api_.Put(kube::resources::kDLJobs,
           StoredJob("other", "team-b", "2026-01-04T00:00:00Z", JobPhase::kRunning));
  Result<std::vector<DLJob>> jobs = Backend().List();
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  std::vector<std::string> names;
  for (const DLJob& j : *jobs) names.push_back(j.metadata.name);
  EXPECT_EQ(names, (std::vector<std::string>{"new", "mid", "old"}));
  EXPECT_EQ((*jobs)[0].status.phase, JobPhase::kRunning);
  EXPECT_EQ(api_.CallStrings(), std::vector<std::string>{"list dljobs team-a/"});

  Result<std::vector<DLJob>> all = Backend("team-a", true).List();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 4u);
  EXPECT_EQ((*all)[0].metadata.name, "other");
  EXPECT_EQ((*all)[0].metadata.namespace_, "team-b");
}

TEST_F(KubeBackendTest, GetReadsOneJobOrSaysWhereItLooked) {
  api_.Put(kube::resources::kDLJobs,
           StoredJob("resnet", "team-a", "2026-01-01T00:00:00Z", JobPhase::kRunning));
  Result<DLJob> job = Backend().Get("resnet");
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->spec.gpus, 16);
  EXPECT_EQ(job->status.phase, JobPhase::kRunning);

  Result<DLJob> elsewhere = Backend("team-b").Get("resnet");
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_EQ(elsewhere.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(elsewhere.status().message(), "no DLJob \"resnet\" in namespace \"team-b\"");
}

TEST_F(KubeBackendTest, DeleteRemovesTheDLJobInBackground) {
  api_.Put(kube::resources::kDLJobs,
           StoredJob("resnet", "team-a", "2026-01-01T00:00:00Z", JobPhase::kRunning));
  KubeBackend backend = Backend();
  ASSERT_TRUE(backend.Delete("resnet").ok());
  EXPECT_EQ(api_.CallStrings(), std::vector<std::string>{"delete dljobs team-a/resnet"});
  EXPECT_FALSE(api_.Object(kube::resources::kDLJobs, "team-a", "resnet").has_value());
  Status again = backend.Delete("resnet");
  EXPECT_EQ(again.code(), StatusCode::kNotFound);
  EXPECT_EQ(again.message(), "no DLJob \"resnet\" in namespace \"team-a\"");
}

TEST_F(KubeBackendTest, ForbiddenSaysToCheckPermissions) {
  api_.FailNext("delete", "dljobs", {403, "Forbidden", "dljobs.dljob.io \"x\" is forbidden"});
  Status s = Backend().Delete("x");
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("may manage dljobs.dljob.io"), std::string::npos) << s.message();
}

Json PodOn(const std::string& ns, const std::string& name, const std::string& node,
           const std::string& phase) {
  Json pod = {{"metadata", {{"name", name}, {"namespace", ns}}},
              {"spec", {{"containers", Json::array()}}},
              {"status", {{"phase", phase}}}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

Json Queue(const std::string& name, int64_t nominal) {
  DLQueue q;
  q.metadata.name = name;
  q.spec.quotas = {{"", nominal, std::nullopt}};
  return EncodeQueueTree(q);
}

TEST_F(KubeBackendTest, IsItsOwnClusterReader) {
  KubeBackend backend = Backend();
  EXPECT_EQ(backend.Cluster(), static_cast<ClusterReader*>(&backend));
}

TEST_F(KubeBackendTest, BoundPodsAreTheUnfinishedPodsOnNodesInEveryNamespace) {
  api_.Put(kube::resources::kPods, PodOn("a", "running", "n1", "Running"));
  api_.Put(kube::resources::kPods, PodOn("b", "pending-bound", "n2", "Pending"));
  api_.Put(kube::resources::kPods, PodOn("b", "pending-unbound", "", "Pending"));
  api_.Put(kube::resources::kPods, PodOn("a", "succeeded", "n1", "Succeeded"));
  api_.Put(kube::resources::kPods, PodOn("a", "failed", "n1", "Failed"));
  Result<std::vector<Json>> pods = Backend().BoundPods();
  ASSERT_TRUE(pods.ok()) << pods.status().message();
  std::set<std::string> names;
  for (const Json& p : *pods) names.insert(p["metadata"]["name"].get<std::string>());
  EXPECT_EQ(names, (std::set<std::string>{"running", "pending-bound"}));
  EXPECT_EQ(api_.CallStrings(), std::vector<std::string>{"list pods"});
}

TEST_F(KubeBackendTest, QueuesByNameAndOneQueueOrNotFound) {
  api_.Put(kube::resources::kDLQueues, Queue("team-b", 8));
  api_.Put(kube::resources::kDLQueues, Queue("default", 16));
  Result<std::vector<DLQueue>> queues = Backend().Queues();
  ASSERT_TRUE(queues.ok()) << queues.status().message();
  ASSERT_EQ(queues->size(), 2u);
  EXPECT_EQ((*queues)[0].metadata.name, "default");
  EXPECT_EQ((*queues)[1].spec.quotas[0].nominal, 8);

  Result<DLQueue> one = Backend().Queue("team-b");
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ(one->spec.quotas[0].nominal, 8);
  Result<DLQueue> none = Backend().Queue("team-z");
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(none.status().message(), "no DLQueue \"team-z\"");
}

TEST_F(KubeBackendTest, QueuesWithoutTheCrdSayToInstallDljob) {
  api_.FailNext("list", "dlqueues", {404, "NotFound", "the server could not find the resource"});
  Result<std::vector<DLQueue>> queues = Backend().Queues();
  ASSERT_FALSE(queues.ok());
  EXPECT_EQ(queues.status().code(), StatusCode::kFailedPrecondition);
  const std::string m = queues.status().message();
  EXPECT_NE(m.find("listing DLQueues: the cluster does not know DLQueues"), std::string::npos) << m;
  EXPECT_NE(m.find("helm install dljob charts/dljob"), std::string::npos) << m;
}

TEST_F(KubeBackendTest, ForbiddenNodesSayWhichPermissionIsMissing) {
  api_.FailNext("list", "nodes", {403, "Forbidden", "nodes is forbidden"});
  Result<std::vector<Json>> nodes = Backend().Nodes();
  ASSERT_FALSE(nodes.ok());
  EXPECT_EQ(nodes.status().code(), StatusCode::kFailedPrecondition);
  const std::string m = nodes.status().message();
  EXPECT_NE(m.find("listing nodes: 403 Forbidden"), std::string::npos) << m;
  EXPECT_NE(m.find("may list nodes"), std::string::npos) << m;
}

TEST_F(KubeBackendTest, JobsInAllNamespacesWhateverTheBackendsNamespace) {
  api_.Put(kube::resources::kDLJobs,
           StoredJob("a", "team-a", "2026-01-01T00:00:00Z", JobPhase::kRunning));
  api_.Put(kube::resources::kDLJobs,
           StoredJob("b", "team-b", "2026-01-02T00:00:00Z", JobPhase::kQueued));
  Result<std::vector<DLJob>> jobs = Backend("team-a", false).JobsInAllNamespaces();
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].metadata.name, "b");
}

}  // namespace
}  // namespace dljob
