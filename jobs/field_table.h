// Internal to jobs/: the field-table mechanism the DLJob API is described with.
//
// Each API struct S has one table, a specialization of FieldTable<S> (the rows are in
// dljob_fields.h): per field its JSON name, its member pointer and a FieldInfo with what the C++
// type cannot say (a CRD description, allowed values, a minimum, whether the CRD requires it,
// whether it is a Kubernetes quantity). The decoder, the encoder, the unknown-field check and the
// CRD schema are generic over these tables, so a new field is one new row. The member pointer's
// type decides how the field is read, written and typed in the schema.
//
// ForEachField fails to compile when S has a member without a row (MemberCount below), so a
// field added to a struct cannot be forgotten by the codec or the CRD.
//
// Tables are constexpr and immutable; everything here is thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

namespace dljob {

// What a field's C++ type does not tell the codec or the CRD. Built by chaining, so a row names
// only what it sets: Info().Describe("Total GPUs.").Minimum(1).Required().
struct FieldInfo {
  const char* description = nullptr;          // CRD description
  std::span<const std::string_view> allowed;  // CRD enum (validation checks the same list)
  std::optional<int64_t> minimum;             // CRD minimum
  bool required = false;  // listed in the CRD's `required` of the enclosing object
  bool quantity = false;  // optional<string> that also accepts a number (8 -> "8")

  constexpr FieldInfo Describe(const char* text) const {
    FieldInfo out = *this;
    out.description = text;
    return out;
  }
  constexpr FieldInfo OneOf(std::span<const std::string_view> values) const {
    FieldInfo out = *this;
    out.allowed = values;
    return out;
  }
  constexpr FieldInfo Minimum(int64_t value) const {
    FieldInfo out = *this;
    out.minimum = value;
    return out;
  }
  constexpr FieldInfo Required() const {
    FieldInfo out = *this;
    out.required = true;
    return out;
  }
  constexpr FieldInfo Quantity() const {
    FieldInfo out = *this;
    out.quantity = true;
    return out;
  }
};
using Info = FieldInfo;

// One row: the JSON name of member `member` of struct S.
template <typename S, typename M>
struct Field {
  using Struct = S;
  using Member = M;
  constexpr Field(std::string_view n, M S::*m, FieldInfo i = FieldInfo())
      : name(n), member(m), info(i) {}
  std::string_view name;
  M S::*member;
  FieldInfo info;
};

// Specialized per API struct with `static constexpr std::tuple kFields` (of Field<S, ...>), in the
// order the encoder writes them. A struct that keeps the keys it does not know (ObjectMeta) also
// has `static constexpr auto kRest`, a pointer to an nlohmann::json member holding them; the CRD
// leaves such an object's schema open ({type: object}), as Kubernetes does for metadata.
template <typename S>
struct FieldTable;

template <typename S>
concept ApiStruct = requires {
  FieldTable<S>::kFields;
};

template <typename S>
concept KeepsUnknownKeys = requires {
  FieldTable<S>::kRest;
};

template <typename T>
inline constexpr bool kIsOptional = false;
template <typename T>
inline constexpr bool kIsOptional<std::optional<T>> = true;

template <typename T>
inline constexpr bool kIsVector = false;
template <typename T>
inline constexpr bool kIsVector<std::vector<T>> = true;

template <typename T>
inline constexpr bool kIsStringMap = std::is_same_v<T, std::map<std::string, std::string>>;

template <typename T>
inline constexpr bool kIsOptionalStruct = false;
template <ApiStruct S>
inline constexpr bool kIsOptionalStruct<std::optional<S>> = true;

template <typename T>
inline constexpr bool kIsStructList = false;
template <ApiStruct S>
inline constexpr bool kIsStructList<std::vector<S>> = true;

// For static_assert in the `else` of an exhaustive `if constexpr` chain over field types.
template <typename T>
inline constexpr bool kUnsupportedFieldType = false;

namespace field_table_internal {

// Converts to anything; only ever used unevaluated, to count an aggregate's members.
struct AnyMember {
  template <typename T>
  operator T&() const&&;  // NOLINT(google-explicit-constructor)
};

// How many members aggregate S has: the most AnyMembers it can be brace-initialized from.
// (Counts direct members; S must have no base classes and no C array members.)
template <typename S, typename... A>
constexpr size_t MemberCount() {
  if constexpr (requires { S{A{}..., AnyMember{}}; }) {
    return MemberCount<S, A..., AnyMember>();
  } else {
    return sizeof...(A);
  }
}

}  // namespace field_table_internal

// Calls f(row) for each row of S's table, in table order.
template <typename S, typename F>
constexpr void ForEachField(F&& f) {
  constexpr size_t kRows = std::tuple_size_v<std::decay_t<decltype(FieldTable<S>::kFields)>>;
  static_assert(field_table_internal::MemberCount<S>() == kRows + (KeepsUnknownKeys<S> ? 1 : 0),
                "every member of an API struct needs a row in its FieldTable (dljob_fields.h)");
  std::apply([&](const auto&... row) { (f(row), ...); }, FieldTable<S>::kFields);
}

// The JSON names of S's fields, in table order (the decoder's known keys).
template <typename S>
const std::vector<std::string_view>& FieldNames() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    ForEachField<S>([&](const auto& row) { out.push_back(row.name); });
    return out;
  }();
  return names;
}

// Whether `key` is the JSON name of one of S's fields.
template <typename S>
bool IsFieldName(std::string_view key) {
  for (std::string_view name : FieldNames<S>()) {
    if (name == key) return true;
  }
  return false;
}

// The JSON name of `member` ("backoffLimit" for &RunPolicy::backoff_limit).
template <typename S, typename M>
constexpr std::string_view FieldName(M S::*member) {
  std::string_view name;
  ForEachField<S>([&](const auto& row) {
    if constexpr (std::is_same_v<typename std::decay_t<decltype(row)>::Member, M>) {
      if (row.member == member) name = row.name;
    }
  });
  return name;
}

}  // namespace dljob
