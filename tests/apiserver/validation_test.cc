// The pure validation layers: name rules, ObjectMeta and built-in kind checks, the CRD schema
// (pruning and validation, with the chart's own CRDs), admission's fieldValidation modes.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "jobs/codec.h"
#include "tests/apiserver/admission.h"
#include "tests/apiserver/crd_schema.h"
#include "tests/apiserver/field_errors.h"
#include "tests/apiserver/object_validation.h"

namespace dljob::apiserver {
namespace {

ResourceType TypeFromChart(const std::string& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  Result<Json> crd = YamlToJson(text.str().substr(text.str().find("apiVersion:")));
  EXPECT_TRUE(crd.ok()) << crd.status().message();
  Result<ResourceType> type = TypeFromCrd(*crd);
  EXPECT_TRUE(type.ok()) << type.status().message();
  EXPECT_TRUE(type->schema) << file << " has no openAPIV3Schema";
  return *type;
}

ResourceType Builtin(const std::string& plural) {
  for (const ResourceType& t : BuiltinTypes()) {
    if (t.plural == plural) return t;
  }
  ADD_FAILURE() << "no built-in type " << plural;
  return {};
}

std::vector<std::string> Fields(const FieldErrors& errors) {
  std::vector<std::string> out;
  for (const FieldError& e : errors) out.push_back(e.field);
  return out;
}

TEST(NameRulesTest, TableOfNames) {
  struct Case {
    std::string name;
    bool label, subdomain, dns1035;
  };
  std::vector<Case> cases = {
      {"mnist", true, true, true},
      {"mnist-worker-0", true, true, true},
      {"1abc", true, true, false},  // a DNS-1035 label starts with a letter
      {"1abc-worker", true, true, false},
      {"a.b", false, true, false},
      {"A", false, false, false},
      {"-a", false, false, false},
      {"a-", false, false, false},
      {"a_b", false, false, false},
      {"", false, false, false},
      {std::string(63, 'a'), true, true, true},
      {std::string(64, 'a'), false, true, false},
      // The real rule limits a subdomain's length, not its labels'.
      {std::string(253, 'a'), false, true, false},
      {std::string(254, 'a'), false, false, false},
      {"a." + std::string(63, 'b') + "." + std::string(63, 'c'), false, true, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Dns1123Label(c.name).empty(), c.label) << c.name;
    EXPECT_EQ(Dns1123Subdomain(c.name).empty(), c.subdomain) << c.name;
    EXPECT_EQ(Dns1035Label(c.name).empty(), c.dns1035) << c.name;
  }
  EXPECT_EQ(Dns1123Label(std::string(64, 'a'))[0], "must be no more than 63 characters");
}

TEST(NameRulesTest, EveryByteInALabelValue) {
  for (int c = 0; c < 256; ++c) {
    std::string value = "a" + std::string(1, static_cast<char>(c)) + "z";
    bool allowed = std::isalnum(c) || c == '-' || c == '_' || c == '.';
    EXPECT_EQ(LabelValue(value).empty(), allowed) << c;
  }
  EXPECT_TRUE(LabelValue("").empty());
  EXPECT_TRUE(LabelValue(std::string(63, 'x')).empty());
  EXPECT_EQ(LabelValue(std::string(64, 'x')),
            std::vector<std::string>{"must be no more than 63 characters"});
  EXPECT_FALSE(LabelValue("-x").empty());
  EXPECT_TRUE(QualifiedName("dljob.io/job-name").empty());
  EXPECT_FALSE(QualifiedName("dljob.io/").empty());
  EXPECT_FALSE(QualifiedName("/x").empty());
  EXPECT_FALSE(QualifiedName("a/b/c").empty());
  EXPECT_FALSE(QualifiedName("Dljob.IO/x").empty());  // the prefix is a lowercase subdomain
}

TEST(ObjectValidationTest, AServiceNamedLikeAJobStartingWithADigitIsRefusedAsTheRealServerDoes) {
  Json service = {{"metadata", {{"name", "1abc-worker"}}},
                  {"spec", {{"clusterIP", "None"}, {"selector", {{"job", "1abc"}}}}}};
  FieldErrors errors = ValidateObject(Builtin("services"), service, nullptr);
  ASSERT_EQ(errors.size(), 1u);
  InvalidStatus status = MakeInvalid("Service", "", "1abc-worker", errors);
  EXPECT_EQ(status.error.http, 422);
  EXPECT_EQ(status.error.reason, "Invalid");
  EXPECT_EQ(status.error.message,
            "Service \"1abc-worker\" is invalid: metadata.name: Invalid value: \"1abc-worker\": a "
            "DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
            "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
            "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')");
  EXPECT_EQ(status.details["causes"][0]["field"], "metadata.name");
  EXPECT_EQ(status.details["causes"][0]["reason"], "FieldValueInvalid");
  EXPECT_EQ(status.details["kind"], "Service");
  // The same name is fine for a pod (a DNS-1123 subdomain).
  Json pod = {{"metadata", {{"name", "1abc-worker-0"}}},
              {"spec", {{"containers", {{{"name", "main"}, {"image", "x"}}}}}}};
  EXPECT_TRUE(ValidateObject(Builtin("pods"), pod, nullptr).empty());
}

TEST(ObjectValidationTest, PodRules) {
  Json pod = {
      {"metadata", {{"name", "p"}, {"labels", {{"job", std::string(64, 'j')}, {"bad key!", "v"}}}}},
      {"spec",
       {{"hostname", "Worker_0"},
        {"subdomain", std::string(64, 's')},
        {"restartPolicy", "Sometimes"},
        {"containers",
         {{{"name", "main"},
           {"image", ""},
           {"env", {{{"name", "1X"}}}},
           {"volumeMounts", {{{"name", "ssh"}, {"mountPath", "/root/.ssh"}}}}},
          {{"name", "main"}, {"image", "x"}, {"ports", {{{"containerPort", 0}}}}}}}}}};
  FieldErrors errors = ValidateObject(Builtin("pods"), pod, nullptr);
  std::vector<std::string> fields = Fields(errors);
  for (const char* want :
       {"metadata.labels", "spec.hostname", "spec.subdomain", "spec.restartPolicy",
        "spec.containers[0].image", "spec.containers[0].env[0].name",
        "spec.containers[0].volumeMounts[0].name", "spec.containers[1].name",
        "spec.containers[1].ports[0].containerPort"}) {
    EXPECT_NE(std::find(fields.begin(), fields.end(), want), fields.end()) << want;
  }
  InvalidStatus status = MakeInvalid("Pod", "", "p", errors);
  EXPECT_EQ(status.error.message.rfind("Pod \"p\" is invalid: [", 0), 0u) << status.error.message;
  EXPECT_EQ(status.details["causes"].size(), errors.size());

  Json empty = {{"metadata", {{"name", "p"}}}, {"spec", Json::object()}};
  EXPECT_EQ(Fields(ValidateObject(Builtin("pods"), empty, nullptr)),
            std::vector<std::string>{"spec.containers"});

  Json old = {{"metadata", {{"name", "p"}}},
              {"spec", {{"containers", {{{"name", "main"}, {"image", "x"}}}}}}};
  Json new_image = old;
  new_image["spec"]["containers"][0]["image"] = "y";
  EXPECT_TRUE(ValidateObject(Builtin("pods"), new_image, &old).empty());
  Json new_command = old;
  new_command["spec"]["containers"][0]["command"] = {"sh"};
  EXPECT_EQ(Fields(ValidateObject(Builtin("pods"), new_command, &old)),
            std::vector<std::string>{"spec"});
}

TEST(ObjectValidationTest, MetadataUnknownFieldsAndOwnerReferences) {
  Json object = {{"metadata",
                  {{"name", "n"},
                   {"nmae", "typo"},
                   {"ownerReferences", {{{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", "x"}}}}}}};
  EXPECT_EQ(PruneUnknownMetadata(object), std::vector<std::string>{"metadata.nmae"});
  EXPECT_FALSE(object["metadata"].contains("nmae"));
  EXPECT_EQ(Fields(ValidateObject(Builtin("configmaps"), object, nullptr)),
            std::vector<std::string>{"metadata.ownerReferences.uid"});
  Json bad_keys = {{"metadata", {{"name", "c"}}}, {"data", {{"ok.key", "v"}, {"no/slash", "v"}}}};
  EXPECT_EQ(Fields(ValidateObject(Builtin("configmaps"), bad_keys, nullptr)),
            std::vector<std::string>{"data[no/slash]"});
}

Json Job(Json spec) {
  return {{"apiVersion", "dljob.io/v1alpha1"},
          {"kind", "DLJob"},
          {"metadata", {{"name", "mnist"}, {"namespace", "team-a"}}},
          {"spec", std::move(spec)}};
}

Json GoodSpec() {
  return {{"image", "dljob/trainer:cpu"}, {"command", {"dljob-train"}}, {"gpus", 2}};
}

TEST(CrdSchemaTest, TheChartsDLJobSchemaPrunesAndValidates) {
  ResourceType type = TypeFromChart("charts/dljob/crds/dljob.io_dljobs.yaml");
  Json job = Job(GoodSpec());
  job["spec"]["gpuz"] = 3;
  job["spec"]["data"] = {{{"name", "d"}, {"source", "nas://s/x"}, {"mountPath", "/d"}, {"x", 1}}};
  job["status"] = {{"phase", "Running"}, {"made_up", true}};
  std::vector<std::string> pruned = PruneUnknownFields(*type.schema, job);
  EXPECT_EQ(pruned, (std::vector<std::string>{"spec.data[0].x", "spec.gpuz", "status.made_up"}));
  EXPECT_FALSE(job["spec"].contains("gpuz"));
  EXPECT_EQ(job["status"], Json({{"phase", "Running"}}));
  EXPECT_TRUE(ValidateAgainstSchema(*type.schema, job).empty());
  // nodeSelector is a map (additionalProperties): its keys are not unknown fields.
  Json selected = Job(GoodSpec());
  selected["spec"]["scheduling"] = {{"nodeSelector", {{"gpu", "a100"}}}};
  EXPECT_TRUE(PruneUnknownFields(*type.schema, selected).empty());

  Json bad = Job({{"image", 7}, {"command", {"x"}}, {"gpus", -3}});
  bad["spec"]["data"] = {{{"name", "d"}, {"cache", {{"medium", "Floppy"}}}}};
  FieldErrors errors = ValidateAgainstSchema(*type.schema, bad);
  std::vector<std::string> messages;
  for (const FieldError& e : errors) messages.push_back(e.ToString());
  EXPECT_NE(std::find(messages.begin(), messages.end(),
                      "spec.gpus: Invalid value: -3: spec.gpus in body should be greater than or "
                      "equal to 1"),
            messages.end());
  EXPECT_NE(std::find(messages.begin(), messages.end(),
                      "spec.image: Invalid value: \"integer\": spec.image in body must be of type "
                      "string: \"integer\""),
            messages.end());
  EXPECT_NE(std::find(messages.begin(), messages.end(),
                      "spec.data[0].cache.medium: Unsupported value: \"Floppy\": supported "
                      "values: \"LocalSSD\""),
            messages.end());
  Json missing = Job({{"gpus", 1}});
  EXPECT_EQ(Fields(ValidateAgainstSchema(*type.schema, missing)),
            (std::vector<std::string>{"spec.image", "spec.command"}));

  // metadata.name, the one part of metadata a CRD restricts: a job named 1abc would get a
  // Service 1abc-worker, which no server accepts, so the CRD refuses the name itself.
  Json digit = Job(GoodSpec());
  digit["metadata"]["name"] = "1abc";
  errors = ValidateAgainstSchema(*type.schema, digit);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].ToString(),
            "metadata.name: Invalid value: \"1abc\": metadata.name in body should match "
            "'^[a-z]([-a-z0-9]*[a-z0-9])?$'");
  Json longest = Job(GoodSpec());
  longest["metadata"]["name"] = std::string(54, 'a');
  EXPECT_TRUE(ValidateAgainstSchema(*type.schema, longest).empty());
  longest["metadata"]["name"] = std::string(55, 'a');
  EXPECT_EQ(Fields(ValidateAgainstSchema(*type.schema, longest)),
            std::vector<std::string>{"metadata.name"});
}

TEST(CrdSchemaTest, PreserveUnknownFieldsAndNullable) {
  Json schema = {{"type", "object"},
                 {"properties",
                  {{"free", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}},
                   {"maybe", {{"type", "string"}, {"nullable", true}}},
                   {"never", {{"type", "string"}}},
                   {"port", {{"x-kubernetes-int-or-string", true}}}}}};
  Json object = {
      {"free", {{"a", {{"b", 1}}}}}, {"maybe", nullptr}, {"never", nullptr}, {"port", "http"}};
  EXPECT_TRUE(PruneUnknownFields(schema, object).empty());
  EXPECT_EQ(Fields(ValidateAgainstSchema(schema, object)), std::vector<std::string>{"never"});
  object["port"] = true;
  EXPECT_EQ(ValidateAgainstSchema(schema, object).size(), 2u);
}

TEST(AdmissionTest, FieldValidationModes) {
  ResourceType type = TypeFromChart("charts/dljob/crds/dljob.io_dljobs.yaml");
  auto admit = [&](FieldValidation mode, bool patch, Json object, AdmissionReport* report) {
    return Admit(type, mode, patch, nullptr, object, report);
  };
  Json job = Job(GoodSpec());
  job["spec"]["gpuz"] = 3;
  AdmissionReport strict;
  std::optional<ApiError> refused = admit(FieldValidation::kStrict, false, job, &strict);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->http, 400);
  EXPECT_EQ(refused->message,
            "DLJob in version \"v1alpha1\" cannot be handled as a DLJob: strict decoding error: "
            "unknown field \"spec.gpuz\"");
  refused = admit(FieldValidation::kStrict, true, job, &strict);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->message, "strict decoding error: unknown field \"spec.gpuz\"");
  AdmissionReport warn;
  EXPECT_FALSE(admit(FieldValidation::kWarn, false, job, &warn));
  EXPECT_EQ(warn.warnings, std::vector<std::string>{"unknown field \"spec.gpuz\""});
  AdmissionReport ignore;
  EXPECT_FALSE(admit(FieldValidation::kIgnore, false, job, &ignore));
  EXPECT_TRUE(ignore.warnings.empty());

  AdmissionReport invalid;
  refused = admit(FieldValidation::kStrict, false,
                  Job({{"image", "i"}, {"command", {"c"}}, {"gpus", "two"}}), &invalid);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->http, 422);
  EXPECT_EQ(refused->message,
            "DLJob.dljob.io \"mnist\" is invalid: spec.gpus: Invalid value: \"string\": spec.gpus "
            "in body must be of type integer: \"string\"");
  EXPECT_EQ(invalid.details["group"], "dljob.io");
  EXPECT_EQ(invalid.details["causes"][0]["field"], "spec.gpus");

  QueryParams query = {{"fieldValidation", "Loud"}};
  EXPECT_FALSE(ParseFieldValidation(query).ok());
  EXPECT_EQ(*ParseFieldValidation({}), FieldValidation::kWarn);
}

}  // namespace
}  // namespace dljob::apiserver
