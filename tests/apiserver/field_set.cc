// See field_set.h.
#include "tests/apiserver/field_set.h"

#include <algorithm>

#include "tests/apiserver/field_errors.h"

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

// structured-merge-diff's value.ToString: strings quoted as Go's %q, numbers and the rest as JSON.
std::string ValueText(const Json& v) {
  return v.is_string() ? GoQuote(v.get<std::string>()) : v.dump();
}

bool FromTree(const Json& node, FieldPath& path, std::set<FieldPath>& out) {
  if (!node.is_object()) return false;
  if (node.empty() && !path.empty()) {
    out.insert(path);
    return true;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it.key() == ".") {
      if (!it.value().is_object() || path.empty()) return false;
      out.insert(path);
      continue;
    }
    path.push_back(it.key());
    bool ok = FromTree(it.value(), path, out);
    path.pop_back();
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string FieldElement(const std::string& name) { return "f:" + name; }
std::string KeyElement(const Json& key_fields) { return "k:" + key_fields.dump(); }
std::string ValueElement(const Json& value) { return "v:" + value.dump(); }
bool IsFieldElement(const std::string& element) { return element.rfind("f:", 0) == 0; }

std::string PathString(const FieldPath& path) {
  std::string out;
  for (const std::string& e : path) {
    std::string body = e.size() > 2 ? e.substr(2) : "";
    if (IsFieldElement(e)) {
      out += "." + body;
    } else if (e.rfind("k:", 0) == 0) {
      Json keys = Json::parse(body, nullptr, false);
      std::string parts;
      if (keys.is_object()) {
        for (auto it = keys.begin(); it != keys.end(); ++it) {
          parts += (parts.empty() ? "" : ",") + it.key() + "=" + ValueText(it.value());
        }
      }
      out += "[" + parts + "]";
    } else if (e.rfind("v:", 0) == 0) {
      Json v = Json::parse(body, nullptr, false);
      out += "[=" + (v.is_discarded() ? body : ValueText(v)) + "]";
    } else {
      out += "[" + body + "]";  // i:<index>
    }
  }
  return out;
}

bool FieldSet::HasBelow(const FieldPath& prefix) const {
  auto it = members_.upper_bound(prefix);
  return it != members_.end() && it->size() > prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), it->begin());
}

FieldSet FieldSet::Union(const FieldSet& other) const {
  FieldSet out = *this;
  out.members_.insert(other.members_.begin(), other.members_.end());
  return out;
}

FieldSet FieldSet::Difference(const FieldSet& other) const {
  return Filter([&](const FieldPath& p) { return !other.Has(p); });
}

FieldSet FieldSet::Intersection(const FieldSet& other) const {
  return Filter([&](const FieldPath& p) { return other.Has(p); });
}

FieldSet FieldSet::Filter(const std::function<bool(const FieldPath&)>& keep) const {
  FieldSet out;
  for (const FieldPath& p : members_) {
    if (keep(p)) out.members_.insert(p);
  }
  return out;
}

FieldSet FieldSet::WithFieldPrefixes() const {
  FieldSet out = *this;
  for (const FieldPath& p : members_) {
    for (size_t n = 1; n < p.size(); ++n) {
      if (IsFieldElement(p[n - 1])) out.members_.insert(FieldPath(p.begin(), p.begin() + n));
    }
  }
  return out;
}

Json FieldSet::ToFieldsV1() const {
  Json root = Json::object();
  for (const FieldPath& p : members_) {
    Json* node = &root;
    for (const std::string& e : p) {
      Json& child = (*node)[e];
      if (child.is_null()) child = Json::object();
      node = &child;
    }
    (*node)["."] = Json::object();
  }
  // A member with nothing below it is written {}, not {".": {}}.
  std::function<void(Json&)> tidy = [&](Json& node) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it.key() != ".") tidy(it.value());
    }
    if (node.size() == 1 && node.contains(".")) node = Json::object();
  };
  for (auto it = root.begin(); it != root.end(); ++it) tidy(it.value());
  return root;
}

std::optional<FieldSet> FieldSet::FromFieldsV1(const Json& fields) {
  FieldSet out;
  FieldPath path;
  if (!FromTree(fields, path, out.members_)) return std::nullopt;
  return out;
}

}  // namespace dljob::apiserver
