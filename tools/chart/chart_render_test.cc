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
  EXPECT_EQ(kinds, (std::vector<std::string>{
                       "Namespace", "CustomResourceDefinition", "CustomResourceDefinition",
                       "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ClusterRoleBinding",
                       "Role", "RoleBinding", "Role", "RoleBinding", "Service", "Deployment"}));
  std::set<std::string> crds;
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
    if (d["kind"] == "ClusterRole") {
      // Exactly what the operator calls (the kube::Api calls in operator/), nothing more.
      std::map<std::string, std::set<std::string>> verbs;
      for (const json& rule : d["rules"]) {
        for (const json& r : rule["resources"]) {
          for (const json& v : rule["verbs"]) verbs[r].insert(v);
        }
      }
      using Verbs = std::set<std::string>;
      EXPECT_EQ(verbs, (std::map<std::string, Verbs>{
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
                           {"configmaps", {"get", "list", "watch", "create"}},
                           {"secrets", {"get", "list", "watch", "create"}},
                           {"nodes", {"get", "list", "watch", "patch"}},
                           {"events", {"create"}},
                       }));
    }
    if (d["kind"] == "Role" && d["metadata"]["name"] == "dljob-logs-proxy") {
      // /logs through the API server's proxy: that Service only (/logs checks pods/log itself).
      EXPECT_EQ(d["rules"], json::parse(R"([{"apiGroups": [""], "resources": ["services/proxy"],
          "resourceNames": ["dljob-operator-metrics", "dljob-operator-metrics:metrics"],
          "verbs": ["get"]}])"));
    } else if (d["kind"] == "Role") {  // leader election: its own Lease only
      ASSERT_EQ(d["rules"].size(), 1u);
      EXPECT_EQ(d["rules"][0]["resources"], json::array({"leases"}));
      EXPECT_EQ(d["rules"][0]["verbs"], json::array({"get", "create", "update"}));
    }
    if (d["kind"] == "Deployment") {
      EXPECT_EQ(d["spec"]["replicas"], 2);
      const json& c = d["spec"]["template"]["spec"]["containers"][0];
      EXPECT_EQ(c["image"], "dljob/operator:0.1.0");
      std::set<std::string> args(c["command"].begin(), c["command"].end());
      EXPECT_TRUE(args.count("--leader-elect=true"));
      EXPECT_TRUE(args.count("--cluster-domain=cluster.local"));
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

}  // namespace
}  // namespace dljob::chart
