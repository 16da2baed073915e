// Validation: every rule a DLJob (or a DLQueue) must satisfy, checked at once.
//
// Returns all problems, each with its field path and a reason a person can act on, e.g.
//   spec.gpus: must be a positive integer, got -2
//   spec.data[1].source: unknown scheme "s4" (expected nas://, oss://, pvc:, hostPath:)
// Expects a defaulted job (defaults.h) but never crashes on one that is not. Pure; thread-safe.
#pragma once

#include "jobs/dljob_types.h"
#include "jobs/dlqueue_types.h"
#include "jobs/field_error.h"

namespace dljob {

inline constexpr int64_t kMaxGpus = 16384;

FieldErrors Validate(const DLJob& job);
// A DLQueue: apiVersion and kind, a name that is a DNS label and no namespace (the kind is
// cluster-scoped), at least one quota, at most one per gpuProduct (a label value, or "" for any
// product), nominal required and >= 0, borrowingLimit >= 0.
FieldErrors Validate(const DLQueue& queue);

// Individual rules, exposed for the CLI's flag form and for tests. Each returns "" when the value
// is fine, else the reason.
// A DLJob's metadata.name, for a job of `workers` workers: a DNS-1035 label (the job's Service is
// named after it) no longer than MaxJobNameLength(workers) (child_names.h), so that every child's
// name is one the API server accepts.
std::string CheckJobName(const std::string& name, int64_t workers);
// A DLJob's metadata.generateName, for a job with no name: every name made from it (the prefix and
// kGeneratedSuffixLength letters and digits, generated_name.h) passes CheckJobName.
std::string CheckGenerateName(const std::string& prefix, int64_t workers);
std::string CheckDnsLabel(const std::string& value);      // RFC 1123 label, <= 63
std::string CheckDns1035Label(const std::string& value);  // RFC 1035: a letter first, <= 63
std::string CheckQuantity(const std::string& value);      // Kubernetes resource quantity
std::string CheckLabelKey(const std::string& key);        // [prefix/]name
std::string CheckAbsolutePath(const std::string& path);
std::string CheckDnsSubdomain(const std::string& value);  // RFC 1123 subdomain, <= 253
std::string CheckLabelValue(const std::string& value);    // "" or a label name, <= 63
std::string CheckEnvVarName(const std::string& name);     // [-._a-zA-Z][-._a-zA-Z0-9]*
// a-z or 0-9: the characters a DNS label or subdomain starts and ends with.
bool IsLowerAlnum(char c);

}  // namespace dljob
