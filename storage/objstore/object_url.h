// Object-store URLs (`oss://bucket/prefix`, `s3://bucket/prefix`) and the connection settings that
// go with them: endpoint, region and credentials, taken from flags first and the environment
// second, never from a job spec.
//
// Environment, by scheme (the first one set wins):
//   endpoint    oss: OSS_ENDPOINT, AWS_ENDPOINT_URL     s3: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL
//   key id      oss: OSS_ACCESS_KEY_ID, AWS_ACCESS_KEY_ID          s3: AWS_ACCESS_KEY_ID
//   secret      oss: OSS_ACCESS_KEY_SECRET, AWS_SECRET_ACCESS_KEY  s3: AWS_SECRET_ACCESS_KEY
//   token       oss: OSS_SESSION_TOKEN, AWS_SESSION_TOKEN          s3: AWS_SESSION_TOKEN
//   region      oss: OSS_REGION, AWS_REGION                        s3: AWS_REGION,
//   AWS_DEFAULT_REGION
// An endpoint without a scheme gets https://. s3:// without an endpoint uses
// https://s3.<region>.amazonaws.com; oss:// needs one (e.g. https://oss-cn-hangzhou.aliyuncs.com),
// and its region defaults to the endpoint's first label ("oss-cn-hangzhou"). With neither key id
// nor secret, requests go unsigned (public buckets); with only one of them it is an error.
//
// Pure functions of their inputs (the environment is passed in); thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "base/status.h"

namespace dljob::storage {

struct ObjectUrl {
  std::string scheme;  // "oss" or "s3"
  std::string bucket;
  std::string prefix;  // the rest of the path, without the leading '/'; may be empty

  std::string ToString() const;  // "oss://bucket/prefix"
};

// True if `s` starts with "oss://" or "s3://" (so it should be parsed as an ObjectUrl rather than
// read as a local path).
bool IsObjectUrl(const std::string& s);

// Parses `oss://bucket[/prefix]` or `s3://bucket[/prefix]`. The bucket must be 3-63 characters of
// [a-z0-9.-], starting and ending with a letter or digit. Messages start with `field`
// ("--from: ..."), so callers say which input was wrong.
Result<ObjectUrl> ParseObjectUrl(const std::string& url, const std::string& field);

// Settings given on the command line; empty means "not given".
struct S3Flags {
  std::string endpoint;
  std::string region;
  std::string access_key_id;
  std::string secret_access_key;
};

struct S3Config {
  std::string endpoint;  // "https://host[:port]", no trailing '/'
  std::string region;
  std::string access_key_id;  // both empty: unsigned requests
  std::string secret_access_key;
  std::string session_token;
};

// Looks up an environment variable; std::nullopt (or "") when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
// The process environment (getenv).
EnvLookup ProcessEnv();

Result<S3Config> ResolveS3Config(const ObjectUrl& url, const S3Flags& flags, const EnvLookup& env);

}  // namespace dljob::storage
