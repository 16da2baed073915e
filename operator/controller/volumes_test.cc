#include "operator/controller/volumes.h"

#include <gtest/gtest.h>

#include "jobs/volume_source.h"

namespace dljob::controller {
namespace {

using json = nlohmann::json;

// A spec.data entry without a Secret of its own (the operator's --oss-secret applies).
DataVolume Volume(std::string name, std::string source, std::string mount_path, bool read_only,
                  std::optional<CacheSpec> cache = std::nullopt) {
  return {.name = std::move(name),
          .source = std::move(source),
          .mount_path = std::move(mount_path),
          .read_only = read_only,
          .cache = std::move(cache),
          .secret_name = std::nullopt};
}

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
  job.spec.data = {Volume("ds", c.source, "/data", c.read_only)};
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
        Case{
            "PvcWithSubpath", "pvc:datasets/imagenet/train", false,
            R"({"name":"data-ds","persistentVolumeClaim":{"claimName":"datasets","readOnly":false}})",
            R"({"name":"data-ds","mountPath":"/data","readOnly":false,"subPath":"imagenet/train"})"},
        Case{
            "Nfs", "nas://nas.example.com/export/imagenet", true,
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
  job.spec.data = {Volume("ok", "hostPath:/x", "/x", true), Volume("bad", "s4://x", "/y", true)};
  Result<RenderedVolumes> r = RenderDataVolumes(job, VolumeOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("spec.data[1].source: unknown scheme", 0), 0u)
      << r.status().message();
}

DLJob CachedJob(const std::string& source, const std::string& name = "ds") {
  DLJob job;
  job.spec.image = "registry.example.com/dljob/trainer:cuda";
  job.spec.data = {
      Volume(name, source, "/data/ds", true, CacheSpec{"LocalSSD", "/mnt/nvme/dljob-cache"})};
  return job;
}

std::string Subdir(const std::string& source) { return CacheSubdir(*ParseVolumeSource(source)); }

TEST(RenderDataVolumes, ACachedOssSourceIsFetchedByAnInitContainerWithSecretCredentials) {
  const std::string source = "oss://bucket/imagenet/train";
  VolumeOptions options;
  options.oss_endpoint = "oss-cn-hangzhou-internal.aliyuncs.com";
  options.oss_secret = "team-oss";
  Result<RenderedVolumes> r = RenderDataVolumes(CachedJob(source), options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::string subdir = Subdir(source);
  EXPECT_EQ(r->volumes, json::parse(R"([{"name":"cache-ds",
      "hostPath":{"path":"/mnt/nvme/dljob-cache","type":"DirectoryOrCreate"}}])"))
      << "no FUSE mount: the init container reads the bucket through the API";
  EXPECT_EQ(r->mounts, json::array({{{"name", "cache-ds"},
                                     {"mountPath", "/data/ds"},
                                     {"readOnly", true},
                                     {"subPath", subdir}}}));
  ASSERT_EQ(r->init_containers.size(), 1u);
  const json& c = r->init_containers[0];
  EXPECT_EQ(c["name"], "cache-ds");
  EXPECT_EQ(c["image"], "registry.example.com/dljob/trainer:cuda");
  EXPECT_EQ(c["command"], json::array({"dljob", "data", "cache", "--from", source, "--to",
                                       "/dljob/cache/" + subdir}));
  EXPECT_EQ(c["volumeMounts"], json::parse(R"([{"name":"cache-ds","mountPath":"/dljob/cache"}])"));
  EXPECT_EQ(c["env"], json::parse(R"([
      {"name":"OSS_ENDPOINT","value":"oss-cn-hangzhou-internal.aliyuncs.com"},
      {"name":"OSS_ACCESS_KEY_ID","valueFrom":{"secretKeyRef":{"name":"team-oss","key":"akId"}}},
      {"name":"OSS_ACCESS_KEY_SECRET",
       "valueFrom":{"secretKeyRef":{"name":"team-oss","key":"akSecret"}}}])"));
}

TEST(RenderDataVolumes, WithoutAnEndpointOptionTheEndpointComesFromTheSecret) {
  Result<RenderedVolumes> r = RenderDataVolumes(CachedJob("oss://bucket/x"), VolumeOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(
      r->init_containers[0]["env"][0],
      json::parse(
          R"({"name":"OSS_ENDPOINT","valueFrom":{"secretKeyRef":{"name":"dljob-oss","key":"endpoint"}}})"));
}

TEST(RenderDataVolumes, AnEntrysSecretNameOverridesTheOperatorsSecret) {
  DLJob job = CachedJob("oss://bucket/x");
  job.spec.data[0].secret_name = "vision-team-oss";
  job.spec.data.push_back(Volume("plain", "oss://bucket/y", "/data/y", true));
  VolumeOptions options;
  options.oss_secret = "operator-default";
  Result<RenderedVolumes> r = RenderDataVolumes(job, options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(
      r->init_containers[0]["env"][1],
      json::parse(
          R"({"name":"OSS_ACCESS_KEY_ID","valueFrom":{"secretKeyRef":{"name":"vision-team-oss","key":"akId"}}})"));
  ASSERT_EQ(r->volumes.size(), 2u);
  EXPECT_EQ(r->volumes[1]["csi"]["nodePublishSecretRef"]["name"], "operator-default")
      << "an entry without secretName keeps the operator's Secret";
}

TEST(RenderDataVolumes, ACachedNasSourceIsMountedReadOnlyIntoTheInitContainerOnly) {
  const std::string source = "nas://nas.example.com/export/imagenet";
  Result<RenderedVolumes> r = RenderDataVolumes(CachedJob(source), VolumeOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->volumes, json::parse(R"([
      {"name":"cache-ds","hostPath":{"path":"/mnt/nvme/dljob-cache","type":"DirectoryOrCreate"}},
      {"name":"data-ds","nfs":{"server":"nas.example.com","path":"/export/imagenet","readOnly":true}}
    ])"));
  ASSERT_EQ(r->mounts.size(), 1u) << "the trainer sees only the copy";
  EXPECT_EQ(r->mounts[0]["name"], "cache-ds");
  EXPECT_EQ(r->mounts[0]["subPath"], Subdir(source));
  const json& c = r->init_containers[0];
  EXPECT_EQ(c["command"], json::array({"dljob", "data", "cache", "--from", "/dljob/source/ds",
                                       "--to", "/dljob/cache/" + Subdir(source)}));
  EXPECT_EQ(c["volumeMounts"], json::parse(R"([
      {"name":"data-ds","mountPath":"/dljob/source/ds","readOnly":true},
      {"name":"cache-ds","mountPath":"/dljob/cache"}])"));
  EXPECT_FALSE(c.contains("env"));
}

TEST(RenderDataVolumes, ACachedPvcKeepsItsSubpathInTheInitContainer) {
  Result<RenderedVolumes> r = RenderDataVolumes(CachedJob("pvc:datasets/fmnist"), VolumeOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(
      r->volumes[1],
      json::parse(
          R"({"name":"data-ds","persistentVolumeClaim":{"claimName":"datasets","readOnly":true}})"));
  EXPECT_EQ(
      r->init_containers[0]["volumeMounts"][0],
      json::parse(
          R"({"name":"data-ds","mountPath":"/dljob/source/ds","readOnly":true,"subPath":"fmnist"})"));
}

TEST(RenderDataVolumes, UncachedEntriesHaveNoInitContainerAndMixWithCachedOnes) {
  DLJob job = CachedJob("hostPath:/srv/fmnist", "cached");
  job.spec.data.push_back(Volume("plain", "oss://bucket/x", "/data/x", true));
  Result<RenderedVolumes> r = RenderDataVolumes(job, VolumeOptions{});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->init_containers.size(), 1u);
  EXPECT_EQ(r->init_containers[0]["name"], "cache-cached");
  ASSERT_EQ(r->volumes.size(), 3u);
  EXPECT_EQ(r->volumes[1],
            json::parse(
                R"({"name":"data-cached","hostPath":{"path":"/srv/fmnist","type":"Directory"}})"));
  EXPECT_TRUE(r->volumes[2].contains("csi"));
  EXPECT_EQ(r->mounts[1],
            json::parse(R"({"name":"data-plain","mountPath":"/data/x","readOnly":true})"));
  EXPECT_TRUE(RenderDataVolumes(DLJob{}, VolumeOptions{})->init_containers.empty());
}

}  // namespace
}  // namespace dljob::controller
