// The walks over objects that field management is made of (see field_manager.h): an object's
// field set, the comparison of two objects, the merge of a configuration into an object, and the
// removal of fields. Each walk reads the object's shape from a FieldType (field_types.h).
#include <map>
#include <set>

#include "tests/apiserver/field_manager.h"

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

// The path element of each item of a list read by key or as a set; nullopt when the list is one
// value: the schema says atomic, or an item cannot be keyed (no key and no default, an object in
// a set, two items with one key), which the real server refuses and this server tolerates.
std::optional<std::vector<std::string>> ItemElements(const Json& list, const FieldType& type) {
  FieldType::ListKind kind = type.List();
  if (!list.is_array() || kind == FieldType::ListKind::kAtomic) return std::nullopt;
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const Json& item : list) {
    std::string element;
    if (kind == FieldType::ListKind::kSet) {
      if (item.is_object() || item.is_array()) return std::nullopt;
      element = ValueElement(item);
    } else {
      if (!item.is_object()) return std::nullopt;
      Json key = Json::object();
      for (const std::string& k : type.Keys()) {
        Json value = item.contains(k) ? item[k] : type.KeyDefault(k);
        if (value.is_null()) return std::nullopt;
        key[k] = std::move(value);
      }
      element = KeyElement(key);
    }
    if (!seen.insert(element).second) return std::nullopt;
    out.push_back(std::move(element));
  }
  return out;
}

enum class Shape { kLeaf, kObject, kList };

// How a node is walked, given its values on either side (either may be absent).
Shape ShapeOf(const Json* a, const Json* b, const FieldType& type) {
  const Json* v = b ? b : a;
  if (!v) return Shape::kLeaf;
  if (a && b && (a->is_object() != b->is_object() || a->is_array() != b->is_array())) {
    return Shape::kLeaf;
  }
  if (v->is_object()) return type.AtomicMap() ? Shape::kLeaf : Shape::kObject;
  if (!v->is_array()) return Shape::kLeaf;
  if ((a && !ItemElements(*a, type)) || (b && !ItemElements(*b, type))) return Shape::kLeaf;
  return Shape::kList;
}

bool EmptyOrAbsent(const Json* v) {
  return !v || ((v->is_object() || v->is_array()) && v->empty());
}

const Json* Find(const Json* object, const std::string& key) {
  if (!object || !object->is_object()) return nullptr;
  auto it = object->find(key);
  return it == object->end() ? nullptr : &*it;
}

// A list's items by their path elements.
std::map<std::string, const Json*> ByElement(const Json* list,
                                             const std::vector<std::string>& elements) {
  std::map<std::string, const Json*> out;
  for (size_t i = 0; i < elements.size(); ++i) out[elements[i]] = &(*list)[i];
  return out;
}

void AddFields(const Json& v, const FieldType& type, FieldPath& path, FieldSet& out) {
  switch (ShapeOf(nullptr, &v, type)) {
    case Shape::kObject:
      for (auto it = v.begin(); it != v.end(); ++it) {
        path.push_back(FieldElement(it.key()));
        AddFields(it.value(), type.Field(it.key()), path, out);
        if (!type.Declares(it.key())) out.Insert(path);
        path.pop_back();
      }
      return;
    case Shape::kList: {
      std::vector<std::string> elements = *ItemElements(v, type);
      for (size_t i = 0; i < elements.size(); ++i) {
        path.push_back(elements[i]);
        AddFields(v[i], type.Item(), path, out);
        out.Insert(path);
        path.pop_back();
      }
      return;
    }
    case Shape::kLeaf:
      if (!path.empty()) out.Insert(path);
      return;
  }
}

// Calls f(key, value in a or null, value in b or null) for each key of either object once, in
// order (nlohmann's objects are sorted maps). A null side has no keys.
template <class F>
void ForEachKey(const Json* a, const Json* b, F f) {
  static const Json::object_t kNone;
  const Json::object_t& x = a ? a->get_ref<const Json::object_t&>() : kNone;
  const Json::object_t& y = b ? b->get_ref<const Json::object_t&>() : kNone;
  auto i = x.begin(), j = y.begin();
  while (i != x.end() || j != y.end()) {
    if (j == y.end() || (i != x.end() && i->first < j->first)) {
      f(i->first, &i->second, nullptr);
      ++i;
    } else if (i == x.end() || j->first < i->first) {
      f(j->first, nullptr, &j->second);
      ++j;
    } else {
      f(i->first, &i->second, &j->second);
      ++i, ++j;
    }
  }
}

// metadata.managedFields: compared by no walk (no manager owns them).
bool IsManagedFields(const FieldPath& path, const std::string& key) {
  return path.size() == 1 && key == "managedFields" && path[0] == "f:metadata";
}

