// Object-store URLs and connection settings: pure functions, table-driven.
#include "storage/objstore/object_url.h"

#include <map>

#include <gtest/gtest.h>

namespace dljob::storage {
namespace {

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(ParseObjectUrl, ValidForms) {
  struct Case {
    std::string url, scheme, bucket, prefix;
  };
  for (const Case& c : std::vector<Case>{
           {"oss://bucket/imagenet/train", "oss", "bucket", "imagenet/train"},
           {"s3://my.bucket-1/", "s3", "my.bucket-1", ""},
           {"s3://abc", "s3", "abc", ""},
           {"oss://data-01/a/b/", "oss", "data-01", "a/b/"},
       }) {
    Result<ObjectUrl> u = ParseObjectUrl(c.url, "--from");
    ASSERT_TRUE(u.ok()) << c.url << ": " << u.status().message();
    EXPECT_EQ(u->scheme, c.scheme);
    EXPECT_EQ(u->bucket, c.bucket);
    EXPECT_EQ(u->prefix, c.prefix);
  }
  EXPECT_EQ(ParseObjectUrl("oss://bucket/x/y", "f")->ToString(), "oss://bucket/x/y");
  EXPECT_EQ(ParseObjectUrl("s3://bucket", "f")->ToString(), "s3://bucket");
}

TEST(ParseObjectUrl, InvalidFormsNameTheFieldAndTheProblem) {
  struct Case {
    std::string url, message;
  };
  for (const Case& c : std::vector<Case>{
           {"/local/path",
            "--from: \"/local/path\" is not an object-store URL; write "
            "oss://bucket/prefix or s3://bucket/prefix"},
           {"s4://bucket/x",
            "--from: \"s4://bucket/x\": unknown scheme \"s4\"; use oss:// or s3://"},
           {"oss:///x", "--from: \"oss:///x\" has no bucket; write it as oss://bucket/prefix"},
           {"oss://ab", "--from: \"oss://ab\": bucket \"ab\" must be 3 to 63 characters long"},
           {"s3://My_Bucket",
            "--from: \"s3://My_Bucket\": bucket \"My_Bucket\" may only contain "
            "lowercase letters, digits, '-' and '.'"},
           {"s3://-bucket",
            "--from: \"s3://-bucket\": bucket \"-bucket\" must start and end with "
            "a lowercase letter or digit"},
           {"s3://bucket//x", "--from: \"s3://bucket//x\": prefix starts with '/' (\"//\")"},
           {"s3://bucket/x?y=1",
            "--from: \"s3://bucket/x?y=1\": query strings and fragments are "
            "not allowed"},
       }) {
    Result<ObjectUrl> u = ParseObjectUrl(c.url, "--from");
    ASSERT_FALSE(u.ok()) << c.url;
    EXPECT_EQ(u.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(u.status().message(), c.message);
  }
  EXPECT_TRUE(IsObjectUrl("oss://b/x"));
  EXPECT_TRUE(IsObjectUrl("s3://b"));
  EXPECT_FALSE(IsObjectUrl("/mnt/nas/x"));
  EXPECT_FALSE(IsObjectUrl("nas://server/x"));
}

TEST(ResolveS3Config, OssTakesItsOwnVariablesFirst) {
  ObjectUrl url = *ParseObjectUrl("oss://bucket/p", "f");
  Result<S3Config> c = ResolveS3Config(url, {},
                                       Env({{"OSS_ENDPOINT", "oss-cn-hangzhou.aliyuncs.com/"},
                                            {"OSS_ACCESS_KEY_ID", "oss-id"},
                                            {"OSS_ACCESS_KEY_SECRET", "oss-secret"},
                                            {"AWS_ACCESS_KEY_ID", "aws-id"},
                                            {"AWS_SECRET_ACCESS_KEY", "aws-secret"}}));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->endpoint, "https://oss-cn-hangzhou.aliyuncs.com");
  EXPECT_EQ(c->region, "oss-cn-hangzhou");
  EXPECT_EQ(c->access_key_id, "oss-id");
  EXPECT_EQ(c->secret_access_key, "oss-secret");
}

TEST(ResolveS3Config, FlagsBeatTheEnvironment) {
  ObjectUrl url = *ParseObjectUrl("s3://bucket", "f");
  S3Flags flags{.endpoint = "http://127.0.0.1:9000",
                .region = "eu-west-1",
                .access_key_id = "flag-id",
                .secret_access_key = "flag-secret"};
  Result<S3Config> c = ResolveS3Config(url, flags,
                                       Env({{"AWS_ENDPOINT_URL", "https://elsewhere"},
                                            {"AWS_REGION", "us-west-2"},
                                            {"AWS_ACCESS_KEY_ID", "env-id"},
                                            {"AWS_SECRET_ACCESS_KEY", "env-secret"},
                                            {"AWS_SESSION_TOKEN", "tok"}}));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->endpoint, "http://127.0.0.1:9000");
  EXPECT_EQ(c->region, "eu-west-1");
  EXPECT_EQ(c->access_key_id, "flag-id");
  EXPECT_EQ(c->secret_access_key, "flag-secret");
  EXPECT_EQ(c->session_token, "tok");
}

TEST(ResolveS3Config, S3DefaultsToAwsAndAllowsAnonymous) {
  ObjectUrl url = *ParseObjectUrl("s3://bucket", "f");
  Result<S3Config> c = ResolveS3Config(url, {}, Env({{"AWS_DEFAULT_REGION", "ap-south-1"}}));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->endpoint, "https://s3.ap-south-1.amazonaws.com");
  EXPECT_EQ(c->region, "ap-south-1");
  EXPECT_TRUE(c->access_key_id.empty());
  Result<S3Config> d = ResolveS3Config(url, {}, Env({}));
  EXPECT_EQ(d->endpoint, "https://s3.us-east-1.amazonaws.com");
}

TEST(ResolveS3Config, ErrorsSayWhatToSet) {
  ObjectUrl oss = *ParseObjectUrl("oss://bucket/p", "f");
  Result<S3Config> no_endpoint = ResolveS3Config(oss, {}, Env({}));
  EXPECT_EQ(no_endpoint.status().message(),
            "oss://bucket/p: no endpoint; set OSS_ENDPOINT (e.g. "
            "https://oss-cn-hangzhou.aliyuncs.com) or pass --endpoint");
  Result<S3Config> half =
      ResolveS3Config(oss, {}, Env({{"OSS_ENDPOINT", "http://h"}, {"OSS_ACCESS_KEY_ID", "id"}}));
  EXPECT_EQ(half.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(half.status().message().find("OSS_ACCESS_KEY_SECRET"), std::string::npos);
  for (const char* bad : {"ftp://h", "https://", "http://h/path"}) {
    S3Flags flags;
    flags.endpoint = bad;
    Result<S3Config> r = ResolveS3Config(oss, flags, Env({}));
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace dljob::storage
