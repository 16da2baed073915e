// The DLJob CRD (crd.h): the schema walks the field tables of dljob_fields.h.
#include "jobs/crd.h"

#include <string>

#include "jobs/dljob_fields.h"

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

// The type's schema, then what the row adds: description, enum, minimum, and for a struct the
// names of its required fields.
template <typename S, typename M>
ojson FieldSchema(const Field<S, M>& f) {
  ojson s = TypeSchema<M>();
  if (f.info.description) s["description"] = f.info.description;
  for (std::string_view value : f.info.allowed) s["enum"].push_back(std::string(value));
  if (f.info.minimum) s["minimum"] = *f.info.minimum;
  using Inner = typename StructOf<M>::type;
  if constexpr (ApiStruct<Inner>) {
    ForEachField<Inner>([&](const auto& field) {
      if (field.info.required) s["required"].push_back(std::string(field.name));
    });
  }
  return s;
}

ojson PrinterColumn(const char* name, const char* type, const char* path) {
  return {{"name", name}, {"type", type}, {"jsonPath", path}};
}

}  // namespace

nlohmann::ordered_json DLJobCrd() {
  ojson schema = TypeOnly("object");
  schema["description"] = "A distributed deep-learning training job (dljob.io).";
  schema["properties"] = StructSchema<DLJob>()["properties"];
  ojson columns = ojson::array({PrinterColumn("Status", "string", ".status.phase"),
                                PrinterColumn("GPUs", "integer", ".spec.gpus"),
                                PrinterColumn("Img/s", "number", ".status.throughput.imagesPerSec"),
                                PrinterColumn("Restarts", "integer", ".status.restarts"),
                                PrinterColumn("Age", "date", ".metadata.creationTimestamp")});
  ojson version = {{"name", "v1alpha1"},
                   {"served", true},
                   {"storage", true},
                   {"subresources", {{"status", ojson::object()}}},
                   {"additionalPrinterColumns", columns},
                   {"schema", {{"openAPIV3Schema", schema}}}};
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", {{"name", std::string(kPlural) + "." + kApiGroup}}},
          {"spec",
           {{"group", kApiGroup},
            {"scope", "Namespaced"},
            {"names",
             {{"kind", kKind},
              {"listKind", std::string(kKind) + "List"},
              {"plural", kPlural},
              {"singular", "dljob"},
              {"shortNames", {kShortName}}}},
            {"versions", ojson::array({version})}}}};
}

}  // namespace dljob
