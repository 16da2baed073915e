// Server-side apply and managedFields over the REST layer (rest_apply.cc, field_manager.h), and
// /openapi/v2, as clients see them: status codes, Status bodies and the objects stored.
#include <gtest/gtest.h>

#include "tests/apiserver/fake_writer.h"
#include "tests/apiserver/openapi_v2_proto.h"
#include "tests/apiserver/protobuf.h"
#include "tests/apiserver/rest_handler.h"

namespace dljob::apiserver {
namespace {

const char kConfigMaps[] = "/api/v1/namespaces/default/configmaps";
const char kJobs[] = "/apis/dljob.io/v1alpha1/namespaces/default/dljobs";
const HttpHeaders kApply = {{"Content-Type", "application/apply-patch+yaml"}};
const HttpHeaders kMerge = {{"Content-Type", "application/merge-patch+json"}};

class RestApplyTest : public ::testing::Test {
 protected:
  RestApplyTest() {
    RestOptions options;
    options.store.now = [this] { return now_; };
    handler_ = std::make_unique<RestHandler>(options);
    EXPECT_TRUE(handler_->LoadCrdFile("charts/dljob/crds/dljob.io_dljobs.yaml").ok());
  }

  FakeWriter Call(const std::string& method, const std::string& target, const std::string& body,
                  HttpHeaders headers = {}) {
    FakeWriter out;
    handler_->Serve(RequestFor(method, target, body, std::move(headers)), out);
    return out;
  }
  FakeWriter Apply(const std::string& target, const std::string& body) {
    return Call("PATCH", target, body, kApply);
  }
  Json Get(const std::string& target) { return Call("GET", target, "").json(); }
  // manager (operation[/subresource]) -> fieldsV1, from an object's managedFields.
  static std::map<std::string, Json> Owners(const Json& object) {
    std::map<std::string, Json> out;
    for (const Json& e : object["metadata"].value("managedFields", Json::array())) {
      std::string key =
          e["manager"].get<std::string>() + " (" + e["operation"].get<std::string>() +
          (e.contains("subresource") ? "/" + e["subresource"].get<std::string>() : "") + ")";
      out[key] = e["fieldsV1"];
    }
    return out;
  }

  std::chrono::system_clock::time_point now_ = std::chrono::system_clock::from_time_t(1800000000);
  std::unique_ptr<RestHandler> handler_;
};

const char kConfigMapYaml[] = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels:
    app: web
data:
  a: "1"
  b: "2"
)";

TEST_F(RestApplyTest, ApplyCreatesThenUpdatesAndRecordsItsFields) {
  std::string target = std::string(kConfigMaps) + "/settings?fieldManager=kubectl&force=false";
  FakeWriter created = Apply(target, kConfigMapYaml);
  ASSERT_EQ(created.status_, 201) << created.body_;
  Json cm = created.json();
  EXPECT_EQ(cm["data"], Json({{"a", "1"}, {"b", "2"}}));
  EXPECT_FALSE(cm["metadata"]["uid"].get<std::string>().empty());
  EXPECT_EQ(cm["metadata"]["managedFields"],
            Json::parse(R"([{"manager":"kubectl","operation":"Apply","apiVersion":"v1",
                             "time":"2027-01-15T08:00:00Z","fieldsType":"FieldsV1",
                             "fieldsV1":{"f:data":{"f:a":{},"f:b":{}},
                                         "f:metadata":{"f:labels":{"f:app":{}}}}}])"));

  // Unchanged: no new version. Changed, with b left out: b is pruned.
  FakeWriter same = Apply(target, kConfigMapYaml);
  ASSERT_EQ(same.status_, 200) << same.body_;
  EXPECT_EQ(same.json()["metadata"]["resourceVersion"], cm["metadata"]["resourceVersion"]);
  now_ += std::chrono::minutes(1);
  FakeWriter changed = Apply(target,
                             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"
                             "  labels: {app: web}\ndata:\n  a: \"3\"\n");
  ASSERT_EQ(changed.status_, 200) << changed.body_;
  EXPECT_EQ(changed.json()["data"], Json({{"a", "3"}}));
  EXPECT_EQ(changed.json()["metadata"]["managedFields"][0]["time"], "2027-01-15T08:01:00Z");
  EXPECT_EQ(Get(std::string(kConfigMaps) + "/settings")["data"], Json({{"a", "3"}}));
}

