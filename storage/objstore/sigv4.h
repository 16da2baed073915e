// AWS Signature Version 4 (the signing S3, Alibaba OSS's S3-compatible endpoint and MinIO
// accept), as pure functions: the same request, credentials and time always give the same
// Authorization header, so the tests check them against AWS's published examples.
//
// Canonicalisation follows S3's rules: the path is URI-encoded once with '/' kept and is not
// normalised ("a//b" and "./" are signed as written, since they are distinct S3 keys); query
// parameters are encoded and sorted by name then value; header names are lower-cased, values
// trimmed with inner runs of spaces collapsed, repeated headers joined with ',' in order.
//
// Thread-safe (no state).
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dljob::storage {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

struct SigV4Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // optional
};

struct SigV4Request {
  std::string method;  // "GET"
  std::string path;    // decoded: "/bucket/a key.txt"
  KeyValues query;  // decoded name/value pairs, any order; a bare "?lifecycle" is {"lifecycle", ""}
  KeyValues headers;         // every header to sign, including host and x-amz-date
  std::string payload_hash;  // hex SHA-256 of the body, or "UNSIGNED-PAYLOAD"
};

struct SigV4Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature;      // hex
  std::string authorization;  // the Authorization header's value
};

// amz_date is "YYYYMMDDTHHMMSSZ" (FormatAmzDate). `service` is "s3" for object stores.
SigV4Signature SignV4(const SigV4Request& request, const SigV4Credentials& credentials,
                      const std::string& region, const std::string& service,
                      const std::string& amz_date);

// RFC 3986 percent-encoding of everything but A-Z a-z 0-9 - . _ ~ (and '/' unless encode_slash).
std::string UriEncode(std::string_view s, bool encode_slash);
// The canonical (and sendable) query string: encoded, sorted, joined with '&'.
std::string CanonicalQuery(const KeyValues& query);
std::string Sha256Hex(std::string_view data);
// "20150830T123600Z".
std::string FormatAmzDate(std::chrono::system_clock::time_point t);

// Adds the headers an S3 request signs and sends — host, x-amz-date, x-amz-content-sha256 and,
// with a session token, x-amz-security-token — then Authorization (unless the credentials are
// empty: an anonymous request). `request.headers` may already hold others to sign (range).
void SignS3Request(SigV4Request& request, const SigV4Credentials& credentials,
                   const std::string& region, const std::string& host,
                   std::chrono::system_clock::time_point now);

}  // namespace dljob::storage
