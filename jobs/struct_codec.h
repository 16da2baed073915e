// Internal to jobs/: decoding and encoding any API struct through its field table
// (field_table.h), shared by the DLJob codec (codec.h) and the DLQueue codec (dlqueue_codec.h).
//
// DecodeStruct reads a JSON object into a struct: each field by its member's type, every key not
// in the table reported as an unknown field (or, for a struct that keeps them, stored in its kRest
// member). EncodeStruct writes a struct as an object in table order, leaving out what the member's
// type says is unset: an empty string, list or map, an unset optional, an unset phase, a struct
// member whose every field is left out. An optional that is set is always written (even "" or
// {}), and so is a plain integer, so decoding gives each back.
//
// Pure templates; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include "jobs/dljob_types.h"
#include "jobs/field_table.h"
#include "jobs/json_reader.h"

namespace dljob::struct_codec {

// status.phase: one of AllPhaseNames(), else an error naming them (codec_decode.cc).
void DecodePhase(JsonReader& r, const nlohmann::json& obj, std::string_view key,
                 const std::string& parent, JobPhase& phase);

// Decodes an object into `out`. False, after a type error, when `v` is not an object.
template <ApiStruct S>
bool DecodeStruct(JsonReader& r, const nlohmann::json& v, const std::string& path, S& out);

template <typename S, typename M>
void DecodeField(JsonReader& r, const nlohmann::json& obj, const std::string& parent,
                 const Field<S, M>& f, S& s) {
  M& out = s.*f.member;
  if constexpr (ApiStruct<M>) {
    if (const nlohmann::json* v = JsonReader::Get(obj, f.name)) {
      DecodeStruct(r, *v, JoinField(parent, f.name), out);
    }
  } else if constexpr (kIsOptionalStruct<M>) {
    if (const nlohmann::json* v = JsonReader::Get(obj, f.name)) {
      out.emplace();
      if (!DecodeStruct(r, *v, JoinField(parent, f.name), *out)) out.reset();
    }
  } else if constexpr (kIsStructList<M>) {
    r.ReadList(obj, f.name, parent, out,
               [&](const nlohmann::json& item, const std::string& path, auto& x) {
                 DecodeStruct(r, item, path, x);
               });
  } else if constexpr (std::is_same_v<M, JobPhase>) {
    DecodePhase(r, obj, f.name, parent, out);
  } else if constexpr (std::is_same_v<M, std::optional<std::string>>) {
    if (f.info.quantity) {
      r.ReadQuantity(obj, f.name, parent, out);
    } else {
      r.Read(obj, f.name, parent, out);
    }
  } else {
    r.Read(obj, f.name, parent, out);  // scalars, lists of strings, string maps
  }
}

template <ApiStruct S>
bool DecodeStruct(JsonReader& r, const nlohmann::json& v, const std::string& path, S& out) {
  if constexpr (KeepsUnknownKeys<S>) {
    if (!v.is_object()) {
      r.TypeError(path, "an object", v);
      return false;
    }
    // Whatever else the API server keeps (managedFields, finalizers, ...) round-trips verbatim.
    for (const auto& [key, child] : v.items()) {
      if (!IsFieldName<S>(key)) (out.*FieldTable<S>::kRest)[key] = child;
    }
  } else if (!r.Object(v, path, FieldNames<S>())) {
    return false;
  }
  ForEachField<S>([&](const auto& f) { DecodeField(r, v, path, f, out); });
  return true;
}

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

}  // namespace dljob::struct_codec
