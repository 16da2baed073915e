// See sigv4.h.
#include "storage/objstore/sigv4.h"

#include <algorithm>
#include <ctime>
#include <map>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

namespace dljob::storage {
namespace {

std::string Hex(const unsigned char* bytes, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return out;
}

std::string Hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Trims and collapses runs of spaces (and tabs) into one space.
std::string TrimValue(std::string_view v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace

std::string UriEncode(std::string_view s, bool encode_slash) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~' || (c == '/' && !encode_slash)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kDigits[c >> 4];
      out += kDigits[c & 15];
    }
  }
  return out;
}

std::string CanonicalQuery(const KeyValues& query) {
  KeyValues encoded;
  for (const auto& [k, v] : query) encoded.emplace_back(UriEncode(k, true), UriEncode(v, true));
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [k, v] : encoded) {
    if (!out.empty()) out += '&';
    out += k + "=" + v;
  }
  return out;
}

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return Hex(digest, sizeof digest);
}

std::string FormatAmzDate(std::chrono::system_clock::time_point t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

SigV4Signature SignV4(const SigV4Request& request, const SigV4Credentials& credentials,
                      const std::string& region, const std::string& service,
                      const std::string& amz_date) {
  // Headers by lower-cased name; repeated ones joined in the order given.
  std::map<std::string, std::string> headers;
  for (const auto& [name, value] : request.headers) {
    std::string& joined = headers[Lower(name)];
    if (!joined.empty()) joined += ',';
    joined += TrimValue(value);
  }
  std::string canonical_headers, signed_headers;
  for (const auto& [name, value] : headers) {
    canonical_headers += name + ":" + value + "\n";
    if (!signed_headers.empty()) signed_headers += ';';
    signed_headers += name;
  }
  SigV4Signature out;
  out.canonical_request = request.method + "\n" + UriEncode(request.path, false) + "\n" +
                          CanonicalQuery(request.query) + "\n" + canonical_headers + "\n" +
                          signed_headers + "\n" + request.payload_hash;
  const std::string date = amz_date.substr(0, 8);
  const std::string scope = date + "/" + region + "/" + service + "/aws4_request";
  out.string_to_sign =
      "AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope + "\n" + Sha256Hex(out.canonical_request);
  std::string key = Hmac("AWS4" + credentials.secret_access_key, date);
  key = Hmac(key, region);
  key = Hmac(key, service);
  key = Hmac(key, "aws4_request");
  const std::string mac = Hmac(key, out.string_to_sign);
  out.signature = Hex(reinterpret_cast<const unsigned char*>(mac.data()), mac.size());
  out.authorization = "AWS4-HMAC-SHA256 Credential=" + credentials.access_key_id + "/" + scope +
                      ", SignedHeaders=" + signed_headers + ", Signature=" + out.signature;
  return out;
}

void SignS3Request(SigV4Request& request, const SigV4Credentials& credentials,
                   const std::string& region, const std::string& host,
                   std::chrono::system_clock::time_point now) {
  const std::string amz_date = FormatAmzDate(now);
  request.headers.emplace_back("host", host);
  request.headers.emplace_back("x-amz-date", amz_date);
  request.headers.emplace_back("x-amz-content-sha256", request.payload_hash);
  if (!credentials.session_token.empty()) {
    request.headers.emplace_back("x-amz-security-token", credentials.session_token);
  }
  if (credentials.access_key_id.empty()) return;
  SigV4Signature sig = SignV4(request, credentials, region, "s3", amz_date);
  request.headers.emplace_back("Authorization", sig.authorization);
}

}  // namespace dljob::storage