TEST_F(RestApplyTest, OptionsAndConfigurationsTheRealServerRefuses) {
  std::string target = std::string(kConfigMaps) + "/settings";
  FakeWriter no_manager = Apply(target, kConfigMapYaml);
  EXPECT_EQ(no_manager.status_, 422) << no_manager.body_;
  EXPECT_EQ(no_manager.json()["message"],
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required "
            "for apply patch");
  EXPECT_EQ(no_manager.json()["details"],
            Json::parse(R"({"group":"meta.k8s.io","kind":"PatchOptions","causes":[
              {"reason":"FieldValueRequired","message":"Required value: is required for apply patch",
               "field":"fieldManager"}]})"));
  FakeWriter forced = Call("PATCH", target + "?force=true", "{}", kMerge);
  EXPECT_EQ(forced.status_, 422) << forced.body_;
  EXPECT_EQ(forced.json()["message"],
            "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for "
            "non-apply patch");

  target += "?fieldManager=m";
  struct Case {
    const char* body;
    int status;
    const char* message;
  } cases[] = {
      {"apiVersion: v2\nkind: ConfigMap\n", 400,
       "Incorrect version specified in apply patch. Specified patch version: v2, expected: v1"},
      {"apiVersion: v1\nkind: Secret\n", 400,
       "Incorrect kind specified in apply patch. Specified patch kind: Secret, expected: "
       "ConfigMap"},
      {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  managedFields: []\n", 400,
       "metadata.managedFields must be nil"},
      {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n", 400,
       "the name of the object (other) does not match the name on the URL (settings)"},
      {"- a\n- b\n", 400, "error decoding YAML: the applied configuration is not an object"},
  };
  for (const Case& c : cases) {
    FakeWriter out = Apply(target, c.body);
    EXPECT_EQ(out.status_, c.status) << c.body << out.body_;
    EXPECT_EQ(out.json()["message"], c.message) << c.body;
  }
  EXPECT_EQ(Call("GET", std::string(kConfigMaps) + "/settings", "").status_, 404);
  FakeWriter cbor = Call("PATCH", target, "{}", {{"Content-Type", "application/apply-patch+cbor"}});
  EXPECT_EQ(cbor.status_, 415);
  EXPECT_EQ(cbor.json()["message"],
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json-patch+json, application/merge-patch+json, "
            "application/strategic-merge-patch+json, application/apply-patch+yaml");
}

TEST_F(RestApplyTest, ConflictsAre409WithCausesAndForceTakesTheField) {
  std::string base = std::string(kConfigMaps) + "/settings?fieldManager=";
  ASSERT_EQ(Apply(base + "alice", kConfigMapYaml).status_, 201);
  FakeWriter conflict = Apply(base + "bob",
                              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"
                              "data: {a: \"9\", b: \"9\"}\n");
  ASSERT_EQ(conflict.status_, 409) << conflict.body_;
  Json status = conflict.json();
  EXPECT_EQ(status["reason"], "Conflict");
  EXPECT_EQ(status["message"],
            "Apply failed with 2 conflicts: conflicts with \"alice\":\n- .data.a\n- .data.b");
  EXPECT_EQ(status["details"]["causes"],
            Json::parse(R"([{"type":"FieldManagerConflict","message":"conflict with \"alice\"",
                              "field":".data.a"},
                             {"type":"FieldManagerConflict","message":"conflict with \"alice\"",
                              "field":".data.b"}])"));
  FakeWriter forced = Apply(base + "bob&force=true",
                            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"
                            "data: {a: \"9\"}\n");
  ASSERT_EQ(forced.status_, 200) << forced.body_;
  EXPECT_EQ(forced.json()["data"], Json({{"a", "9"}, {"b", "2"}}));
  EXPECT_EQ(Owners(forced.json()),
            (std::map<std::string, Json>{
                {"alice (Apply)",
                 Json::parse(R"({"f:data":{"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}})")},
                {"bob (Apply)", Json::parse(R"({"f:data":{"f:a":{}}})")}}));
}

