// See object_url.h.
#include "storage/objstore/object_url.h"

#include <cstdlib>
#include <initializer_list>

namespace dljob::storage {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

Status CheckBucket(const std::string& bucket, const std::string& field, const std::string& url) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(field + ": \"" + url + "\": bucket \"" + bucket + "\" " + why);
  };
  if (bucket.empty()) {
    return Status::InvalidArgument(field + ": \"" + url +
                                   "\" has no bucket; write it as oss://bucket/prefix");
  }
  if (bucket.size() < 3 || bucket.size() > 63) return bad("must be 3 to 63 characters long");
  for (char c : bucket) {
    if (!IsLowerAlnum(c) && c != '-' && c != '.') {
      return bad("may only contain lowercase letters, digits, '-' and '.'");
    }
  }
  if (!IsLowerAlnum(bucket.front()) || !IsLowerAlnum(bucket.back())) {
    return bad("must start and end with a lowercase letter or digit");
  }
  return Status::Ok();
}

std::string FirstSet(const EnvLookup& env, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    std::optional<std::string> v = env(name);
    if (v && !v->empty()) return *v;
  }
  return "";
}

}  // namespace

std::string ObjectUrl::ToString() const {
  return scheme + "://" + bucket + (prefix.empty() ? "" : "/" + prefix);
}

bool IsObjectUrl(const std::string& s) { return s.starts_with("oss://") || s.starts_with("s3://"); }

Result<ObjectUrl> ParseObjectUrl(const std::string& url, const std::string& field) {
  const size_t sep = url.find("://");
  if (sep == std::string::npos) {
    return Status::InvalidArgument(field + ": \"" + url +
                                   "\" is not an object-store URL; write oss://bucket/prefix or "
                                   "s3://bucket/prefix");
  }
  ObjectUrl out;
  out.scheme = url.substr(0, sep);
  if (out.scheme != "oss" && out.scheme != "s3") {
    return Status::InvalidArgument(field + ": \"" + url + "\": unknown scheme \"" + out.scheme +
                                   "\"; use oss:// or s3://");
  }
  const std::string rest = url.substr(sep + 3);
  const size_t slash = rest.find('/');
  out.bucket = rest.substr(0, slash);
  if (Status s = CheckBucket(out.bucket, field, url); !s.ok()) return s;
  if (slash != std::string::npos) out.prefix = rest.substr(slash + 1);
  if (out.prefix.find('?') != std::string::npos || out.prefix.find('#') != std::string::npos) {
    return Status::InvalidArgument(field + ": \"" + url +
                                   "\": query strings and fragments are not allowed");
  }
  if (!out.prefix.empty() && out.prefix.front() == '/') {
    return Status::InvalidArgument(field + ": \"" + url + "\": prefix starts with '/' (\"//\")");
  }
  return out;
}

EnvLookup ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

Result<S3Config> ResolveS3Config(const ObjectUrl& url, const S3Flags& flags, const EnvLookup& env) {
  const bool oss = url.scheme == "oss";
  S3Config c;
  c.endpoint = !flags.endpoint.empty()
                   ? flags.endpoint
                   : (oss ? FirstSet(env, {"OSS_ENDPOINT", "AWS_ENDPOINT_URL"})
                          : FirstSet(env, {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"}));
  c.region = !flags.region.empty() ? flags.region
                                   : (oss ? FirstSet(env, {"OSS_REGION", "AWS_REGION"})
                                          : FirstSet(env, {"AWS_REGION", "AWS_DEFAULT_REGION"}));
  c.access_key_id = !flags.access_key_id.empty()
                        ? flags.access_key_id
                        : (oss ? FirstSet(env, {"OSS_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID"})
                               : FirstSet(env, {"AWS_ACCESS_KEY_ID"}));
  c.secret_access_key =
      !flags.secret_access_key.empty()
          ? flags.secret_access_key
          : (oss ? FirstSet(env, {"OSS_ACCESS_KEY_SECRET", "AWS_SECRET_ACCESS_KEY"})
                 : FirstSet(env, {"AWS_SECRET_ACCESS_KEY"}));
  c.session_token = oss ? FirstSet(env, {"OSS_SESSION_TOKEN", "AWS_SESSION_TOKEN"})
                        : FirstSet(env, {"AWS_SESSION_TOKEN"});

  const std::string where = url.ToString();
  if (c.access_key_id.empty() != c.secret_access_key.empty()) {
    return Status::InvalidArgument(where +
                                   ": only one of the access key id and secret is set; set both (" +
                                   (oss ? "OSS_ACCESS_KEY_ID and OSS_ACCESS_KEY_SECRET"
                                        : "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") +
                                   ", or the flags) or neither for a public bucket");
  }
  if (c.endpoint.empty()) {
    if (oss) {
      return Status::InvalidArgument(where +
                                     ": no endpoint; set OSS_ENDPOINT (e.g. "
                                     "https://oss-cn-hangzhou.aliyuncs.com) or pass --endpoint");
    }
    if (c.region.empty()) c.region = "us-east-1";
    c.endpoint = "https://s3." + c.region + ".amazonaws.com";
  }
  if (!c.endpoint.starts_with("http://") && !c.endpoint.starts_with("https://")) {
    if (c.endpoint.find("://") != std::string::npos) {
      return Status::InvalidArgument(where + ": endpoint \"" + c.endpoint +
                                     "\" must be an http:// or https:// URL");
    }
    c.endpoint = "https://" + c.endpoint;
  }
  const size_t host_at = c.endpoint.find("://") + 3;
  std::string host = c.endpoint.substr(host_at);
  while (!host.empty() && host.back() == '/') host.pop_back();
  c.endpoint = c.endpoint.substr(0, host_at) + host;
  if (host.empty() || host.find('/') != std::string::npos) {
    return Status::InvalidArgument(where + ": endpoint \"" + c.endpoint +
                                   "\" must be scheme://host[:port] with no path");
  }
  if (c.region.empty()) {
    const std::string label = host.substr(0, host.find('.'));
    c.region = oss && label.starts_with("oss-") ? label : "us-east-1";
  }
  return c;
}

}  // namespace dljob::storage
