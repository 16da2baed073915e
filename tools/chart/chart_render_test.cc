#include "tools/chart/chart_render.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "jobs/codec.h"

namespace dljob::chart {
namespace {

using nlohmann::json;

RenderContext Context() {
  RenderContext ctx;
  ctx.values = {{"image", {{"repository", "r"}, {"tag", "1"}}},
                {"replicas", 2},
                {"flag", false},
                {"empty", ""},
                {"res", {{"limits", {{"memory", "1Gi"}}}}},
                {"claim", ""}};
  ctx.chart = {{"name", "dljob"}, {"appVersion", "0.1.0"}};
  ctx.release_name = "rel";
  ctx.release_namespace = "ns";
  return ctx;
}

std::string Render(const std::string& text) {
  Result<std::string> out = RenderTemplate("t.yaml", text, Context());
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? *out : "";
}

TEST(ChartRender, Substitutes) {
  EXPECT_EQ(Render("image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\""),
            "image: \"r:1\"");
  EXPECT_EQ(Render("n: {{ .Release.Name }}/{{ .Release.Namespace }} {{.Values.replicas}}"),
            "n: rel/ns 2");
  EXPECT_EQ(Render("v: {{ .Chart.AppVersion | quote }}"), "v: \"0.1.0\"");
  EXPECT_EQ(Render("b: {{ .Values.flag }}"), "b: false");
}

TEST(ChartRender, ToYamlNindentAndTrim) {
  EXPECT_EQ(Render("resources:\n  {{- toYaml .Values.res | nindent 2 }}\nnext: 1\n"),
            "resources:\n  limits:\n    memory: 1Gi\nnext: 1\n");
}

TEST(ChartRender, IfElseEnd) {
  std::string t =
      "v:\n  {{- if .Values.claim }}\n  pvc: {{ .Values.claim }}\n  {{- else }}\n  emptyDir: {}\n"
      "  {{- end }}\n";
  EXPECT_EQ(Render(t), "v:\n  emptyDir: {}\n");
  RenderContext ctx = Context();
  ctx.values["claim"] = "data";
  EXPECT_EQ(*RenderTemplate("t", t, ctx), "v:\n  pvc: data\n");
  EXPECT_EQ(Render("{{ if .Values.replicas }}yes{{ end }}"), "yes");
  EXPECT_EQ(Render("{{ if .Values.empty }}yes{{ else }}no{{ end }}"), "no");
}

TEST(ChartRender, ErrorsNameTemplateAndLine) {
  auto expect_error = [](const std::string& text, const std::string& want) {
    Result<std::string> out = RenderTemplate("deploy.yaml", text, Context());
    ASSERT_FALSE(out.ok()) << text;
    EXPECT_NE(out.status().message().find(want), std::string::npos) << out.status().message();
  };
  expect_error("a: 1\nb: {{ .Values.missing.key }}",
               "deploy.yaml:2: .Values.missing.key is not set");
  expect_error("{{ include \"x\" . }}", "deploy.yaml:1: unsupported action");
  expect_error("{{ .Values.replicas | upper }}", "unsupported function");
  expect_error("{{ if .Values.flag }}x", "if without end");
  expect_error("x{{ end }}", "end without if");
  expect_error("{{ .Values.a", "unclosed {{");
}

TEST(ChartRender, SetOverridesAreTyped) {
  json values = {{"replicas", 2}};
  ASSERT_TRUE(ApplySet(values, "replicas=3").ok());
  ASSERT_TRUE(ApplySet(values, "leaderElection.enabled=false").ok());
  ASSERT_TRUE(ApplySet(values, "image.tag=v2").ok());
  EXPECT_EQ(values["replicas"], 3);
  EXPECT_EQ(values["leaderElection"]["enabled"], false);
  EXPECT_EQ(values["image"]["tag"], "v2");
  EXPECT_FALSE(ApplySet(values, "novalue").ok());
}

std::vector<json> Documents(const std::string& stream) {
  std::vector<json> docs;
  std::string doc;
  std::istringstream in(stream + "\n---\n");
  for (std::string line; std::getline(in, line);) {
    if (line == "---") {
      Result<json> tree = YamlToJson(doc);
      EXPECT_TRUE(tree.ok()) << tree.status().message() << "\n" << doc;
      if (tree.ok() && !tree->is_null()) docs.push_back(*tree);
      doc.clear();
    } else {
      doc += line + "\n";
    }
  }
  return docs;
}

// The real chart: renders, every document is YAML, kinds in install order, RBAC without
// wildcards, and the plain manifests in the repository are exactly this rendering.
TEST(ChartRender, RealChartRendersAndMatchesPlainManifests) {
  Result<std::string> out = RenderChart("charts/dljob", {}, "dljob", "dljob-system", true);
  ASSERT_TRUE(out.ok()) << out.status().message();
  std::vector<json> docs = Documents(*out);
  std::vector<std::string> kinds;
  for (const json& d : docs) kinds.push_back(d.value("kind", ""));
  EXPECT_EQ(kinds, (std::vector<std::string>{"Namespace",
                                             "CustomResourceDefinition",
                                             "CustomResourceDefinition",
                                             "ServiceAccount",
                                             "ClusterRole",
                                             "ClusterRole",
                                             "ClusterRoleBinding",
                                             "ClusterRoleBinding",
                                             "ClusterRoleBinding",
                                             "Role",
                                             "Role",
                                             "Role",
                                             "Role",
                                             "RoleBinding",
                                             "RoleBinding",
                                             "RoleBinding",
                                             "RoleBinding",
                                             "Service",
                                             "Service",
                                             "Deployment",
                                             "ValidatingWebhookConfiguration"}));
  std::set<std::string> crds;
  std::map<std::string, std::set<std::string>> cluster_verbs;
  for (const json& d : docs) {
    if (d["kind"] == "CustomResourceDefinition") crds.insert(d["metadata"]["name"]);
  }
  EXPECT_EQ(crds, (std::set<std::string>{"dljobs.dljob.io", "dlqueues.dljob.io"}));
  for (const json& d : docs) {
    for (const json& rule : d.value("rules", json::array())) {
      for (const char* field : {"verbs", "resources", "apiGroups"}) {
        for (const json& v : rule[field]) EXPECT_NE(v, "*") << d["metadata"]["name"];
      }
    }
    if (d["kind"] == "ClusterRole") {  // watching every namespace: both ClusterRoles
      for (const json& rule : d["rules"]) {
        for (const json& r : rule["resources"]) {
          for (const json& v : rule["verbs"]) cluster_verbs[r].insert(v);
        }
      }
    }
    if (d["kind"] == "Role" && d["metadata"]["name"] == "dljob-webhook-cert") {
      // The webhook's certificate Secret, in the operator's namespace only.
      ASSERT_EQ(d["rules"].size(), 1u);
      EXPECT_EQ(d["rules"][0]["resources"], json::array({"secrets"}));
      EXPECT_EQ(d["rules"][0]["verbs"], json::array({"get", "create", "update"}));
    } else if (d["kind"] == "Role" && d["metadata"]["name"] == "dljob-logs-proxy") {
      // /logs through the API server's proxy: that Service only (/logs checks pods/log itself).
      EXPECT_EQ(d["rules"], json::parse(R"([{"apiGroups": [""], "resources": ["services/proxy"],
          "resourceNames": ["dljob-operator-metrics", "dljob-operator-metrics:metrics"],
          "verbs": ["get"]}])"));
    } else if (d["kind"] == "Role" && d["metadata"]["name"] == "dljob-operator-budget") {
      // The operator's own PodDisruptionBudget: its Deployment read, that one budget written.
      EXPECT_EQ(d["rules"], json::parse(R"([
          {"apiGroups": ["apps"], "resources": ["deployments"],
           "resourceNames": ["dljob-operator"], "verbs": ["get"]},
          {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"],
           "verbs": ["list", "create"]},
          {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"],
           "resourceNames": ["dljob-operator"], "verbs": ["get", "update", "delete"]}])"));
    } else if (d["kind"] == "Role") {  // leader election: its own Lease, the leader's pod's IP
      ASSERT_EQ(d["rules"].size(), 2u);
      EXPECT_EQ(d["rules"][0]["resources"], json::array({"leases"}));
      EXPECT_EQ(d["rules"][0]["verbs"], json::array({"get", "create", "update"}));
      EXPECT_EQ(d["rules"][1]["resources"], json::array({"pods"}));
      EXPECT_EQ(d["rules"][1]["verbs"], json::array({"get"}));
    }
    if (d["kind"] == "Deployment") {
      EXPECT_EQ(d["spec"]["replicas"], 2);
      const json& c = d["spec"]["template"]["spec"]["containers"][0];
      EXPECT_EQ(c["image"], "dljob/operator:0.1.0");
      std::set<std::string> args(c["command"].begin(), c["command"].end());
      EXPECT_TRUE(args.count("--leader-elect=true"));
      EXPECT_TRUE(args.count("--cluster-domain=cluster.local"));
      EXPECT_TRUE(args.count("--webhook-port=9443"));
      EXPECT_TRUE(args.count("--webhook-configuration=dljob-validating-webhook"));
      EXPECT_TRUE(d["spec"]["template"]["spec"]["volumes"][0].contains("emptyDir"));
      // The "restricted" Pod Security profile: non-root (the image's uid), no privilege
      // escalation, no capability, a read-only root filesystem, the runtime's seccomp profile.
      const json& pod = d["spec"]["template"]["spec"]["securityContext"];
      EXPECT_EQ(pod["runAsNonRoot"], true);
      EXPECT_EQ(pod["runAsUser"], 65532);
      EXPECT_EQ(pod["seccompProfile"]["type"], "RuntimeDefault");
      EXPECT_EQ(c["securityContext"]["allowPrivilegeEscalation"], false);
      EXPECT_EQ(c["securityContext"]["readOnlyRootFilesystem"], true);
      EXPECT_EQ(c["securityContext"]["capabilities"]["drop"], json::array({"ALL"}));
    }
  }
  // Exactly what the operator calls (tests/chart/rbac_test.cc checks it against a running one).
  using Verbs = std::set<std::string>;
  EXPECT_EQ(cluster_verbs, (std::map<std::string, Verbs>{
                               {"dljobs", {"list", "watch", "delete"}},
                               {"dljobs/status", {"update", "patch"}},
                               {"dljobs/finalizers", {"update"}},
                               {"dlqueues", {"list", "watch"}},
                               {"dlqueues/status", {"update"}},
                               {"pods", {"get", "list", "watch", "create", "delete"}},
                               {"pods/binding", {"create"}},
                               {"pods/status", {"patch"}},
                               {"pods/log", {"get"}},
                               {"services", {"get", "list", "watch", "create"}},
                               {"configmaps", {"get", "list", "watch", "create", "update"}},
                               {"secrets", {"get", "list", "watch", "create"}},
                               {"nodes", {"get", "list", "watch", "patch"}},
                               {"events", {"create"}},
                               {"poddisruptionbudgets", {"list", "create", "get", "update"}},
                               {"validatingwebhookconfigurations", {"get", "update"}},
                           }));
  for (const json& d : docs) {
    if (d["kind"] != "ValidatingWebhookConfiguration") continue;
    ASSERT_EQ(d["webhooks"].size(), 2u);
    for (const json& hook : d["webhooks"]) {
      EXPECT_EQ(hook["failurePolicy"], "Fail");
      EXPECT_EQ(hook["sideEffects"], "None");
      EXPECT_EQ(hook["admissionReviewVersions"], json::array({"v1", "v1beta1"}));
      EXPECT_EQ(hook["clientConfig"]["service"]["name"], "dljob-webhook");
      EXPECT_EQ(hook["rules"][0]["operations"], json::array({"CREATE", "UPDATE"}));
    }
  }
  std::ifstream in("charts/manifests/dljob.yaml");
  std::stringstream committed;
  committed << in.rdbuf();
  EXPECT_EQ(committed.str(), *out)
      << "charts/manifests/dljob.yaml is stale: run scripts/gen/manifests.sh";
}

TEST(ChartRender, ValuesChangeTheRendering) {
  Result<std::string> out = RenderChart(
      "charts/dljob", {"replicas=3", "logArchive.existingClaim=logs", "clusterDomain=corp.local"},
      "prod", "ml", false);
  ASSERT_TRUE(out.ok()) << out.status().message();
  for (const json& d : Documents(*out)) {
    EXPECT_NE(d["kind"], "Namespace");
    if (d["kind"] != "Deployment") continue;
    EXPECT_EQ(d["metadata"]["name"], "prod-operator");
    EXPECT_EQ(d["metadata"]["namespace"], "ml");
    EXPECT_EQ(d["spec"]["replicas"], 3);
    EXPECT_EQ(d["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"],
              "logs");
  }
  EXPECT_NE(out->find("--cluster-domain=corp.local"), std::string::npos);
}

TEST(ChartRender, WithComparisonsAndLogic) {
  RenderContext ctx = Context();
  ctx.values["labels"] = {{"a", "1"}};
  ctx.values["none"] = json::object();
  auto render = [&](const std::string& t) {
    Result<std::string> out = RenderTemplate("t.yaml", t, ctx);
    EXPECT_TRUE(out.ok()) << out.status().message();
    return out.ok() ? *out : "";
  };
  EXPECT_EQ(render("l:\n  {{- with .Values.labels }}\n  {{- toYaml . | nindent 2 }}\n  {{- end }}"),
            "l:\n  a: \"1\"");
  EXPECT_EQ(render("{{ with .Values.image }}{{ .repository }}:{{ $.Values.image.tag }}{{ end }}"),
            "r:1");
  EXPECT_EQ(render("{{ with .Values.none }}{{ .missing }}{{ else }}none{{ end }}"), "none");
  EXPECT_EQ(render("{{ if gt .Values.replicas 1 }}many{{ end }}"), "many");
  EXPECT_EQ(render("{{ if lt .Values.replicas 2 }}few{{ else }}not few{{ end }}"), "not few");
  EXPECT_EQ(render("{{ if eq .Values.image.tag \"1\" }}one{{ end }}"), "one");
  EXPECT_EQ(render("{{ if and .Values.replicas .Values.flag }}x{{ else }}y{{ end }}"), "y");
  EXPECT_EQ(render("{{ if or .Values.flag .Values.replicas }}x{{ end }}"), "x");
  EXPECT_EQ(render("{{ if not .Values.flag }}off{{ end }}"), "off");
  RenderContext bad = Context();
  Result<std::string> out = RenderTemplate("t.yaml", "{{ if gt .Values.image 1 }}{{ end }}", bad);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("gt compares numbers"), std::string::npos);
  out = RenderTemplate("t.yaml", "{{ with .Values.flag }}x", bad);
  EXPECT_NE(out.status().message().find("with without end"), std::string::npos);
}

