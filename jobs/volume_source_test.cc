#include "jobs/volume_source.h"

#include <gtest/gtest.h>

namespace dljob {
namespace {

using Kind = VolumeSource::Kind;

struct Good {
  const char* uri;
  VolumeSource want;
};

TEST(VolumeSource, ParsesAndFormatsEveryKind) {
  const Good cases[] = {
      {"nas://nfs.example.com/export/data",
       {Kind::kNas, "nfs.example.com", "", "", "/export/data"}},
      {"nas://10.0.0.5:2049/a", {Kind::kNas, "10.0.0.5:2049", "", "", "/a"}},
      {"oss://dljob-datasets/imagenet/train",
       {Kind::kOss, "", "dljob-datasets", "", "imagenet/train"}},
      {"oss://bucket", {Kind::kOss, "", "bucket", "", ""}},
      {"pvc:my-claim", {Kind::kPvc, "", "", "my-claim", ""}},
      {"pvc:my-claim/sub/dir", {Kind::kPvc, "", "", "my-claim", "sub/dir"}},
      {"hostPath:/usr/share/datasets", {Kind::kHostPath, "", "", "", "/usr/share/datasets"}},
  };
  for (const Good& c : cases) {
    SCOPED_TRACE(c.uri);
    Result<VolumeSource> v = ParseVolumeSource(c.uri);
    ASSERT_TRUE(v.ok()) << v.status().message();
    EXPECT_EQ(*v, c.want);
    EXPECT_EQ(FormatVolumeSource(*v), c.uri);
  }
}

struct Bad {
  const char* uri;
  const char* phrase;
};

TEST(VolumeSource, RejectsWithReasons) {
  const Bad cases[] = {
      {"s4://b/x", "unknown scheme \"s4\" (expected nas://, oss://, pvc:, hostPath:)"},
      {"/data", "missing scheme"},
      {"", "must not be empty"},
      {"nas:/x", "expected nas://"},
      {"nas:///export", "missing server"},
      {"nas://server", "missing export path"},
      {"nas://server:99999/x", "1 to 65535"},
      {"nas://ser_ver/x", "not a valid host name"},
      {"oss://", "missing bucket"},
      {"oss://ab/x", "3 to 63"},
      {"oss://My-Bucket/x", "lowercase"},
      {"oss://-bucket/x", "start and end"},
      {"oss://bucket//x", "must not start with '/'"},
      {"oss://bucket/a/../b", "'..'"},
      {"pvc:", "missing claim"},
      {"pvc:Claim", "DNS-1123"},
      {"pvc:c//abs", "relative"},
      {"hostPath:data", "must be absolute"},
      {"hostPath:/a/../etc", "'..'"},
      {"hostPath:/a b", "whitespace"},
      {"hostPath:/a\nb", "\"hostPath:/a\\nb\""},
  };
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.uri);
    Result<VolumeSource> v = ParseVolumeSource(c.uri);
    ASSERT_FALSE(v.ok());
    EXPECT_NE(v.status().message().find(c.phrase), std::string::npos) << v.status().message();
  }
}

TEST(VolumeSource, KindNames) {
  EXPECT_STREQ(VolumeKindName(Kind::kNas), "nas");
  EXPECT_STREQ(VolumeKindName(Kind::kOss), "oss");
  EXPECT_STREQ(VolumeKindName(Kind::kPvc), "pvc");
  EXPECT_STREQ(VolumeKindName(Kind::kHostPath), "hostPath");
}

TEST(VolumeSource, CacheSubdirIsReadableStableAndDistinctPerSource) {
  auto subdir = [](const char* uri) {
    Result<VolumeSource> v = ParseVolumeSource(uri);
    EXPECT_TRUE(v.ok()) << uri;
    return CacheSubdir(*v);
  };
  std::string train = subdir("oss://bucket/imagenet/train");
  EXPECT_EQ(train.rfind("bucket/train-", 0), 0u) << train;
  EXPECT_EQ(train.size(), std::string("bucket/train-").size() + 16) << train;
  EXPECT_EQ(train, subdir("oss://bucket/imagenet/train")) << "stable";
  EXPECT_NE(train, subdir("oss://bucket/imagenet/train2"));
  EXPECT_NE(train, subdir("oss://bucket/other/train")) << "same last segment, other prefix";
  EXPECT_NE(train, subdir("oss://bucket2/imagenet/train").substr(1));
  EXPECT_EQ(subdir("oss://bucket").rfind("bucket/root-", 0), 0u) << subdir("oss://bucket");
  EXPECT_EQ(
      subdir("nas://nas.example.com:2049/export/fmnist").rfind("nas/nas.example.com/fmnist-", 0),
      0u);
  EXPECT_EQ(subdir("pvc:datasets/a+b").rfind("pvc/datasets/a-b-", 0), 0u);
  EXPECT_EQ(subdir("pvc:datasets").rfind("pvc/datasets/root-", 0), 0u);
  EXPECT_EQ(subdir("hostPath:/srv/data/").rfind("hostPath/data-", 0), 0u);
  EXPECT_EQ(subdir("hostPath:/srv/.hidden").rfind("hostPath/root.hidden-", 0), 0u);
}

}  // namespace
}  // namespace dljob
