// The names the Kubernetes API server accepts, as it checks them (k8s.io/apimachinery's
// util/validation, Kubernetes 1.20), with its own messages: DNS-1123 labels and subdomains,
// DNS-1035 labels, qualified names (label and annotation keys) and label values. Each function
// returns the reasons `value` breaks the rule, in the server's words; empty when it is valid.
// Who uses them: the test API server (tests/apiserver) refuses objects with them, and the
// operator's tests hold the names its builders make against them. dljob's own rule for a job's
// name (jobs/validation_rules.cc) is written apart on purpose, so a mistake in one shows in the
// other. Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace dljob::kube {

std::vector<std::string> Dns1123Label(const std::string& value);      // ≤ 63, [a-z0-9-]
std::vector<std::string> Dns1123Subdomain(const std::string& value);  // ≤ 253, labels with dots
std::vector<std::string> Dns1035Label(const std::string& value);      // ≤ 63, starts a-z
std::vector<std::string> QualifiedName(const std::string& value);     // label and annotation keys
std::vector<std::string> LabelValue(const std::string& value);        // ≤ 63, may be empty

}  // namespace dljob::kube