TEST_F(RestApplyTest, OtherWritesRecordTheirManagerAndAppliesConflictWithThem) {
  Json cm = {{"apiVersion", "v1"},
             {"kind", "ConfigMap"},
             {"metadata", {{"name", "settings"}}},
             {"data", {{"a", "1"}}}};
  FakeWriter created =
      Call("POST", std::string(kConfigMaps) + "?fieldManager=kubectl-create", cm.dump());
  ASSERT_EQ(created.status_, 201) << created.body_;
  EXPECT_EQ(Owners(created.json()),
            (std::map<std::string, Json>{
                {"kubectl-create (Update)", Json::parse(R"({"f:data":{".":{},"f:a":{}}})")}}));
  // No fieldManager: the User-Agent's product, as the real server derives it.
  Json put = created.json();
  put["data"]["b"] = "2";
  FakeWriter updated = Call("PUT", std::string(kConfigMaps) + "/settings", put.dump(),
                            {{"User-Agent", "dljob-operator/0.3 (linux/amd64)"}});
  ASSERT_EQ(updated.status_, 200) << updated.body_;
  FakeWriter patched =
      Call("PATCH", std::string(kConfigMaps) + "/settings?fieldManager=kubectl-patch",
           R"({"data":{"a":"5"}})", kMerge);
  ASSERT_EQ(patched.status_, 200) << patched.body_;
  EXPECT_EQ(Owners(patched.json()),
            (std::map<std::string, Json>{
                {"kubectl-create (Update)", Json::parse(R"({"f:data":{}})")},
                {"dljob-operator (Update)", Json::parse(R"({"f:data":{"f:b":{}}})")},
                {"kubectl-patch (Update)", Json::parse(R"({"f:data":{"f:a":{}}})")}}));
  FakeWriter conflict = Apply(std::string(kConfigMaps) + "/settings?fieldManager=kubectl",
                              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"
                              "data: {a: \"7\"}\n");
  EXPECT_EQ(conflict.status_, 409);
  EXPECT_EQ(conflict.json()["message"],
            "Apply failed with 1 conflict: conflict with \"kubectl-patch\" using v1: .data.a");
  // The client may write managedFields (kubectl's JSON patch when it moves client-side apply's
  // fields to server-side apply).
  FakeWriter moved =
      Call("PATCH", std::string(kConfigMaps) + "/settings?fieldManager=kubectl",
           R"([{"op":"replace","path":"/metadata/managedFields","value":[{"manager":"kubectl",
          "operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1",
          "fieldsV1":{"f:data":{"f:a":{},"f:b":{}}}}]}])",
           {{"Content-Type", "application/json-patch+json"}});
  ASSERT_EQ(moved.status_, 200) << moved.body_;
  EXPECT_EQ(Owners(moved.json()),
            (std::map<std::string, Json>{
                {"kubectl (Apply)", Json::parse(R"({"f:data":{"f:a":{},"f:b":{}}})")}}));
  FakeWriter applied = Apply(std::string(kConfigMaps) + "/settings?fieldManager=kubectl",
                             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"
                             "data: {a: \"7\"}\n");
  ASSERT_EQ(applied.status_, 200) << applied.body_;
  EXPECT_EQ(applied.json()["data"], Json({{"a", "7"}}));  // b pruned: kubectl owned it alone
}