TEST(ChartRender, FilesGet) {
  RenderContext ctx = Context();
  ctx.files["dashboards/d.json"] = "{\n  \"a\": 1\n}";
  EXPECT_EQ(
      *RenderTemplate("t", "d: |-\n  {{- .Files.Get \"dashboards/d.json\" | nindent 2 }}", ctx),
      "d: |-\n  {\n    \"a\": 1\n  }");
  Result<std::string> out = RenderTemplate("t", "{{ .Files.Get \"nope\" }}", ctx);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("t:1: no file \"nope\" in the chart"), std::string::npos);
}

// A wrong value fails before anything renders, naming the field as Helm does.
TEST(ChartRender, ValuesAreCheckedAgainstTheSchema) {
  Result<std::string> out = RenderChart(
      "charts/dljob", {"replicas=two", "podDisruptionBudget.minAvailabel=1", "queue.policy=lifo"},
      "dljob", "dljob-system", false);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "values don't meet the specifications of the schema(s) in the following chart(s):\n"
            "dljob:\n"
            "- at '/podDisruptionBudget': additional properties 'minAvailabel' not allowed\n"
            "- at '/queue/policy': value must be one of 'dljob', 'fifo', 'las'\n"
            "- at '/replicas': got string, want integer");
  EXPECT_TRUE(
      RenderChart("charts/dljob", {"podDisruptionBudget.minAvailable=50%"}, "d", "n", false).ok());
}

