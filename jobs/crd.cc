// The DLJob and DLQueue CRDs (crd.h): the schemas walk the field tables of dljob_fields.h and
// dlqueue_fields.h.
#include "jobs/crd.h"

#include <string>

#include "jobs/child_names.h"
#include "jobs/dljob_fields.h"
#include "jobs/dlqueue_fields.h"
#include "jobs/generated_name.h"

namespace dljob {
namespace {

using ojson = nlohmann::ordered_json;

ojson TypeOnly(const char* type) {
  ojson s = ojson::object();
  s["type"] = type;
  return s;
}

template <typename M>
ojson TypeSchema();

template <typename S, typename M>
ojson FieldSchema(const Field<S, M>& f);

template <ApiStruct S>
ojson StructSchema() {
  ojson s = TypeOnly("object");
  if constexpr (!KeepsUnknownKeys<S>) {
    ojson properties = ojson::object();
    ForEachField<S>([&](const auto& f) { properties[std::string(f.name)] = FieldSchema(f); });
    s["properties"] = std::move(properties);
  }
  return s;
}

// The schema of a value of C++ type M.
template <typename M>
ojson TypeSchema() {
  if constexpr (ApiStruct<M>) {
    return StructSchema<M>();
  } else if constexpr (kIsOptional<M>) {
    return TypeSchema<typename M::value_type>();
  } else if constexpr (kIsVector<M>) {
    ojson s = TypeOnly("array");
    s["items"] = TypeSchema<typename M::value_type>();
    return s;
  } else if constexpr (kIsStringMap<M>) {
    ojson s = TypeOnly("object");
    s["additionalProperties"] = TypeOnly("string");
    return s;
  } else if constexpr (std::is_same_v<M, std::string>) {
    return TypeOnly("string");
  } else if constexpr (std::is_same_v<M, int64_t>) {
    ojson s = TypeOnly("integer");
    s["format"] = "int64";
    return s;
  } else if constexpr (std::is_same_v<M, double>) {
    return TypeOnly("number");
  } else if constexpr (std::is_same_v<M, bool>) {
    return TypeOnly("boolean");
  } else if constexpr (std::is_same_v<M, JobPhase>) {
    ojson s = TypeOnly("string");
    for (std::string_view name : AllPhaseNames()) s["enum"].push_back(std::string(name));
    return s;
  } else {
    static_assert(kUnsupportedFieldType<M>, "add the type to TypeSchema");
  }
}

template <typename M>
struct StructOf {
  using type = M;
};
template <typename M>
struct StructOf<std::optional<M>> {
  using type = M;
};

// The names of S's required fields, in `schema` (S's object schema).
template <ApiStruct S>
void AddRequired(ojson& schema) {
  ForEachField<S>([&](const auto& field) {
    if (field.info.required) schema["required"].push_back(std::string(field.name));
  });
}

// The type's schema, then what the row adds: description, enum, minimum, and for a struct (or
// each struct of a list) the names of its required fields.
template <typename S, typename M>
ojson FieldSchema(const Field<S, M>& f) {
  ojson s = TypeSchema<M>();
  if (f.info.description) s["description"] = f.info.description;
  for (std::string_view value : f.info.allowed) s["enum"].push_back(std::string(value));
  if (f.info.minimum) s["minimum"] = *f.info.minimum;
  using Inner = typename StructOf<M>::type;
  if constexpr (ApiStruct<Inner>) {
    AddRequired<Inner>(s);
  } else if constexpr (kIsStructList<M>) {
    AddRequired<typename M::value_type>(s["items"]);
  }
  return s;
}

ojson PrinterColumn(const char* name, const char* type, const char* path,
                    const char* description = nullptr) {
  ojson column = {{"name", name}, {"type", type}, {"jsonPath", path}};
  if (description) column["description"] = description;
  return column;
}

struct CrdNames {
  const char* kind;
  const char* plural;
  const char* singular;
  const char* short_name;
  const char* scope;  // Namespaced | Cluster
};

// The CRD of one kind: version v1alpha1 (served, stored) with the status subresource, `columns`
// for kubectl get, and the schema of S (the whole object) from its field tables.
template <ApiStruct S>
ojson Crd(const CrdNames& names, const char* description, ojson columns) {
  ojson schema = TypeOnly("object");
  schema["description"] = description;
  schema["properties"] = StructSchema<S>()["properties"];
  ojson version = {{"name", "v1alpha1"},
                   {"served", true},
                   {"storage", true},
                   {"subresources", {{"status", ojson::object()}}},
                   {"additionalPrinterColumns", std::move(columns)},
                   {"schema", {{"openAPIV3Schema", schema}}}};
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", {{"name", std::string(names.plural) + "." + kApiGroup}}},
          {"spec",
           {{"group", kApiGroup},
            {"scope", names.scope},
            {"names",
             {{"kind", names.kind},
              {"listKind", std::string(names.kind) + "List"},
              {"plural", names.plural},
              {"singular", names.singular},
              {"shortNames", {names.short_name}}}},
            {"versions", ojson::array({version})}}}};
}

}  // namespace

