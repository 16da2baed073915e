#include "operator/app/log_archive_store.h"

#include <gtest/gtest.h>

#include "base/base64.h"
#include "testing/command.h"

namespace dljob::op {
namespace {

storage::EnvLookup Environment(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

TEST(LogArchiveStoreTest, SecretKeysAreDecodedAndStandInForTheEnvironmentByScheme) {
  nlohmann::json secret = {{"data",
                            {{"akId", Base64Encode("AKID")},
                             {"akSecret", Base64Encode("s3cr3t")},
                             {"endpoint", Base64Encode("http://127.0.0.1:9000")}}}};
  Result<std::map<std::string, std::string>> keys = SecretKeys(secret, "--log-archive-secret");
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys->at("akSecret"), "s3cr3t");
  storage::EnvLookup env = Environment({{"AWS_REGION", "eu-west-1"}, {"AWS_ACCESS_KEY_ID", "env"}});
  storage::EnvLookup s3 = SecretEnv("s3", *keys, env);
  EXPECT_EQ(s3("AWS_ACCESS_KEY_ID"), "AKID");  // the Secret first
  EXPECT_EQ(s3("AWS_SECRET_ACCESS_KEY"), "s3cr3t");
  EXPECT_EQ(s3("AWS_ENDPOINT_URL_S3"), "http://127.0.0.1:9000");
  EXPECT_EQ(s3("AWS_REGION"), "eu-west-1");  // then the environment
  storage::EnvLookup oss = SecretEnv("oss", *keys, env);
  EXPECT_EQ(oss("OSS_ACCESS_KEY_ID"), "AKID");
  EXPECT_EQ(oss("OSS_ENDPOINT"), "http://127.0.0.1:9000");

  Result<std::map<std::string, std::string>> bad =
      SecretKeys({{"data", {{"akId", "not base64!"}}}}, "--log-archive-secret ns/s");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "--log-archive-secret ns/s: data.akId is not base64");
}

TEST(LogArchiveStoreTest, OpensADirectoryOrABucketAndRefusesAnythingElseNamingTheFlag) {
  dljob::testing::TempDir dir;
  Result<ArchiveLocation> local = OpenLogArchiveStore(dir.path() + "/logs", {}, Environment({}));
  ASSERT_TRUE(local.ok()) << local.status().message();
  EXPECT_EQ(local->prefix, "");
  EXPECT_EQ(local->store->Url("a/b.log"), dir.path() + "/logs/a/b.log");

  Result<ArchiveLocation> bucket = OpenLogArchiveStore(
      "s3://job-logs/prod/", {{"akId", "A"}, {"akSecret", "S"}, {"endpoint", "http://127.0.0.1:1"}},
      Environment({}));
  ASSERT_TRUE(bucket.ok()) << bucket.status().message();
  EXPECT_EQ(bucket->prefix, "prod");
  EXPECT_EQ(bucket->store->Url("prod/a"), "s3://job-logs/prod/a");

  for (const char* bad : {"relative/dir", "s3://X", "gs://bucket/p"}) {
    Result<ArchiveLocation> r = OpenLogArchiveStore(bad, {}, Environment({}));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--log-archive"), std::string::npos)
        << r.status().message();
  }
  // oss:// needs an endpoint: from the Secret or the environment.
  Result<ArchiveLocation> no_endpoint = OpenLogArchiveStore("oss://b-logs/p", {}, Environment({}));
  EXPECT_FALSE(no_endpoint.ok());
}

}  // namespace
}  // namespace dljob::op
