// DecodeTree: JSON tree -> DLJob, generic over the field tables (dljob_fields.h): each field is
// read by its member's type, each object's unknown keys are reported (see codec.h).
#include <string>

#include "jobs/codec.h"
#include "jobs/dljob_fields.h"
#include "jobs/json_reader.h"

namespace dljob {
namespace {

using json = nlohmann::json;

void DecodePhase(JsonReader& r, const json& obj, std::string_view key, const std::string& parent,
                 JobPhase& phase) {
  std::string name;
  r.Read(obj, key, parent, name);
  if (std::optional<JobPhase> p = ParsePhase(name)) {
    phase = *p;
    return;
  }
  r.Error(JoinField(parent, key),
          "unknown phase " + Quote(name) + " (expected " + JoinOr(AllPhaseNames()) + ")");
}

// Decodes an object into `out`: every key not in S's table is an unknown-field error (or, for a
// struct that keeps them, goes into its kRest member). False, after a type error, when `v` is
// not an object.
template <ApiStruct S>
bool DecodeStruct(JsonReader& r, const json& v, const std::string& path, S& out);

template <typename S, typename M>
void DecodeField(JsonReader& r, const json& obj, const std::string& parent, const Field<S, M>& f,
                 S& s) {
  M& out = s.*f.member;
  if constexpr (ApiStruct<M>) {
    if (const json* v = JsonReader::Get(obj, f.name)) {
      DecodeStruct(r, *v, JoinField(parent, f.name), out);
    }
  } else if constexpr (kIsOptionalStruct<M>) {
    if (const json* v = JsonReader::Get(obj, f.name)) {
      out.emplace();
      if (!DecodeStruct(r, *v, JoinField(parent, f.name), *out)) out.reset();
    }
  } else if constexpr (kIsStructList<M>) {
    r.ReadList(obj, f.name, parent, out, [&](const json& item, const std::string& path, auto& x) {
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
bool DecodeStruct(JsonReader& r, const json& v, const std::string& path, S& out) {
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

}  // namespace

DecodeResult DecodeTree(const json& tree) {
  DecodeResult result;
  JsonReader r(result.errors);
  if (tree.is_object()) {
    // A document without them must not read as if it had the defaults.
    result.job.api_version.clear();
    result.job.kind.clear();
  }
  if (!DecodeStruct(r, tree, "", result.job)) {
    result.errors.back().reason = "a DLJob " + result.errors.back().reason;
  }
  return result;
}

}  // namespace dljob
