// The reference pages (reference.h): a walk over a CRD's openAPIV3Schema, one Markdown table per
// object, and DLJob defaults found by running ApplyDefaults on a minimal job.
#include "jobs/reference.h"

#include <cctype>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "jobs/codec.h"
#include "jobs/crd.h"
#include "jobs/defaults.h"
#include "jobs/dljob_types.h"

namespace dljob {
namespace {

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

// Every scalar of `tree` by field path; a list's elements all count as "[]".
void Flatten(const json& tree, const std::string& path, std::map<std::string, json>& out) {
  if (tree.is_object()) {
    for (const auto& [key, child] : tree.items()) {
      Flatten(child, path.empty() ? key : path + "." + key, out);
    }
  } else if (tree.is_array()) {
    for (const json& item : tree) Flatten(item, path + "[]", out);
  } else {
    out[path] = tree;
  }
}

// What ApplyDefaults adds to a job that sets only spec.gpus, one data volume and a checkpoint.
std::map<std::string, json> DefaultsFor(int64_t gpus) {
  DLJob job;
  job.spec.gpus = gpus;
  job.spec.data.emplace_back();
  job.spec.checkpoint.emplace();
  std::map<std::string, json> before;
  std::map<std::string, json> after;
  Flatten(EncodeTree(job), "", before);
  ApplyDefaults(job);
  Flatten(EncodeTree(job), "", after);
  std::map<std::string, json> added;
  for (const auto& [path, value] : after) {
    auto it = before.find(path);
    if (it == before.end() || it->second != value) added[path] = value;
  }
  return added;
}

// GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens.
std::string Slug(const std::string& heading) {
  std::string out;
  for (char c : heading) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_') {
      out += static_cast<char>(std::tolower(u));
    } else if (c == ' ') {
      out += '-';
    }
  }
  return out;
}

std::string Code(const std::string& text) { return "`" + text + "`"; }

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

bool HasProperties(const ojson& schema) {
  return schema.value("type", "") == "object" && schema.contains("properties");
}

// The section heading (and anchor) of the object at `path`.
std::string Heading(const std::string& path) { return Code(path); }

std::string TypeName(const ojson& s, const std::string& path) {
  std::string type = s.value("type", "");
  if (type == "object") {
    if (HasProperties(s)) return "[object](#" + Slug(Heading(path)) + ")";
    if (s.contains("additionalProperties")) return "map of string";
    return "object";
  }
  if (type == "array") {
    const ojson& items = s["items"];
    if (HasProperties(items)) return "[list of object](#" + Slug(Heading(path + "[]")) + ")";
    return "list of " + items.value("type", "");
  }
  if (s.contains("format")) return type + " (" + s["format"].get<std::string>() + ")";
  return type;
}

std::string ValueText(const json& value) {
  if (value.is_null()) return "derived";
  if (value.is_string())
    return Code(value.get<std::string>().empty() ? "\"\"" : value.get<std::string>());
  return Code(value.dump());
}

std::string Allowed(const ojson& s) {
  std::vector<std::string> parts;
  if (s.contains("enum")) {
    std::string values;
    for (const ojson& v : s["enum"]) {
      if (!values.empty()) values += ", ";
      values += ValueText(v);
    }
    parts.push_back(values);
  }
  if (s.contains("minimum")) parts.push_back("≥ " + s["minimum"].dump());
  if (s.contains("maxLength")) parts.push_back("at most " + s["maxLength"].dump() + " characters");
  if (s.contains("pattern")) parts.push_back("matches " + Code(s["pattern"].get<std::string>()));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

struct Section {
  std::string path;  // "spec.data[]"; the kind for the whole object
  const ojson* schema;
};

// The objects with properties under `schema` at `path`, depth first in schema order.
void CollectSections(const ojson& schema, const std::string& path, std::vector<Section>& out) {
  for (const auto& [name, child] : schema["properties"].items()) {
    std::string child_path = path.empty() ? name : path + "." + name;
    if (HasProperties(child)) {
      out.push_back({child_path, &child});
      CollectSections(child, child_path, out);
    } else if (child.value("type", "") == "array" && HasProperties(child["items"])) {
      out.push_back({child_path + "[]", &child["items"]});
      CollectSections(child["items"], child_path + "[]", out);
    }
  }
}

void WriteTable(std::ostringstream& out, const Section& section, const std::string& prefix,
                const std::map<std::string, json>& defaults) {
  bool with_defaults = !defaults.empty();
  out << "\n## " << Heading(section.path) << "\n\n";
  // The whole object's description opens the page already.
  if (!prefix.empty() && section.schema->contains("description")) {
    out << Escape((*section.schema)["description"].get<std::string>()) << "\n\n";
  }
  out << (with_defaults
              ? "| Field | Type | Default | Allowed | Description |\n|---|---|---|---|---|\n"
              : "| Field | Type | Allowed | Description |\n|---|---|---|---|\n");
  std::vector<std::string> required;
  if (section.schema->contains("required")) {
    for (const ojson& r : (*section.schema)["required"]) required.push_back(r);
  }
  for (const auto& [name, s] : (*section.schema)["properties"].items()) {
    std::string path = prefix.empty() ? name : prefix + "." + name;
    std::string field = Code(name);
    for (const std::string& r : required) {
      if (r == name) field += " (required)";
    }
    out << "| " << field << " | " << TypeName(s, path) << " | ";
    if (with_defaults) {
      auto it = defaults.find(path);
      out << (it == defaults.end() ? "" : ValueText(it->second)) << " | ";
    }
    out << Escape(Allowed(s)) << " | " << Escape(s.value("description", "")) << " |\n";
  }
}

}  // namespace

