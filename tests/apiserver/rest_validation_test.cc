// The REST layer's admission as clients see it: fieldValidation (Strict refuses, Warn answers
// Warning headers, Ignore prunes silently), 422 Invalid Status bodies with causes, the OpenAPI v3
// documents kubectl reads, and protobuf request bodies.
#include <algorithm>

#include <gtest/gtest.h>

#include "tests/apiserver/fake_writer.h"
#include "tests/apiserver/protobuf.h"
#include "tests/apiserver/rest_handler.h"

namespace dljob::apiserver {
namespace {

class RestValidationTest : public ::testing::Test {
 protected:
  RestValidationTest() {
    auto created = RestHandler::Create({});
    EXPECT_TRUE(created.ok()) << created.status().message();
    handler_ = std::move(created).value();
    EXPECT_TRUE(handler_->LoadCrdFile("charts/dljob/crds/dljob.io_dljobs.yaml").ok());
  }

  FakeWriter Call(const std::string& method, const std::string& target, const std::string& body,
                  HttpHeaders headers = {}) {
    HttpRequest request = RequestFor(method, target, body, std::move(headers));
    FakeWriter out;
    handler_->Serve(request, out);
    return out;
  }

  static std::vector<std::string> Warnings(const FakeWriter& out) {
    std::vector<std::string> warnings;
    for (const auto& [k, v] : out.headers_) {
      if (k == "Warning") warnings.push_back(v);
    }
    return warnings;
  }