nlohmann::ordered_json DLJobCrd() {
  ojson columns =
      ojson::array({PrinterColumn("Status", "string", ".status.phase"),
                    PrinterColumn("GPUs", "integer", ".spec.gpus"),
                    PrinterColumn("Img/s", "integer", ".status.throughput.imagesPerSec"),
                    PrinterColumn("Restarts", "integer", ".status.restarts"),
                    PrinterColumn("Age", "date", ".metadata.creationTimestamp")});
  ojson crd =
      Crd<DLJob>({kKind, kPlural, "dljob", kShortName, "Namespaced"},
                 "A distributed deep-learning training job (dljob.io).", std::move(columns));
  // The API server checks a custom resource's metadata.name against its CRD (the one part of
  // metadata a CRD may restrict), so `kubectl apply` refuses a job whose children could not be
  // named at once. The limit is the one for a single worker (child_names.h); a job with more
  // workers is held to its tighter limit by validation (the operator fails it as InvalidSpec).
  ojson name = TypeOnly("string");
  name["description"] = "A DNS-1035 label short enough that every child's name is valid: at most " +
                        std::to_string(MaxJobNameLength(1)) + " characters for up to 10 workers, " +
                        std::to_string(MaxJobNameLength(100)) + " up to 100.";
  name["maxLength"] = MaxJobNameLength(1);
  name["pattern"] = "^[a-z]([-a-z0-9]*[a-z0-9])?$";
  // generateName likewise: the prefix of a name the server completes with 5 more characters.
  ojson generate_name = TypeOnly("string");
  generate_name["description"] =
      "Used when name is not given: the prefix of the name the server chooses, which adds " +
      std::to_string(kGeneratedSuffixLength) + " random characters; at most " +
      std::to_string(MaxJobNameLength(1) - kGeneratedSuffixLength) + " characters for up to 10 " +
      "workers, " + std::to_string(MaxJobNameLength(100) - kGeneratedSuffixLength) + " up to 100.";
  generate_name["maxLength"] = MaxJobNameLength(1) - kGeneratedSuffixLength;
  generate_name["pattern"] = "^[a-z][-a-z0-9]*$";
  ojson metadata = TypeOnly("object");
  metadata["properties"] = {{"name", std::move(name)}, {"generateName", std::move(generate_name)}};
  crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["metadata"] =
      std::move(metadata);
  return crd;
}

// kubectl prints one value per column (a JSON path's first match), so the quota columns show the
// first quota: the whole of it for the usual one-product queue.
nlohmann::ordered_json DLQueueCrd() {
  ojson columns = ojson::array(
      {PrinterColumn("Cohort", "string", ".spec.cohort",
                     "Queues of one cohort lend each other idle quota (empty: the default)"),
       PrinterColumn("Product", "string", ".spec.quotas[0].gpuProduct",
                     "GPU product of the first quota (empty: any)"),
       PrinterColumn("Nominal", "integer", ".spec.quotas[0].nominal",
                     "Nominal GPUs of the first quota"),
       PrinterColumn("Used", "integer", ".status.used[0].gpus", "GPUs in use (first product)"),
       PrinterColumn("Borrowed", "integer", ".status.borrowed[0].gpus",
                     "GPUs borrowed from other queues of the cohort (first product)"),
       PrinterColumn("Pending", "integer", ".status.pendingJobs"),
       PrinterColumn("Running", "integer", ".status.runningJobs"),
       PrinterColumn("Age", "date", ".metadata.creationTimestamp")});
  return Crd<DLQueue>({kQueueKind, kQueuePlural, "dlqueue", kQueueShortName, "Cluster"},
                      "GPU quota for the DLJobs that name this queue; the queues of one cohort "
                      "borrow each other's idle quota (dljob.io).",
                      std::move(columns));
}

}  // namespace dljob