TEST_F(RestApplyTest, ServicePortsMergeByPortAndProtocolBetweenAppliers) {
  const std::string web = "/api/v1/namespaces/default/services/web?fieldManager=";
  auto service = [](const std::string& spec) {
    return "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n" + spec;
  };
  ASSERT_EQ(Apply(web + "app", service("  selector: {app: web}\n"
                                       "  ports: [{name: http, port: 80}]\n"))
                .status_,
            201);
  FakeWriter metrics = Apply(web + "mesh", service("  ports: [{name: metrics, port: 9090}]\n"));
  ASSERT_EQ(metrics.status_, 200) << metrics.body_;
  FakeWriter again =
      Apply(web + "app", service("  selector: {app: web}\n"
                                 "  ports: [{name: http, port: 80, targetPort: 8080}]\n"));
  ASSERT_EQ(again.status_, 200) << again.body_;
  EXPECT_EQ(again.json()["spec"]["ports"],
            Json::parse(R"([{"name":"http","port":80,"targetPort":8080},
                            {"name":"metrics","port":9090}])"));
  EXPECT_EQ(Owners(again.json())["app (Apply)"]["f:spec"]["f:ports"],
            Json::parse(R"({"k:{\"port\":80,\"protocol\":\"TCP\"}":
                             {".":{},"f:name":{},"f:port":{},"f:targetPort":{}}})"));
  struct Case {
    const char* spec;
    const char* message;
  } conflicts[] = {
      {"  ports: [{name: web, port: 80}]\n",
       "Apply failed with 1 conflict: conflict with \"app\": "
       ".spec.ports[port=80,protocol=\"TCP\"].name"},
      {"  selector: {app: web, tier: db}\n",  // an atomic map: one value
       "Apply failed with 1 conflict: conflict with \"app\": .spec.selector"},
  };
  for (const Case& c : conflicts) {
    FakeWriter out = Apply(web + "mesh", service(c.spec));
    EXPECT_EQ(out.status_, 409) << out.body_;
    EXPECT_EQ(out.json()["message"], c.message);
  }
}

TEST_F(RestApplyTest, StatusIsOwnedOnlyThroughTheStatusSubresource) {
  const std::string job = std::string(kJobs) + "/train";
  const char* kJob =
      "apiVersion: dljob.io/v1alpha1\nkind: DLJob\nmetadata: {name: train}\n"
      "spec: {image: i, command: [c], gpus: 2}\nstatus: {phase: Running}\n";
  FakeWriter created = Apply(job + "?fieldManager=kubectl", kJob);
  ASSERT_EQ(created.status_, 201) << created.body_;
  EXPECT_FALSE(created.json().contains("status"));  // dropped on create, as the real server does
  EXPECT_EQ(Owners(created.json())["kubectl (Apply)"],
            Json::parse(R"({"f:spec":{"f:command":{},"f:gpus":{},"f:image":{}}})"));
  FakeWriter status = Apply(job + "/status?fieldManager=operator",
                            "apiVersion: dljob.io/v1alpha1\nkind: DLJob\nmetadata: {name: train}\n"
                            "spec: {gpus: 9}\nstatus: {phase: Running}\n");
  ASSERT_EQ(status.status_, 200) << status.body_;
  EXPECT_EQ(status.json()["status"]["phase"], "Running");
  EXPECT_EQ(status.json()["spec"]["gpus"], 2);
  EXPECT_EQ(Owners(status.json())["operator (Apply/status)"],
            Json::parse(R"({"f:status":{"f:phase":{}}})"));
  EXPECT_EQ(Apply(std::string(kJobs) + "/missing/status?fieldManager=operator",
                  "apiVersion: dljob.io/v1alpha1\nkind: DLJob\n")
                .status_,
            404);
}

TEST_F(RestApplyTest, UnknownFieldsFollowFieldValidation) {
  const std::string job = std::string(kJobs) + "/train?fieldManager=kubectl";
  const std::string body =
      "apiVersion: dljob.io/v1alpha1\nkind: DLJob\nmetadata: {name: train}\n"
      "spec: {image: i, command: [c], gpus: 2, gpuz: 1}\n";
  FakeWriter strict = Apply(job + "&fieldValidation=Strict", body);
  EXPECT_EQ(strict.status_, 400);
  EXPECT_EQ(strict.json()["message"], "strict decoding error: unknown field \"spec.gpuz\"");
  FakeWriter warn = Apply(job, body);
  ASSERT_EQ(warn.status_, 201) << warn.body_;
  bool warned = false;
  for (const auto& [k, v] : warn.headers_)
    warned |= k == "Warning" && v.find("spec.gpuz") != std::string::npos;
  EXPECT_TRUE(warned);
  EXPECT_FALSE(warn.json()["spec"].contains("gpuz"));
  EXPECT_FALSE(Owners(warn.json())["kubectl (Apply)"]["f:spec"].contains("f:gpuz"));
  FakeWriter invalid = Apply(std::string(kJobs) + "/bad?fieldManager=kubectl",
                             "apiVersion: dljob.io/v1alpha1\nkind: DLJob\nmetadata: {name: bad}\n"
                             "spec: {image: i, command: [c], gpus: -1}\n");
  EXPECT_EQ(invalid.status_, 422) << invalid.body_;
}

TEST_F(RestApplyTest, OpenApiV2IsServedAsJsonOrProtobuf) {
  FakeWriter json = Call("GET", "/openapi/v2", "");
  ASSERT_EQ(json.status_, 200);
  Json doc = json.json();
  EXPECT_TRUE(doc["definitions"].contains("io.dljob.v1alpha1.DLJob"));
  FakeWriter proto =
      Call("GET", "/openapi/v2", "",
           {{"Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}});
  ASSERT_EQ(proto.status_, 200);
  EXPECT_EQ(HeaderValue(proto.headers_, "Content-Type"), kOpenApiV2ProtobufType);
  EXPECT_EQ(proto.body_, EncodeOpenApiV2(doc));
  ProtoReader reader(proto.body_);
  ASSERT_TRUE(reader.Next());
  EXPECT_EQ(reader.field(), 1);
  EXPECT_EQ(reader.bytes(), "2.0");
  EXPECT_EQ(Call("GET", "/openapi/v2", "", {{"Accept", "text/html"}}).status_, 406);
}

}  // namespace
}  // namespace dljob::apiserver