std::vector<json> Rendered(const std::vector<std::string>& sets) {
  Result<std::string> out = RenderChart("charts/dljob", sets, "dljob", "dljob-system", false);
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? Documents(*out) : std::vector<json>{};
}

const json* Find(const std::vector<json>& docs, const std::string& kind,
                 const std::string& name = "") {
  for (const json& d : docs) {
    if (d["kind"] == kind && (name.empty() || d["metadata"]["name"] == name)) return &d;
  }
  return nullptr;
}

TEST(ChartRender, PodSettingsReachThePodSpec) {
  std::vector<json> docs = Rendered(
      {"priorityClassName=system-cluster-critical", "nodeSelector.pool=ops",
       "podAnnotations.team=ml", "podLabels.tier=control", "extraArgs={--log-level=debug,--x=1}"});
  const json* deploy = Find(docs, "Deployment");
  ASSERT_TRUE(deploy);
  const json& tmpl = (*deploy)["spec"]["template"];
  EXPECT_EQ(tmpl["spec"]["priorityClassName"], "system-cluster-critical");
  EXPECT_EQ(tmpl["spec"]["nodeSelector"], json({{"pool", "ops"}}));
  EXPECT_EQ(tmpl["metadata"]["annotations"], json({{"team", "ml"}}));
  EXPECT_EQ(tmpl["metadata"]["labels"]["tier"], "control");
  EXPECT_EQ(tmpl["metadata"]["labels"]["app.kubernetes.io/name"], "dljob-operator");
  const json& command = tmpl["spec"]["containers"][0]["command"];
  EXPECT_EQ(command[command.size() - 2], "--log-level=debug");
  EXPECT_EQ(command.back(), "--x=1");
  EXPECT_FALSE(tmpl["spec"].contains("affinity"));  // empty values leave their field out
  EXPECT_FALSE(tmpl["spec"].contains("tolerations"));
  EXPECT_FALSE(tmpl["spec"].contains("imagePullSecrets"));
}

