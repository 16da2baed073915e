// Encoding a DLJob (see codec.h), generic over the field tables (dljob_fields.h); keys in table
// order. What is left out is decided by the member's type: an empty string, list or map, an
// unset optional, an unset phase, a struct member whose every field is left out. An optional
// that is set is always written (even "" or {}), and so is a plain integer, so decoding gives
// each back.
#include "jobs/codec.h"
#include "jobs/dljob_fields.h"
#include "jobs/yaml_tree.h"

namespace dljob {
namespace {

using ojson = nlohmann::ordered_json;

template <ApiStruct S>
ojson EncodeStruct(const S& s);

// A value that is written even when empty: an optional's value, a list item.
template <typename M>
ojson EncodePresent(const M& v) {
  if constexpr (ApiStruct<M>) {
    return EncodeStruct(v);
  } else if constexpr (std::is_same_v<M, std::string> || std::is_same_v<M, int64_t> ||
                       std::is_same_v<M, double> || std::is_same_v<M, bool>) {
    return v;
  } else {
    static_assert(kUnsupportedFieldType<M>, "add the type to EncodePresent");
  }
}

// The value of a field as written, or nullopt when it is left out.
template <typename M>
std::optional<ojson> EncodeValue(const M& v) {
  if constexpr (ApiStruct<M>) {
    ojson o = EncodeStruct(v);
    if (o.empty()) return std::nullopt;
    return o;
  } else if constexpr (kIsOptional<M>) {
    if (!v) return std::nullopt;
    return EncodePresent(*v);
  } else if constexpr (kIsVector<M>) {
    if (v.empty()) return std::nullopt;
    ojson list = ojson::array();
    for (const auto& item : v) list.push_back(EncodePresent(item));
    return list;
  } else if constexpr (kIsStringMap<M>) {
    if (v.empty()) return std::nullopt;
    return ojson(v);
  } else if constexpr (std::is_same_v<M, std::string>) {
    if (v.empty()) return std::nullopt;
    return v;
  } else if constexpr (std::is_same_v<M, JobPhase>) {
    if (v == JobPhase::kUnset) return std::nullopt;
    return PhaseName(v);
  } else {
    return EncodePresent(v);
  }
}

template <ApiStruct S>
ojson EncodeStruct(const S& s) {
  ojson o = ojson::object();
  ForEachField<S>([&](const auto& f) {
    if (std::optional<ojson> v = EncodeValue(s.*f.member)) o[std::string(f.name)] = *std::move(v);
  });
  if constexpr (KeepsUnknownKeys<S>) {
    const nlohmann::json& rest = s.*FieldTable<S>::kRest;
    if (rest.is_object()) {
      for (const auto& [key, value] : rest.items()) {
        // Names the decoder reads itself never come from the rest; a hand-built one is ignored.
        if (!IsFieldName<S>(key)) o[key] = value;
      }
    }
  }
  return o;
}

}  // namespace

nlohmann::json EncodeThroughput(const Throughput& throughput) {
  return nlohmann::json(EncodeStruct(throughput));
}

nlohmann::json EncodeTree(const DLJob& job) { return nlohmann::json(EncodeStruct(job)); }

std::string EncodeJson(const DLJob& job, int indent) {
  return EncodeStruct(job).dump(indent, ' ', /*ensure_ascii=*/false,
                                nlohmann::json::error_handler_t::replace);
}

std::string EncodeYaml(const DLJob& job) { return EmitYaml(EncodeStruct(job)); }

}  // namespace dljob
