// The single-value rules of validation.h.
#include <cctype>

#include "jobs/child_names.h"
#include "jobs/field_path.h"
#include "jobs/generated_name.h"
#include "jobs/validation.h"

namespace dljob {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

namespace {

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// Lowercase letters, digits and '-', starting and ending with a letter or digit.
bool IsDnsLabel(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// A label name: alphanumerics, '-', '_', '.', starting and ending alphanumeric.
bool IsLabelName(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Parses the number part of a quantity: digits with at most one '.', at least one digit.
size_t NumberLength(std::string_view s) {
  size_t i = 0, digits = 0;
  bool dot = false;
  for (; i < s.size(); ++i) {
    if (IsDigit(s[i])) {
      ++digits;
    } else if (s[i] == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  return digits == 0 ? 0 : i;
}

bool IsQuantitySuffix(std::string_view suffix) {
  for (std::string_view known :
       {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"}) {
    if (suffix == known) return true;
  }
  // A decimal exponent: e or E and a signed integer.
  if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) return false;
  std::string_view exponent = suffix.substr(1);
  if (exponent[0] == '+' || exponent[0] == '-') exponent.remove_prefix(1);
  if (exponent.empty()) return false;
  for (char c : exponent) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

}  // namespace

std::string CheckDnsLabel(const std::string& value) {
  if (value.size() > 63)
    return "must be at most 63 characters, got " + std::to_string(value.size());
  if (!IsDnsLabel(value)) {
    return "must be a DNS label (lowercase letters, digits and '-', starting and ending with a "
           "letter or digit), got " +
           Quote(value);
  }
  return "";
}

std::string CheckDns1035Label(const std::string& value) {
  if (value.size() > 63)
    return "must be at most 63 characters, got " + std::to_string(value.size());
  if (!IsDnsLabel(value) || !(value[0] >= 'a' && value[0] <= 'z')) {
    return "must be a DNS-1035 label (a lowercase letter first, then lowercase letters, digits "
           "and '-', ending with a letter or digit), got " +
           Quote(value);
  }
  return "";
}

std::string CheckJobName(const std::string& name, int64_t workers) {
  if (name.empty()) return "required";
  size_t max = MaxJobNameLength(workers);
  if (name.size() > max) {
    std::string longest = name + LongestChildSuffix(workers);
    return "must be at most " + std::to_string(max) + " characters for a job of " +
           std::to_string(workers) + (workers == 1 ? " worker" : " workers") + ", got " +
           std::to_string(name.size()) + ": its children are named after it, and " +
           Quote(longest) + " would be " + std::to_string(longest.size()) +
           " characters (Kubernetes allows " + std::to_string(kMaxChildNameLength) + ")";
  }
  if (std::string reason = CheckDns1035Label(name); !reason.empty()) {
    return reason + " (the job's Service " + Quote(name + "-worker") + " must be one)";
  }
  return "";
}

std::string CheckGenerateName(const std::string& prefix, int64_t workers) {
  const size_t max = MaxJobNameLength(workers) - kGeneratedSuffixLength;
  if (prefix.size() > max) {
    return "must be at most " + std::to_string(max) + " characters for a job of " +
           std::to_string(workers) + (workers == 1 ? " worker" : " workers") + ", got " +
           std::to_string(prefix.size()) + ": the name made from it has " +
           std::to_string(kGeneratedSuffixLength) + " more, and a job's name may have " +
           std::to_string(MaxJobNameLength(workers));
  }
  // The suffix is letters and digits: any of them stands for all in the name rule.
  if (!CheckJobName(prefix + std::string(kGeneratedSuffixLength, 'x'), workers).empty()) {
    return "must be the start of a DNS-1035 label (a lowercase letter first, then lowercase "
           "letters, digits and '-'), e.g. \"resnet50-\", got " +
           Quote(prefix);
  }
  return "";
}

std::string CheckDnsSubdomain(const std::string& value) {
  if (value.empty() || value.size() > 253) {
    return "must be a DNS subdomain of 1 to 253 characters, got " + Quote(value);
  }
  size_t start = 0;
  while (start <= value.size()) {
    size_t dot = value.find('.', start);
    if (dot == std::string::npos) dot = value.size();
    if (!IsDnsLabel(std::string_view(value).substr(start, dot - start))) {
      return "must be a DNS subdomain (lowercase letters, digits, '-' and '.'), got " +
             Quote(value);
    }
    start = dot + 1;
  }
  return "";
}

std::string CheckQuantity(const std::string& value) {
  std::string_view s = value;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  size_t n = NumberLength(s);
  if (value.empty() || n == 0 || !IsQuantitySuffix(s.substr(n))) {
    return "must be a quantity such as \"8\", \"500m\" or \"60Gi\", got " + Quote(value);
  }
  return "";
}

std::string CheckLabelKey(const std::string& key) {
  if (key.empty()) return "key must not be empty";
  size_t slash = key.find('/');
  std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
  if (slash != std::string::npos) {
    std::string prefix = key.substr(0, slash);
    if (!CheckDnsSubdomain(prefix).empty()) {
      return "key " + Quote(key) + ": prefix must be a DNS subdomain";
    }
  }
  if (name.size() > 63 || !IsLabelName(name)) {
    return "key " + Quote(key) +
           ": name must be 1 to 63 letters, digits, '-', '_' or '.', "
           "starting and ending with a letter or digit";
  }
  return "";
}

std::string CheckLabelValue(const std::string& value) {
  if (value.empty()) return "";
  if (value.size() > 63 || !IsLabelName(value)) {
    return "value must be at most 63 letters, digits, '-', '_' or '.', starting and ending with "
           "a letter or digit, got " +
           Quote(value);
  }
  return "";
}

std::string CheckEnvVarName(const std::string& name) {
  if (name.empty()) return "required";
  bool ok = !IsDigit(name[0]);
  for (char c : name) ok = ok && (IsAlnum(c) || c == '_' || c == '-' || c == '.');
  if (!ok) {
    return "must consist of letters, digits, '_', '-' and '.', not starting with a digit, got " +
           Quote(name);
  }
  return "";
}

std::string CheckAbsolutePath(const std::string& path) {
  if (path.empty()) return "required";
  if (path[0] != '/') return "must be an absolute path, got " + Quote(path);
  for (char c : path) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return "must not contain control characters, got " + Quote(path);
    }
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (path.compare(start, end - start, "..") == 0) {
      return "must not contain '..', got " + Quote(path);
    }
    start = end + 1;
  }
  return "";
}

}  // namespace dljob