std::string CrdReferenceMarkdown(const ojson& crd, const json& defaults,
                                 const std::string& source) {
  const ojson& spec = crd["spec"];
  const ojson& version = spec["versions"][0];
  const ojson& schema = version["schema"]["openAPIV3Schema"];
  std::string kind = spec["names"]["kind"];
  std::string plural = spec["names"]["plural"];
  std::map<std::string, json> flat;
  for (const auto& [path, value] : defaults.items()) flat[path] = value;

  std::ostringstream out;
  out << "<!-- Generated by `dljob-gen-crd --markdown " << plural << "` from " << source
      << ". Do not edit: run scripts/gen/reference.sh. -->\n\n";
  out << "# " << kind << " reference\n\n";
  out << Code(spec["group"].get<std::string>() + "/" + version["name"].get<std::string>())
      << ", kind " << Code(kind) << " (plural " << Code(plural) << ", short name "
      << Code(spec["names"]["shortNames"][0].get<std::string>()) << "), "
      << (spec["scope"] == "Cluster" ? "cluster-scoped" : "namespaced") << ". "
      << schema["description"].get<std::string>() << "\n\n";
  out << "Generated from the field table [" << source << "](../../" << source
      << ") through the CRD schema it also produces (charts/dljob/crds/), so every field the "
         "codec accepts is here and nothing else is. A field marked required must be set; "
         "Allowed lists an enum, a minimum or a pattern the API server enforces.";
  if (!flat.empty()) {
    out << " Default is the value defaulting ([jobs/defaults.h](../../jobs/defaults.h)) gives an "
           "unset field; \"derived\" means it depends on other fields (the description says "
           "how). `dljob submit --dry-run -o yaml` prints a job with every default applied.";
  }
  out << "\n\n`kubectl get " << plural
      << "` columns:\n\n| Column | Type | JSON path |\n|---|---|---|\n";
  for (const ojson& c : version["additionalPrinterColumns"]) {
    out << "| " << c["name"].get<std::string>() << " | " << c["type"].get<std::string>() << " | "
        << Code(c["jsonPath"].get<std::string>()) << " |\n";
  }

  std::vector<Section> sections{{kind, &schema}};
  CollectSections(schema, "", sections);
  for (const Section& section : sections) {
    WriteTable(out, section, section.path == kind ? "" : section.path, flat);
  }
  return out.str();
}

json DLJobDefaults() {
  std::map<std::string, json> many = DefaultsFor(16);
  std::map<std::string, json> one = DefaultsFor(1);
  json out = json::object();
  for (const auto& [path, value] : many) {
    auto it = one.find(path);
    out[path] = it != one.end() && it->second == value ? value : json();
  }
  return out;
}

std::string DLJobReference() {
  return CrdReferenceMarkdown(DLJobCrd(), DLJobDefaults(), "jobs/dljob_fields.h");
}

std::string DLQueueReference() {
  return CrdReferenceMarkdown(DLQueueCrd(), json::object(), "jobs/dlqueue_fields.h");
}

}  // namespace dljob