// The operator keeps its own budget (operator/app/self_budget.h): the chart renders none, only the
// flags naming the Deployment it covers and the Role to keep it with.
TEST(ChartRender, TheOperatorKeepsItsOwnDisruptionBudget) {
  auto args = [](const std::vector<json>& docs) {
    const json& c = (*Find(docs, "Deployment"))["spec"]["template"]["spec"]["containers"][0];
    return std::set<std::string>(c["command"].begin(), c["command"].end());
  };
  std::vector<json> plain = Rendered({});
  EXPECT_FALSE(Find(plain, "PodDisruptionBudget"));  // no version fits every cluster
  std::set<std::string> a = args(plain);
  EXPECT_TRUE(a.count("--operator-deployment=dljob-operator"));
  EXPECT_TRUE(a.count("--operator-namespace=dljob-system"));
  EXPECT_TRUE(a.count("--operator-min-available=1"));
  EXPECT_TRUE(args(Rendered({"podDisruptionBudget.minAvailable=50%"}))
                  .count("--operator-min-available=50%"));
  std::vector<json> off = Rendered({"podDisruptionBudget.enabled=false"});
  for (const std::string& arg : args(off))
    EXPECT_EQ(arg.rfind("--operator-", 0), std::string::npos);
  for (const json& d : off) EXPECT_NE(d["metadata"]["name"], "dljob-operator-budget");
  EXPECT_FALSE(
      RenderChart("charts/dljob", {"podDisruptionBudget.minAvailable=0"}, "d", "n", false).ok());
  EXPECT_FALSE(
      RenderChart("charts/dljob", {"podDisruptionBudget.minAvailable=150%"}, "d", "n", false).ok());
}

