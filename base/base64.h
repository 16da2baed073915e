// Base64 (RFC 4648's standard alphabet), the encoding of the Kubernetes API's and kubeconfig's
// byte fields (certificate-authority-data, Secret data). Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace dljob {

// With '=' padding, no line breaks.
std::string Base64Encode(std::string_view in);

// With or without padding; whitespace ignored. std::nullopt if malformed.
std::optional<std::string> Base64Decode(std::string_view in);

}  // namespace dljob
