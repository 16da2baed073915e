// The chart's RBAC against the calls a running operator makes. The operator (OperatorApp, leader
// election on) runs against the in-memory FakeApi, which records every call, through a job's whole
// life: a job that runs, has its launcher's log followed (its throughput patched into the status),
// succeeds and is deleted by its TTL; children whose first create meets an existing one; one
// with a cached dataset (its node is annotated); one too big to place (its workers' PodScheduled
// condition is patched); an elastic one that grows (its hostfile and disruption budget replaced); a
// DLQueue whose status is kept; a job in a namespace that may be outside
// the watched one; the admission webhook's start-up (its certificate Secret made, renewed, and
// its CA written into the webhook configuration); the operator's own disruption budget (made by
// the leader, then replaced and deleted as its Deployment changes); a read of /logs (the caller's
// token reviewed).
// The chart is rendered with watchNamespace unset and set, and for each:
//   - every call the operator made is allowed by the rendered Roles and ClusterRoles bound to its
//     ServiceAccount, verb by verb, in the call's namespace (or cluster-wide for a list or watch
//     across namespaces and for cluster-scoped kinds) — plus the right the server checks for a
//     child with blockOwnerDeletion (update dljobs/finalizers);
//   - every right granted was used by some call: nothing more than needed (a built-in ClusterRole
//     the chart binds, system:auth-delegator, is modelled from the bootstrap policy);
//   - watching team-a, nothing namespaced is granted outside it but listing pods (the GPU
//     ledger counts every namespace's), and the operator touched nothing in team-b.
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "jobs/codec.h"
#include "kube/testing/fake_api.h"
#include "operator/app/leader_logs.h"
#include "operator/app/log_access.h"
#include "operator/app/operator_app.h"
#include "operator/app/self_budget.h"
#include "operator/app/webhook_cert.h"
#include "testing/wait.h"
#include "tools/chart/chart_render.h"

