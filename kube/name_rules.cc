// See name_rules.h.
#include "kube/name_rules.h"

namespace dljob::kube {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])? — also the shape of each dot-separated part of a subdomain.
bool IsLowerLabel(const std::string& s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] (non-empty).
bool IsQualifiedNamePart(const std::string& s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

std::string MaxLength(size_t n) {
  return "must be no more than " + std::to_string(n) + " characters";
}

const char kDns1123LabelMessage[] =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const char kDns1123SubdomainMessage[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const char kDns1035LabelMessage[] =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const char kQualifiedNameRule[] =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const char kLabelValueMessage[] =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

}  // namespace

std::vector<std::string> Dns1123Label(const std::string& value) {
  std::vector<std::string> why;
  if (value.size() > 63) why.push_back(MaxLength(63));
  if (!IsLowerLabel(value)) why.push_back(kDns1123LabelMessage);
  return why;
}

std::vector<std::string> Dns1123Subdomain(const std::string& value) {
  std::vector<std::string> why;
  if (value.size() > 253) why.push_back(MaxLength(253));
  bool ok = !value.empty();
  for (size_t start = 0; ok && start <= value.size();) {
    size_t dot = value.find('.', start);
    size_t end = dot == std::string::npos ? value.size() : dot;
    ok = IsLowerLabel(value.substr(start, end - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (!ok) why.push_back(kDns1123SubdomainMessage);
  return why;
}

std::vector<std::string> Dns1035Label(const std::string& value) {
  std::vector<std::string> why;
  if (value.size() > 63) why.push_back(MaxLength(63));
  if (!IsLowerLabel(value) || !(value.front() >= 'a' && value.front() <= 'z')) {
    why.push_back(kDns1035LabelMessage);
  }
  return why;
}

std::vector<std::string> QualifiedName(const std::string& value) {
  std::vector<std::string> why;
  std::string name = value;
  size_t slash = value.find('/');
  if (slash != std::string::npos) {
    if (value.find('/', slash + 1) != std::string::npos) {
      why.push_back(std::string("a qualified name ") + kQualifiedNameRule +
                    " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
      return why;
    }
    std::string prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      why.push_back("prefix part must be non-empty");
    } else {
      for (const std::string& m : Dns1123Subdomain(prefix)) why.push_back("prefix part " + m);
    }
  }
  if (name.empty()) {
    why.push_back("name part must be non-empty");
    return why;
  }
  if (name.size() > 63) why.push_back("name part " + MaxLength(63));
  if (!IsQualifiedNamePart(name)) why.push_back(std::string("name part ") + kQualifiedNameRule);
  return why;
}

std::vector<std::string> LabelValue(const std::string& value) {
  std::vector<std::string> why;
  if (value.size() > 63) why.push_back(MaxLength(63));
  if (!value.empty() && !IsQualifiedNamePart(value)) why.push_back(kLabelValueMessage);
  return why;
}

}  // namespace dljob::kube