void CompareAt(const Json* a, const Json* b, const FieldType& type, FieldPath& path,
               Comparison& out) {
  if (a && b && *a == *b) return;  // nothing below changed
  Shape shape = ShapeOf(a, b, type);
  if (shape != Shape::kLeaf && EmptyOrAbsent(a) && EmptyOrAbsent(b)) shape = Shape::kLeaf;
  if (shape == Shape::kLeaf) {
    if (path.empty()) return;
    if (!a) {
      out.added.Insert(path);
    } else if (!b) {
      out.removed.Insert(path);
    } else if (*a != *b) {
      out.modified.Insert(path);
    }
    return;
  }
  if (shape == Shape::kObject) {
    ForEachKey(a, b, [&](const std::string& key, const Json* in_a, const Json* in_b) {
      if (IsManagedFields(path, key)) return;
      path.push_back(FieldElement(key));
      CompareAt(in_a, in_b, type.Field(key), path, out);
      path.pop_back();
    });
  } else {
    std::vector<std::string> ea = a ? *ItemElements(*a, type) : std::vector<std::string>();
    std::vector<std::string> eb = b ? *ItemElements(*b, type) : std::vector<std::string>();
    std::map<std::string, const Json*> ia = ByElement(a, ea), ib = ByElement(b, eb);
    std::vector<std::string> all = ea;
    for (const std::string& e : eb) {
      if (!ia.count(e)) all.push_back(e);
    }
    for (const std::string& e : all) {
      path.push_back(e);
      CompareAt(ia.count(e) ? ia[e] : nullptr, ib.count(e) ? ib[e] : nullptr, type.Item(), path,
                out);
      path.pop_back();
    }
  }
  if (path.empty()) return;
  if (!a) out.added.Insert(path);
  if (!b) out.removed.Insert(path);
}

Json MergeAt(const Json* live, const Json& config, const FieldType& type);

// Two keyed lists merged as structured-merge-diff merges them: the configuration's items in
// its order, merged with the live item of the same key; live items the configuration does not
// name keep their place relative to their neighbours.
Json MergeLists(const Json& live, const Json& config, const FieldType& type) {
  std::vector<std::string> lo = *ItemElements(live, type), ro = *ItemElements(config, type);
  std::map<std::string, const Json*> li = ByElement(&live, lo), ri = ByElement(&config, ro);
  std::vector<std::string> shared;
  for (const std::string& e : ro) {
    if (li.count(e)) shared.push_back(e);
  }
  size_t next_shared = 0;
  Json out = Json::array();
  FieldType item = type.Item();
  size_t l = 0, r = 0;
  while (l < lo.size() || r < ro.size()) {
    if (l < lo.size() && r < ro.size()) {
      if (lo[l] == ro[r]) {
        out.push_back(MergeAt(li[lo[l]], config[r], item));
        ++l, ++r, ++next_shared;
        continue;
      }
      if (ri.count(lo[l]) && next_shared < shared.size() && shared[next_shared] != lo[l]) {
        ++l;  // a shared item whose turn comes later, in the configuration's order
        continue;
      }
    }
    if (l < lo.size() && !ri.count(lo[l])) {
      out.push_back(live[l++]);
      continue;
    }
    if (r < ro.size()) {
      const std::string& e = ro[r];
      out.push_back(MergeAt(li.count(e) ? li[e] : nullptr, config[r], item));
      if (next_shared < shared.size() && shared[next_shared] == e) ++next_shared;
      ++r;
      continue;
    }
    ++l;  // a shared item already merged in the configuration's order
  }
  return out;
}

Json MergeAt(const Json* live, const Json& config, const FieldType& type) {
  if (!live) return config;
  switch (ShapeOf(live, &config, type)) {
    case Shape::kObject: {
      Json out = *live;
      for (auto it = config.begin(); it != config.end(); ++it) {
        out[it.key()] = MergeAt(Find(live, it.key()), it.value(), type.Field(it.key()));
      }
      return out;
    }
    case Shape::kList:
      return MergeLists(*live, config, type);
    case Shape::kLeaf:
      break;
  }
  return config;
}

Json RemoveAt(const Json& v, const FieldSet& remove, const FieldType& type, FieldPath& path) {
  Shape shape = ShapeOf(nullptr, &v, type);
  if (shape == Shape::kLeaf) return v;
  Json out = shape == Shape::kObject ? Json::object() : Json::array();
  if (shape == Shape::kObject) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      path.push_back(FieldElement(it.key()));
      if (!remove.Has(path)) {
        out[it.key()] = remove.HasBelow(path)
                            ? RemoveAt(it.value(), remove, type.Field(it.key()), path)
                            : it.value();
      }
      path.pop_back();
    }
    return out;
  }
  std::vector<std::string> elements = *ItemElements(v, type);
  for (size_t i = 0; i < elements.size(); ++i) {
    path.push_back(elements[i]);
    if (!remove.Has(path)) {
      out.push_back(remove.HasBelow(path) ? RemoveAt(v[i], remove, type.Item(), path) : v[i]);
    }
    path.pop_back();
  }
  return out;
}

}  // namespace

FieldSet FieldSetOf(const Json& object, const FieldType& root) {
  FieldSet out;
  FieldPath path;
  AddFields(object, root, path, out);
  return out;
}

Comparison Compare(const Json* before, const Json* after, const FieldType& root) {
  Comparison out;
  FieldPath path;
  if (before || after) CompareAt(before, after, root, path, out);
  return out;
}

Json MergeObjects(const Json& live, const Json& config, const FieldType& root) {
  return MergeAt(&live, config, root);
}

Json RemoveFields(const Json& object, const FieldSet& remove, const FieldType& root) {
  FieldPath path;
  return RemoveAt(object, remove, root, path);
}

}  // namespace dljob::apiserver