namespace dljob {
namespace {

using Json = nlohmann::json;
using kube::testing::Call;
using kube::testing::FakeApi;
namespace res = kube::resources;

// What RBAC authorizes: a verb on group/resource[/subresource] in a namespace ("" = cluster-wide).
struct Request {
  std::string verb, group, resource, ns;
  auto operator<=>(const Request&) const = default;
  std::string ToString() const {
    return verb + " " + (group.empty() ? "" : group + "/") + resource + " in " +
           (ns.empty() ? "the cluster" : ns);
  }
};

// The reviews /logs asks the API server for (operator/app/log_access.h).
const kube::Resource kTokenReviews{"authentication.k8s.io", "v1", "tokenreviews", false,
                                   "TokenReview"};
const kube::Resource kSubjectAccessReviews{"authorization.k8s.io", "v1", "subjectaccessreviews",
                                           false, "SubjectAccessReview"};

const kube::Resource& ResourceOf(const std::string& plural) {
  static const kube::Resource* kAll[] = {&kTokenReviews,
                                         &kSubjectAccessReviews,
                                         &res::kPods,
                                         &res::kServices,
                                         &res::kConfigMaps,
                                         &res::kSecrets,
                                         &res::kEvents,
                                         &res::kNodes,
                                         &res::kLeases,
                                         &res::kDLJobs,
                                         &res::kDLQueues,
                                         &op::kValidatingWebhookConfigurations,
                                         &res::kPodDisruptionBudgets,
                                         &res::kDeployments};
  for (const kube::Resource* r : kAll) {
    if (r->plural == plural) return *r;
  }
  ADD_FAILURE() << "unknown resource " << plural;
  return res::kPods;
}

// The RBAC requests one recorded call needs.
std::vector<Request> RequestsOf(const Call& c) {
  const kube::Resource& r = ResourceOf(c.resource);
  const std::string ns = r.namespaced ? c.ns : "";
  auto one = [&](std::string verb, std::string resource) {
    return Request{std::move(verb), r.group, std::move(resource), ns};
  };
  std::vector<Request> out;
  if (c.verb == "update-status") {
    out.push_back(one("update", c.resource + "/status"));
  } else if (c.verb == "patch-status") {
    out.push_back(one("patch", c.resource + "/status"));
  } else if (c.verb == "bind") {
    out.push_back(one("create", "pods/binding"));
  } else if (c.verb == "logs") {
    out.push_back(one("get", "pods/log"));
  } else {
    out.push_back(one(c.verb, c.resource));
  }
  // OwnerReferencesPermissionEnforcement: setting blockOwnerDeletion on a child needs update
  // on the owner's finalizers.
  if (c.verb == "create" && c.body.is_object()) {
    for (const Json& ref :
         c.body.value("metadata", Json::object()).value("ownerReferences", Json::array())) {
      if (ref.value("blockOwnerDeletion", false) && ref.value("kind", "") == "DLJob") {
        out.push_back(Request{"update", "dljob.io", "dljobs/finalizers", ns});
      }
    }
  }
  return out;
}

std::vector<Json> Documents(const std::string& stream) {
  std::vector<Json> docs;
  std::string doc;
  std::istringstream in(stream + "\n---\n");
  for (std::string line; std::getline(in, line);) {
    if (line != "---") {
      doc += line + "\n";
      continue;
    }
    Result<Json> tree = YamlToJson(doc);
    EXPECT_TRUE(tree.ok()) << tree.status().message();
    if (tree.ok() && tree->is_object()) docs.push_back(*tree);
    doc.clear();
  }
  return docs;
}

// The ClusterRoles every cluster has (Kubernetes' bootstrap policy) that the chart binds.
const std::map<std::string, Json>& BuiltInClusterRoles() {
  static const std::map<std::string, Json> kRoles = {
      {"ClusterRole/system:auth-delegator",
       Json::parse(R"([{"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"],
                        "verbs": ["create"]},
                       {"apiGroups": ["authorization.k8s.io"],
                        "resources": ["subjectaccessreviews"], "verbs": ["create"]}])")}};
  return kRoles;
}

// Every (verb, group, resource, scope) the rendered chart grants ServiceAccount
// dljob-system/dljob-operator; scope "" is cluster-wide. `built_in`: those of them granted by a
// built-in ClusterRole the chart binds (the chart does not choose those rules).
std::set<Request> Grants(const std::vector<Json>& docs, std::set<Request>& built_in) {
  std::map<std::string, Json> roles =
      BuiltInClusterRoles();  // "ClusterRole/name" or "Role/ns/name"
  for (const Json& d : docs) {
    const std::string kind = d.value("kind", "");
    const Json& meta = d["metadata"];
    if (kind == "ClusterRole") roles["ClusterRole/" + meta["name"].get<std::string>()] = d["rules"];
    if (kind == "Role") {
      roles["Role/" + meta["namespace"].get<std::string>() + "/" +
            meta["name"].get<std::string>()] = d["rules"];
    }
  }
  std::set<Request> grants;
  for (const Json& d : docs) {
    const std::string kind = d.value("kind", "");
    if (kind != "ClusterRoleBinding" && kind != "RoleBinding") continue;
    bool ours = false;
    for (const Json& s : d["subjects"]) {
      ours = ours || (s["kind"] == "ServiceAccount" && s["name"] == "dljob-operator" &&
                      s["namespace"] == "dljob-system");
    }
    if (!ours) continue;
    const std::string scope = kind == "RoleBinding" ? d["metadata"]["namespace"] : "";
    const std::string ref = d["roleRef"]["kind"].get<std::string>() == "Role"
                                ? "Role/" + scope + "/" + d["roleRef"]["name"].get<std::string>()
                                : "ClusterRole/" + d["roleRef"]["name"].get<std::string>();
    EXPECT_TRUE(roles.count(ref)) << "a binding to a missing " << ref;
    const bool built = BuiltInClusterRoles().count(ref) > 0;
    for (const Json& rule : roles[ref]) {
      for (const Json& g : rule["apiGroups"]) {
        for (const Json& r : rule["resources"]) {
          for (const Json& v : rule["verbs"]) {
            grants.insert(Request{v, g, r, scope});
            if (built) built_in.insert(Request{v, g, r, scope});
          }
        }
      }
    }
  }
  return grants;
}

// The grant that allows `q`, if any: the narrowest, one in q's namespace, else a cluster-wide one.
std::optional<Request> Allowing(const std::set<Request>& grants, const Request& q) {
  if (!q.ns.empty() && grants.count(q)) return q;
  Request cluster{q.verb, q.group, q.resource, ""};
  if (grants.count(cluster)) return cluster;
  return std::nullopt;
}

Json Node(const std::string& name) {
  return {{"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
          {"status",
           {{"allocatable", {{"nvidia.com/gpu", "8"}, {"cpu", "64"}, {"memory", "512Gi"}}},
            {"capacity", {{"nvidia.com/gpu", "8"}, {"cpu", "64"}, {"memory", "512Gi"}}}}}};
}

Json Job(const std::string& ns, const std::string& name, int gpus, Json extra = Json::object()) {
  Json spec = {{"image", "img"}, {"command", {"train"}}, {"gpus", gpus}, {"gpusPerWorker", 4}};
  spec.update(extra);
  return {{"apiVersion", "dljob.io/v1alpha1"},
          {"kind", "DLJob"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", spec}};
}

bool Called(const FakeApi& api, const std::string& verb, const std::string& resource) {
  for (const Call& c : api.Calls()) {
    if (c.verb == verb && c.resource == resource) return true;
  }
  return false;
}

// Whether the elastic job has been resized once it ran (status.resizes).
bool Resized(FakeApi& api, const std::string& job) {
  std::optional<Json> j = api.Object(res::kDLJobs, "team-a", job);
  return j && j->value("/status/resizes"_json_pointer, 0) > 0;
}

// A kubelet stand-in: bound pods start Running and Ready with an address; a launcher exits 0
// once the operator has asked for its log (the elastic job's once it has grown).
void Kubelet(FakeApi& api) {
  std::set<std::string> logged;
  for (const Call& c : api.Calls()) {
    if (c.verb == "logs") logged.insert(c.ns + "/" + c.name);
  }
  for (Json pod : api.Objects(res::kPods)) {
    if (pod["spec"].value("nodeName", "").empty()) continue;
    const std::string name = pod["metadata"]["name"];
    const std::string key = pod["metadata"]["namespace"].get<std::string>() + "/" + name;
    const std::string phase = pod.value("status", Json::object()).value("phase", "");
    if (phase.empty()) {
      pod["status"] = {
          {"phase", "Running"},
          {"podIP", "10.0.0." + std::to_string(std::hash<std::string>{}(name) % 250 + 2)},
          {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}};
    } else if (phase == "Running" && name.ends_with("-launcher") && logged.count(key) &&
               (name != "zelastic-launcher" || Resized(api, "zelastic"))) {
      pod["status"]["phase"] = "Succeeded";
      pod["status"]["containerStatuses"] =
          Json::array({{{"name", "launcher"},
                        {"state", {{"terminated", {{"exitCode", 0}, {"reason", "Completed"}}}}}}});
    } else {
      continue;
    }
    api.Put(res::kPods, pod);
  }
}

// What every replica does at start-up for the admission webhook (operator/app/main.cc): its
// certificate made and kept in a Secret of the operator's namespace, then renewed because the one
// there no longer fits (replaced), and the CA written into the chart's webhook configuration.
void WebhookStartUps(FakeApi& api) {
  const op::WebhookCertOptions cert{"dljob-webhook-cert", "dljob-system", "dljob-webhook",
                                    "cluster.local"};
  api.Put(op::kValidatingWebhookConfigurations,
          {{"apiVersion", "admissionregistration.k8s.io/v1"},
           {"kind", "ValidatingWebhookConfiguration"},
           {"metadata", {{"name", "dljob-validating-webhook"}}},
           {"webhooks",
            Json::array({{{"name", "vdljob.dljob.io"}, {"clientConfig", Json::object()}}})}});
  Result<op::WebhookCertificate> made = op::EnsureWebhookCertificate(api, cert, RealClock().Now());
  ASSERT_TRUE(made.ok()) << made.status().message();
  Json secret = *api.Object(res::kSecrets, "dljob-system", "dljob-webhook-cert");
  secret["data"] = Json::object();  // unusable: the next replica replaces it
  api.Put(res::kSecrets, secret);
  made = op::EnsureWebhookCertificate(api, cert, RealClock().Now());
  ASSERT_TRUE(made.ok()) << made.status().message();
  Status injected = op::InjectCaBundle(api, "dljob-validating-webhook", made->ca_pem);
  ASSERT_TRUE(injected.ok()) << injected.message();
}

// The operator's Deployment, as the chart makes it: 2 replicas, so it gets a disruption budget.
Json OperatorDeployment(int replicas) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", "dljob-operator"}, {"namespace", "dljob-system"}}},
          {"spec",
           {{"replicas", replicas},
            {"selector", {{"matchLabels", {{"app.kubernetes.io/name", "dljob-operator"}}}}}}}};
}

// The operator's own budget as its Deployment changes after the leader made it
// (operator/app/self_budget.h): a new minAvailable (replaced), then one replica (deleted).
void SelfBudgetChanges(FakeApi& api) {
  op::SelfBudgetOptions o{"dljob-system", "dljob-operator", "2"};
  api.Put(res::kDeployments, OperatorDeployment(3));
  Status s = op::EnsureSelfBudget(api, o, res::kPodDisruptionBudgets);
  ASSERT_TRUE(s.ok()) << s.message();
  api.Put(res::kDeployments, OperatorDeployment(1));
  s = op::EnsureSelfBudget(api, o, res::kPodDisruptionBudgets);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(api.Object(res::kPodDisruptionBudgets, "dljob-system", "dljob-operator"));
}

// Runs the operator, watching `watch`, through the lives described above; returns its calls.
std::vector<Call> OperatorCalls(const std::string& watch) {
  FakeApi api;
  WebhookStartUps(api);
  api.Put(res::kDeployments, OperatorDeployment(2));
  for (const char* n : {"n1", "n2"}) api.Put(res::kNodes, Node(n));
  api.Put(res::kDLQueues, {{"apiVersion", "dljob.io/v1alpha1"},
                           {"kind", "DLQueue"},
                           {"metadata", {{"name", "default"}}},
                           {"spec", {{"quotas", {{{"nominal", 128}}}}}}});
  api.Put(res::kDLJobs,
          Job("team-a", "short", 4, {{"runPolicy", {{"ttlSecondsAfterFinished", 0}}}}));
  api.Put(res::kDLJobs, Job("team-a", "cached", 4,
                            {{"data",
                              {{{"name", "d"},
                                {"source", "nas://nas.example.com/export/d"},
                                {"mountPath", "/data"},
                                {"cache", {{"medium", "LocalSSD"}, {"path", "/mnt/nvme"}}}}}}}));
  api.Put(res::kDLJobs, Job("team-a", "huge", 64));
  // Elastic, 4 to 16 GPUs: it starts on what the others leave and grows once "short" is done
  // (its hostfile replaced, its disruption budget read and replaced).
  api.Put(res::kDLJobs,
          Job("team-a", "zelastic", 16, {{"elastic", {{"minGpus", 4}, {"maxGpus", 16}}}}));
  api.Put(res::kDLJobs, Job("team-b", "elsewhere", 4));
  // Throughput from the launcher's log (patched into the job's status).
  api.SetLog("team-a", "short-launcher",
             {R"(DLJOB_METRIC {"step":10,"images_per_sec":250.5,"loss":2.5,"rank":0})"});
  // Each child's first create meets one left by an earlier operator: read back (get).
  for (const char* plural : {"services", "configmaps", "secrets", "pods"}) {
    api.FailNext("create", plural, kube::ApiError{409, "AlreadyExists", "already exists"});
  }

  op::OperatorOptions o;
  o.watch_namespace = watch;
  o.identity = "rbac-test";
  o.workers = 2;
  o.metrics_port = -1;
  o.elastic_grow_after = std::chrono::seconds(0);
  o.operator_deployment = "dljob-operator";  // as the chart passes it
  Clock& clock = RealClock();
  op::OperatorApp app(o, api, clock);
  std::jthread run([&](std::stop_token stop) { app.Run(stop); });
  bool done = dljob::testing::WaitFor(
      [&] {
        Kubelet(api);
        return !api.Object(res::kDLJobs, "team-a", "short") && Called(api, "patch", "nodes") &&
               Called(api, "patch-status", "dljobs") && Called(api, "patch-status", "pods") &&
               Called(api, "update-status", "dlqueues") && Called(api, "create", "events") &&
               Called(api, "update", "configmaps") && Called(api, "update", "poddisruptionbudgets");
      },
      60'000);
  run.request_stop();
  run.join();
  EXPECT_TRUE(api.Object(res::kPodDisruptionBudgets, "dljob-system", "dljob-operator"));
  SelfBudgetChanges(api);
  // A read of /logs, on any replica: the caller's token reviewed (operator/app/log_access.h).
  api.SetReview("tokenreviews", {{"authenticated", true}, {"user", {{"username", "alice"}}}});
  api.SetReview("subjectaccessreviews", {{"allowed", true}});
  op::LogAccess logs(api, clock);
  EXPECT_EQ(logs.Check("a-users-token", "team-a").status, 200);
  // A standby passing /logs on to the leader (operator/app/leader_logs.h): the Lease's holder,
  // then that pod's IP (the Lease as a leader holds it; the run above released it).
  Json lease = *api.Object(res::kLeases, "dljob-system", "dljob-operator");
  lease["spec"]["holderIdentity"] = "rbac-test";
  api.Put(res::kLeases, lease);
  api.Put(res::kPods, {{"metadata", {{"name", "rbac-test"}, {"namespace", "dljob-system"}}},
                       {"status", {{"podIP", "10.0.0.9"}}}});
  Result<std::string> leader =
      op::LeaderUrl(api, {"dljob-system", "dljob-operator", "a-standby", 8080});
  EXPECT_TRUE(leader.ok() && *leader == "http://10.0.0.9:8080") << leader.status().message();
  EXPECT_TRUE(done) << "the scenario did not complete; calls:\n"
                    << [&] {
                         std::string all;
                         for (const std::string& c : api.CallStrings()) all += c + "\n";
                         return all;
                       }();
  return api.Calls();
}

void CheckChartAgainstCalls(const std::string& watch) {
  std::vector<std::string> sets;
  if (!watch.empty()) sets.push_back("watchNamespace=" + watch);
  Result<std::string> rendered =
      chart::RenderChart("charts/dljob", sets, "dljob", "dljob-system", false);
  ASSERT_TRUE(rendered.ok()) << rendered.status().message();
  std::set<Request> built_in;
  const std::set<Request> grants = Grants(Documents(*rendered), built_in);
  ASSERT_FALSE(grants.empty());

  std::set<Request> used;
  for (const Call& c : OperatorCalls(watch)) {
    if (!watch.empty()) {
      EXPECT_NE(c.ns, "team-b") << c.ToString();
    }
    for (const Request& q : RequestsOf(c)) {
      std::optional<Request> by = Allowing(grants, q);
      EXPECT_TRUE(by) << "the chart does not allow " << q.ToString() << " (" << c.ToString() << ")";
      if (by) used.insert(*by);
    }
  }
  for (const Request& g : grants) {
    if (built_in.count(g)) continue;  // a built-in role's other rules are not the chart's choice
    EXPECT_TRUE(used.count(g)) << "granted but never used: " << g.ToString();
  }
  if (!watch.empty()) {
    for (const Request& g : grants) {
      bool cluster_wide_ok = g.resource == "nodes" || g.resource.starts_with("dlqueues") ||
                             g.resource == "validatingwebhookconfigurations" ||
                             built_in.count(g) > 0 ||  // reviews: cluster-scoped kinds
                             (g.resource == "pods" && (g.verb == "list" || g.verb == "watch"));
      if (g.ns.empty()) {
        EXPECT_TRUE(cluster_wide_ok) << "cluster-wide: " << g.ToString();
      }
      // The operator's own namespace holds its Lease, the webhook's certificate Secret, the
      // operator's own pods (a standby reads the leader's IP), its Deployment and their budget.
      bool own =
          g.ns == "dljob-system" &&
          (g.resource == "leases" || g.resource == "secrets" || g.resource == "deployments" ||
           g.resource == "poddisruptionbudgets" || (g.resource == "pods" && g.verb == "get"));
      if (!g.ns.empty() && !own) {
        EXPECT_EQ(g.ns, watch) << g.ToString();
      }
    }
  }
}

TEST(ChartRbac, EveryNamespaceAllowsExactlyTheOperatorsCalls) { CheckChartAgainstCalls(""); }

TEST(ChartRbac, WatchNamespaceAllowsExactlyTheOperatorsCallsThere) {
  CheckChartAgainstCalls("team-a");
}

}  // namespace
}  // namespace dljob
