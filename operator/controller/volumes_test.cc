#include "operator/controller/volumes.h"

#include <gtest/gtest.h>

namespace dljob::controller {
namespace {

using json = nlohmann::json;

struct Case {
  const char* name;
  const char* source;
  bool read_only;
  const char* volume;  // the expected pod volume (JSON)
  const char* mount;   // the expected container mount (JSON)
};

class RenderSource : public ::testing::TestWithParam<Case> {};

TEST_P(RenderSource, FieldByField) {
  const Case& c = GetParam();
  DLJob job;
  job.spec.data = {{"ds", c.source, "/data", c.read_only, std::nullopt}};
  VolumeOptions options;
  options.oss_endpoint = "oss-cn-hangzhou-internal.aliyuncs.com";
  Result<RenderedVolumes> r = RenderDataVolumes(job, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->volumes.size(), 1u);
  EXPECT_EQ(r->volumes[0], json::parse(c.volume));
  EXPECT_EQ(r->mounts[0], json::parse(c.mount));
}

INSTANTIATE_TEST_SUITE_P(
    Sources, RenderSource,
    ::testing::Values(
        Case{"HostPath", "hostPath:/mnt/data", true,
             R"({"name":"data-ds","hostPath":{"path":"/mnt/data","type":"Directory"}})",
             R"({"name":"data-ds","mountPath":"/data","readOnly":true})"},
        Case{"PvcWithSubpath", "pvc:datasets/imagenet/train", false,
             R"({"name":"data-ds","persistentVolumeClaim":{"claimName":"datasets","readOnly":false}})",
             R"({"name":"data-ds","mountPath":"/data","readOnly":false,"subPath":"imagenet/train"})"},
        Case{"Nfs", "nas://nas.example.com/export/imagenet", true,
             R"({"name":"data-ds","nfs":{"server":"nas.example.com","path":"/export/imagenet","readOnly":true}})",
             R"({"name":"data-ds","mountPath":"/data","readOnly":true})"},
        Case{"Oss", "oss://bucket/imagenet/train", true,
             R"({"name":"data-ds","csi":{"driver":"ossplugin.csi.alibabacloud.com","readOnly":true,
                 "volumeAttributes":{"bucket":"bucket","path":"/imagenet/train",
                   "otherOpts":"-o allow_other -o max_stat_cache_size=1000000 -o ro",
                   "url":"oss-cn-hangzhou-internal.aliyuncs.com"},
                 "nodePublishSecretRef":{"name":"dljob-oss"}}})",
             R"({"name":"data-ds","mountPath":"/data","readOnly":true})"}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(RenderDataVolumes, NamesTheBadSource) {
  DLJob job;
  job.spec.data = {{"ok", "hostPath:/x", "/x", true, std::nullopt},
                   {"bad", "s4://x", "/y", true, std::nullopt}};
  Result<RenderedVolumes> r = RenderDataVolumes(job, VolumeOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("spec.data[1].source: unknown scheme", 0), 0u)
      << r.status().message();
}

}  // namespace
}  // namespace dljob::controller