TEST(ChartRender, MonitorsAndDashboardAreOptIn) {
  std::vector<json> plain = Rendered({});
  EXPECT_FALSE(Find(plain, "ServiceMonitor"));
  EXPECT_FALSE(Find(plain, "PodMonitor"));
  EXPECT_FALSE(Find(plain, "ConfigMap"));
  std::vector<json> docs =
      Rendered({"metrics.serviceMonitor.enabled=true", "metrics.serviceMonitor.labels.release=kps",
                "metrics.serviceMonitor.interval=15s", "metrics.podMonitor.enabled=true",
                "metrics.dashboard.enabled=true", "metrics.dashboard.namespace=monitoring"});
  const json* sm = Find(docs, "ServiceMonitor");
  ASSERT_TRUE(sm);
  EXPECT_EQ((*sm)["apiVersion"], "monitoring.coreos.com/v1");
  EXPECT_EQ((*sm)["metadata"]["labels"]["release"], "kps");
  EXPECT_EQ((*sm)["spec"]["endpoints"][0], json({{"port", "metrics"},
                                                 {"path", "/metrics"},
                                                 {"interval", "15s"},
                                                 {"scrapeTimeout", "10s"}}));
  EXPECT_EQ((*sm)["spec"]["selector"]["matchLabels"],
            (*Find(docs, "Service"))["metadata"]["labels"]);
  const json* pm = Find(docs, "PodMonitor");
  ASSERT_TRUE(pm);
  EXPECT_EQ((*pm)["spec"]["podMetricsEndpoints"][0]["port"], "metrics");
  EXPECT_EQ((*pm)["spec"]["selector"]["matchLabels"],
            (*Find(docs, "Deployment"))["spec"]["selector"]["matchLabels"]);
  const json* cm = Find(docs, "ConfigMap");
  ASSERT_TRUE(cm);
  EXPECT_EQ((*cm)["metadata"]["namespace"], "monitoring");
  EXPECT_EQ((*cm)["metadata"]["labels"]["grafana_dashboard"], "1");
  std::ifstream in("charts/dljob/dashboards/dljob.json");
  std::stringstream file;
  file << in.rdbuf();
  EXPECT_EQ(json::parse((*cm)["data"]["dljob.json"].get<std::string>()), json::parse(file.str()));
}