  std::unique_ptr<RestHandler> handler_;
};

const char kJobs[] = "/apis/dljob.io/v1alpha1/namespaces/default/dljobs";

Json Job(const std::string& name) {
  return {{"apiVersion", "dljob.io/v1alpha1"},
          {"kind", "DLJob"},
          {"metadata", {{"name", name}}},
          {"spec", {{"image", "i"}, {"command", {"c"}}, {"gpus", 1}}}};
}

TEST_F(RestValidationTest, UnknownFieldsFollowTheFieldValidationParameter) {
  Json job = Job("strict");
  job["spec"]["gpuz"] = 2;
  FakeWriter strict = Call("POST", std::string(kJobs) + "?fieldValidation=Strict", job.dump());
  EXPECT_EQ(strict.status_, 400) << strict.body_;
  EXPECT_EQ(strict.json()["reason"], "BadRequest");
  EXPECT_NE(strict.json()["message"].get<std::string>().find("unknown field \"spec.gpuz\""),
            std::string::npos);
  EXPECT_EQ(Call("GET", std::string(kJobs) + "/strict", "").status_, 404);

  FakeWriter warn = Call("POST", kJobs, job.dump());  // no parameter: Warn
  EXPECT_EQ(warn.status_, 201) << warn.body_;
  EXPECT_EQ(Warnings(warn), std::vector<std::string>{"299 - \"unknown field \\\"spec.gpuz\\\"\""});
  EXPECT_FALSE(warn.json()["spec"].contains("gpuz")) << warn.body_;

  job["metadata"]["name"] = "ignore";
  FakeWriter ignore = Call("POST", std::string(kJobs) + "?fieldValidation=Ignore", job.dump());
  EXPECT_EQ(ignore.status_, 201);
  EXPECT_TRUE(Warnings(ignore).empty());
  EXPECT_FALSE(ignore.json()["spec"].contains("gpuz"));

  // A merge patch that adds an unknown field: refused under Strict, pruned otherwise.
  FakeWriter patched =
      Call("PATCH", std::string(kJobs) + "/ignore?fieldValidation=Strict", R"({"spec":{"gpuz":1}})",
           {{"Content-Type", "application/merge-patch+json"}});
  EXPECT_EQ(patched.status_, 400) << patched.body_;
  EXPECT_EQ(patched.json()["message"], "strict decoding error: unknown field \"spec.gpuz\"");
  // Status writes are pruned too.
  FakeWriter status = Call("PATCH", std::string(kJobs) + "/ignore/status",
                           R"({"status":{"phase":"Running","bogus":1}})",
                           {{"Content-Type", "application/merge-patch+json"}});
  EXPECT_EQ(status.status_, 200) << status.body_;
  EXPECT_EQ(status.json()["status"], Json({{"phase", "Running"}}));
  EXPECT_EQ(Call("POST", std::string(kJobs) + "?fieldValidation=Loud", Job("x").dump()).status_,
            400);
}

TEST_F(RestValidationTest, SchemaViolationsAre422WithCauses) {
  Json job = Job("neg");
  job["spec"]["gpus"] = -3;
  FakeWriter out = Call("POST", kJobs, job.dump());
  EXPECT_EQ(out.status_, 422) << out.body_;
  Json body = out.json();
  EXPECT_EQ(body["reason"], "Invalid");
  EXPECT_EQ(body["message"],
            "DLJob.dljob.io \"neg\" is invalid: spec.gpus: Invalid value: -3: spec.gpus in body "
            "should be greater than or equal to 1");
  EXPECT_EQ(body["details"]["causes"][0]["field"], "spec.gpus");
  EXPECT_EQ(body["details"]["group"], "dljob.io");

  ASSERT_EQ(Call("POST", kJobs, Job("good").dump()).status_, 201);
  FakeWriter update = Call("PATCH", std::string(kJobs) + "/good", R"({"spec":{"gpus":0}})",
                           {{"Content-Type", "application/merge-patch+json"}});
  EXPECT_EQ(update.status_, 422) << update.body_;
  EXPECT_EQ(Call("GET", std::string(kJobs) + "/good", "").json()["spec"]["gpus"], 1);
}

TEST_F(RestValidationTest, GenerateNameIsCompletedByTheServerAndHeldToTheNameRules) {
  Json job = Job("");
  job["metadata"] = {{"generateName", "resnet50-"}};
  FakeWriter made = Call("POST", kJobs, job.dump());
  ASSERT_EQ(made.status_, 201) << made.body_;
  const std::string name = made.json()["metadata"]["name"];
  EXPECT_EQ(name.rfind("resnet50-", 0), 0u) << name;
  EXPECT_EQ(name.size(), 14u) << name;
  EXPECT_EQ(Call("GET", std::string(kJobs) + "/" + name, "").status_, 200);

  // The real server's ObjectMeta rule (a DNS subdomain for a custom resource, the trailing '-'
  // masked), and the CRD's pattern and length for generateName, which the chart's CRD sets.
  auto causes = [](const FakeWriter& out) {
    std::vector<std::string> fields;
    const Json body = out.json();  // kept: the loop must not run over a temporary's member
    for (const Json& c : body["details"]["causes"]) fields.push_back(c["field"]);
    return fields;
  };
  job["metadata"]["generateName"] = "ResNet-";
  FakeWriter upper = Call("POST", kJobs, job.dump());
  EXPECT_EQ(upper.status_, 422) << upper.body_;
  std::vector<std::string> fields = causes(upper);
  EXPECT_NE(std::find(fields.begin(), fields.end(), "metadata.generateName"), fields.end())
      << upper.body_;
  job["metadata"]["generateName"] = std::string(50, 'a');  // the CRD allows 49
  FakeWriter longer = Call("POST", kJobs, job.dump());
  EXPECT_EQ(longer.status_, 422) << longer.body_;
  fields = causes(longer);
  EXPECT_NE(std::find(fields.begin(), fields.end(), "metadata.generateName"), fields.end())
      << longer.body_;
  job["metadata"]["generateName"] = std::string(49, 'a');
  EXPECT_EQ(Call("POST", kJobs, job.dump()).status_, 201);

  Json service = {{"metadata", {{"generateName", "1abc-"}}}, {"spec", {{"clusterIP", "None"}}}};
  FakeWriter digit = Call("POST", "/api/v1/namespaces/default/services", service.dump());
  EXPECT_EQ(digit.status_, 422) << digit.body_;
  fields = causes(digit);
  EXPECT_NE(std::find(fields.begin(), fields.end(), "metadata.generateName"), fields.end())
      << digit.body_;
}

TEST_F(RestValidationTest, BuiltinNamesFollowTheRealServersRules) {
  Json service = {{"metadata", {{"name", "1abc-worker"}}}, {"spec", {{"clusterIP", "None"}}}};
  FakeWriter out = Call("POST", "/api/v1/namespaces/default/services", service.dump());
  EXPECT_EQ(out.status_, 422) << out.body_;
  EXPECT_EQ(out.json()["details"]["causes"][0]["field"], "metadata.name");
  EXPECT_EQ(out.json()["details"]["kind"], "Service");
  Json ns = {{"metadata", {{"name", "Team_A"}}}};
  EXPECT_EQ(Call("POST", "/api/v1/namespaces", ns.dump()).status_, 422);
  Json job = Job("Bad_Name");
  EXPECT_EQ(Call("POST", kJobs, job.dump()).status_, 422);
}

TEST_F(RestValidationTest, OpenApiTellsKubectlThatFieldValidationIsSupported) {
  Json index = Call("GET", "/openapi/v3", "").json();
  ASSERT_TRUE(index["paths"].contains("api/v1")) << index;
  ASSERT_TRUE(index["paths"].contains("apis/dljob.io/v1alpha1")) << index;
  std::string url = index["paths"]["apis/dljob.io/v1alpha1"]["serverRelativeURL"];
  EXPECT_EQ(url.rfind("/openapi/v3/apis/dljob.io/v1alpha1?hash=", 0), 0u) << url;
  Json doc = Call("GET", url, "").json();
  Json patch =
      doc["paths"]["/apis/dljob.io/v1alpha1/namespaces/{namespace}/dljobs/{name}"]["patch"];
  EXPECT_EQ(patch["x-kubernetes-group-version-kind"],
            Json({{"group", "dljob.io"}, {"version", "v1alpha1"}, {"kind", "DLJob"}}));
  bool field_validation = false;
  for (const Json& p : patch["parameters"]) field_validation |= p["name"] == "fieldValidation";
  EXPECT_TRUE(field_validation) << patch;
  EXPECT_FALSE(patch["requestBody"]["content"].contains("application/strategic-merge-patch+json"));
  Json schema = doc["components"]["schemas"]["io.dljob.v1alpha1.DLJob"];
  EXPECT_EQ(schema["x-kubernetes-group-version-kind"][0]["kind"], "DLJob");
  EXPECT_EQ(schema["properties"]["spec"]["properties"]["gpus"]["minimum"], 1);

  Json core = Call("GET", "/openapi/v3/api/v1", "").json();
  Json pod_patch = core["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"];
  EXPECT_TRUE(
      pod_patch["requestBody"]["content"].contains("application/strategic-merge-patch+json"));
  EXPECT_EQ(Call("GET", "/openapi/v3/apis/nothing.io/v1", "").status_, 404);
  EXPECT_TRUE(patch["requestBody"]["content"].contains("application/apply-patch+yaml"));  // SSA
  // /openapi/v2 carries the same operations (RestApplyTest.OpenApiV2IsServedAsJsonOrProtobuf).
  Json v2 = Call("GET", "/openapi/v2", "").json();
  Json v2_patch =
      v2["paths"]["/apis/dljob.io/v1alpha1/namespaces/{namespace}/dljobs/{name}"]["patch"];
  EXPECT_EQ(v2_patch["x-kubernetes-group-version-kind"], patch["x-kubernetes-group-version-kind"]);
  bool v2_field_validation = false;
  for (const Json& p : v2_patch["parameters"])
    v2_field_validation |= p["name"] == "fieldValidation";
  EXPECT_TRUE(v2_field_validation) << v2_patch;

  // A new CRD changes the index's hash of its group-version (kubectl's cache key).
  handler_->LoadCrdFile("charts/dljob/crds/dljob.io_dlqueues.yaml");
  Json after = Call("GET", "/openapi/v3", "").json();
  EXPECT_NE(after["paths"]["apis/dljob.io/v1alpha1"]["serverRelativeURL"], url);
}

TEST_F(RestValidationTest, ProtobufNamespaceCreate) {
  // `kubectl create namespace team-b` as kubectl 1.32 sends it (see protobuf_test.cc).
  std::string name = "team-b";
  std::string meta = std::string("\x0a") + static_cast<char>(name.size()) + name;
  std::string raw = std::string("\x0a") + static_cast<char>(meta.size()) + meta;
  std::string type_meta = std::string("\x0a\x02v1\x12\x09Namespace");
  std::string body = std::string("k8s\0", 4) + "\x0a" + static_cast<char>(type_meta.size()) +
                     type_meta + "\x12" + static_cast<char>(raw.size()) + raw;
  FakeWriter out = Call("POST", "/api/v1/namespaces?fieldManager=kubectl-create", body,
                        {{"Content-Type", kProtobufMediaType}});
  EXPECT_EQ(out.status_, 201) << out.body_;
  EXPECT_EQ(out.json()["metadata"]["name"], "team-b");
  EXPECT_EQ(out.json()["status"]["phase"], "Active");
  FakeWriter other = Call("POST", "/api/v1/namespaces/default/pods", body.substr(0, 6),
                          {{"Content-Type", kProtobufMediaType}});
  EXPECT_EQ(other.status_, 400) << other.body_;
  FakeWriter cbor =
      Call("POST", "/api/v1/namespaces", "\xa1", {{"Content-Type", "application/cbor"}});
  EXPECT_EQ(cbor.status_, 415) << cbor.body_;
}

}  // namespace
}  // namespace dljob::apiserver
