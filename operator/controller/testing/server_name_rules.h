// The name rules a real kube-apiserver applies to the objects dljob makes (the rules themselves
// are kube/name_rules.h, which the test API server enforces too; pkg/apis/core/validation of
// Kubernetes 1.20 says which applies where): the oracle the tests hold the operator's builders
// and the DLJob name rule against. Deliberately separate from jobs/validation_rules.cc (dljob's
// own check of a job's name), so that a mistake in one shows in the other.
//
// Covered: metadata.name per kind (Service: DNS-1035 label; Pod, ConfigMap, Secret, Event: DNS-1123
// subdomain), label keys and values, annotation keys; a Pod's hostname and subdomain (DNS-1123
// labels), container, init container and volume names (DNS-1123 labels), and hostAliases (an IP
// and DNS-1123 subdomains). Test-only; pure.
#pragma once

#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_fields.h"
#include "kube/name_rules.h"

namespace dljob::controller::testing {

namespace server_rules {

// The server's rules (kube/name_rules.h) as yes/no.
inline bool IsDns1123Label(const std::string& v) { return kube::Dns1123Label(v).empty(); }
inline bool IsDns1035Label(const std::string& v) { return kube::Dns1035Label(v).empty(); }
inline bool IsDns1123Subdomain(const std::string& v) { return kube::Dns1123Subdomain(v).empty(); }
inline bool IsQualifiedName(const std::string& v) { return kube::QualifiedName(v).empty(); }
inline bool IsLabelValue(const std::string& v) { return kube::LabelValue(v).empty(); }
inline bool IsIp(const std::string& v) {
  static const std::regex kPattern("([0-9]{1,3}\\.){3}[0-9]{1,3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]*");
  return std::regex_match(v, kPattern);
}

}  // namespace server_rules

// Every name in `object` the API server would refuse, as "<Kind> <name>: <field>: <rule>, got
// <value>"; empty when it would take them all.
inline std::vector<std::string> ServerNameViolations(const nlohmann::json& object) {
  using namespace server_rules;  // NOLINT(google-build-using-namespace): test-only helpers
  using Json = nlohmann::json;
  std::vector<std::string> out;
  const std::string kind = StringAt(object, "kind");
  const Json meta = object.value("metadata", Json::object());
  const std::string name = StringAt(meta, "name");
  auto check = [&](bool ok, const std::string& field, const char* rule, const std::string& v) {
    if (!ok) out.push_back(kind + " " + name + ": " + field + ": " + rule + ", got \"" + v + "\"");
  };
  if (kind == "Service") {
    check(IsDns1035Label(name), "metadata.name", "a DNS-1035 label", name);
  } else {
    check(IsDns1123Subdomain(name), "metadata.name", "a DNS-1123 subdomain", name);
  }
  const Json labels = meta.value("labels", Json::object());
  for (auto it = labels.begin(); it != labels.end(); ++it) {
    const Json& value = it.value();
    check(IsQualifiedName(it.key()), "metadata.labels", "a qualified name", it.key());
    check(value.is_string() && IsLabelValue(value.get<std::string>()),
          "metadata.labels." + it.key(), "a label value",
          value.is_string() ? value.get<std::string>() : value.dump());
  }
  const Json annotations = meta.value("annotations", Json::object());
  for (auto it = annotations.begin(); it != annotations.end(); ++it) {
    check(IsQualifiedName(it.key()), "metadata.annotations", "a qualified name", it.key());
  }
  if (kind != "Pod") return out;
  const Json spec = object.value("spec", Json::object());
  for (const char* field : {"hostname", "subdomain"}) {
    if (spec.contains(field)) {
      check(IsDns1123Label(StringAt(spec, field)), std::string("spec.") + field, "a DNS-1123 label",
            StringAt(spec, field));
    }
  }
  for (const char* list : {"containers", "initContainers", "volumes"}) {
    const Json items = spec.value(list, Json::array());
    for (const Json& item : items) {
      check(IsDns1123Label(StringAt(item, "name")), std::string("spec.") + list + "[].name",
            "a DNS-1123 label", StringAt(item, "name"));
    }
  }
  const Json aliases = spec.value("hostAliases", Json::array());
  for (const Json& alias : aliases) {
    check(IsIp(StringAt(alias, "ip")), "spec.hostAliases[].ip", "an IP address",
          StringAt(alias, "ip"));
    const Json hostnames = alias.value("hostnames", Json::array());
    for (const Json& host : hostnames) {
      std::string h = host.is_string() ? host.get<std::string>() : host.dump();
      check(IsDns1123Subdomain(h), "spec.hostAliases[].hostnames", "a DNS-1123 subdomain", h);
    }
  }
  return out;
}

}  // namespace dljob::controller::testing