// With watchNamespace the jobs' rights are a Role there and nothing namespaced is cluster-wide
// but listing pods (the GPU ledger); tests/chart/rbac_test.cc checks both forms against a running
// operator's calls.
TEST(ChartRender, WatchNamespaceScopesTheJobRights) {
  std::vector<json> docs = Rendered({"watchNamespace=team-a"});
  const json* role = Find(docs, "Role", "dljob-operator-jobs");
  ASSERT_TRUE(role);
  EXPECT_EQ((*role)["metadata"]["namespace"], "team-a");
  const json* binding = Find(docs, "RoleBinding", "dljob-operator-jobs");
  ASSERT_TRUE(binding);
  EXPECT_EQ((*binding)["metadata"]["namespace"], "team-a");
  EXPECT_EQ((*binding)["roleRef"]["kind"], "Role");
  EXPECT_FALSE(Find(docs, "ClusterRole", "dljob-operator-jobs"));
  EXPECT_FALSE(Find(docs, "ClusterRoleBinding", "dljob-operator-jobs"));
  for (const json& d : docs) {
    if (d["kind"] != "ClusterRole") continue;
    for (const json& rule : d["rules"]) {
      for (const json& r : rule["resources"]) {
        EXPECT_TRUE(r == "nodes" || r == "dlqueues" || r == "dlqueues/status" || r == "pods" ||
                    r == "validatingwebhookconfigurations")
            << r;
        if (r == "pods") {
          EXPECT_EQ(rule["verbs"], json::array({"list", "watch"}));
        }
      }
    }
  }
  EXPECT_FALSE(RenderChart("charts/dljob", {"watchNamespace=Team_A"}, "d", "n", false).ok());
}

TEST(ChartRender, WebhookCanBeTurnedOffOrSetToIgnore) {
  Result<std::string> off =
      RenderChart("charts/dljob", {"webhook.enabled=false"}, "dljob", "dljob-system", false);
  ASSERT_TRUE(off.ok()) << off.status().message();
  EXPECT_EQ(off->find("webhook"), std::string::npos) << *off;
  Result<std::string> ignore =
      RenderChart("charts/dljob", {"webhook.failurePolicy=Ignore"}, "dljob", "dljob-system", false);
  ASSERT_TRUE(ignore.ok()) << ignore.status().message();
  EXPECT_NE(ignore->find("failurePolicy: Ignore"), std::string::npos);
}

}  // namespace
}  // namespace dljob::chart
