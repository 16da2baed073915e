// OpenSource: which store a --from value opens, and its errors.
#include "storage/objstore/open_store.h"

#include <gtest/gtest.h>

#include "storage/objstore/cache_warmup.h"
#include "storage/objstore/testing/s3rver_process.h"
#include "testing/command.h"

namespace dljob::storage {
namespace {

EnvLookup NoEnv() {
  return [](const std::string&) { return std::optional<std::string>(); };
}

TEST(OpenSource, LocalDirectory) {
  dljob::testing::TempDir dir;
  Result<OpenedSource> s = OpenSource(dir.path(), {}, NoEnv());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->prefix, "");
  EXPECT_EQ(s->store->Url("k"), dir.path() + "/k");
  Result<OpenedSource> missing = OpenSource("/nonexistent/dljob", {}, NoEnv());
  EXPECT_EQ(missing.status().message(),
            "--from (a directory, or an oss:// or s3:// URL): /nonexistent/dljob: no such "
            "directory");
}

TEST(OpenSource, ObjectUrlErrorsNameTheFlag) {
  EXPECT_EQ(OpenSource("s4://bucket/x", {}, NoEnv()).status().message(),
            "--from: \"s4://bucket/x\": unknown scheme \"s4\"; use oss:// or s3://");
  EXPECT_EQ(OpenSource("oss://bucket/x", {}, NoEnv()).status().message(),
            "--from: oss://bucket/x: no endpoint; set OSS_ENDPOINT (e.g. "
            "https://oss-cn-hangzhou.aliyuncs.com) or pass --endpoint");
}

// `dljob data cache --from oss://bucket/prefix --to DIR`, minus the CLI: the oss:// URL against
// s3rver, with the endpoint and keys from OSS_* variables.
TEST(OpenSource, OssUrlWarmsACacheFromAnS3Server) {
  testing::S3rverProcess server("datasets");
  Status started = server.Start();
  ASSERT_TRUE(started.ok()) << started.message();
  const std::map<std::string, std::string> vars = {{"OSS_ENDPOINT", server.endpoint()},
                                                   {"OSS_ACCESS_KEY_ID", "S3RVER"},
                                                   {"OSS_ACCESS_KEY_SECRET", "S3RVER"}};
  EnvLookup env = [&](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  Result<OpenedSource> s = OpenSource("oss://datasets/mnist/train", {}, env);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->prefix, "mnist/train");
  ASSERT_TRUE(s->store->Put("mnist/train/a.bin", "alpha").ok());
  ASSERT_TRUE(s->store->Put("mnist/train/sub/b.bin", "beta").ok());
  dljob::testing::TempDir to;
  Result<WarmCacheResult> r = WarmCache(*s->store, s->prefix, to.path() + "/x", {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->objects, 2u);
  EXPECT_EQ(dljob::testing::ReadFile(to.path() + "/x/a.bin"), "alpha");
  EXPECT_EQ(dljob::testing::ReadFile(to.path() + "/x/sub/b.bin"), "beta");
}

}  // namespace
}  // namespace dljob::storage
