#include "cli/local/local_volumes.h"

#include <gtest/gtest.h>

#include "jobs/volume_source.h"

namespace dljob {
namespace {

LocalMachine Machine() {
  LocalMachine m;
  m.pvc_root = "/var/dljob/pvc";
  m.cache_root = "/state/dljob/cache";
  m.mounts = ParseProcMounts(
      "sysfs /sys sysfs rw,nosuid 0 0\n"
      "nas.example.com:/export /mnt/nas nfs4 rw,relatime,vers=4.1 0 0\n"
      "nas.example.com:/export/imagenet/ /mnt/imagenet nfs rw 0 0\n"
      "other.example.com:/datasets /mnt/my\\040data nfs4 rw 0 0\n"
      "nas.example.com:/scratch /mnt/fuse fuse.sshfs rw 0 0\n"
      "broken-line\n");
  return m;
}

Result<ResolvedVolume> Resolve(const std::string& source,
                               std::optional<CacheSpec> cache = std::nullopt) {
  DataVolume v{"ds", source, "/data", true, cache, std::nullopt};
  return ResolveLocalVolume(v, 2, Machine());
}

std::string Subdir(const std::string& source) { return CacheSubdir(*ParseVolumeSource(source)); }

TEST(ParseProcMounts, ReadsDeviceMountPointAndTypeAndDecodesEscapes) {
  std::vector<MountEntry> mounts = Machine().mounts;
  ASSERT_EQ(mounts.size(), 5u) << "the malformed line is skipped";
  EXPECT_EQ(mounts[1].device, "nas.example.com:/export");
  EXPECT_EQ(mounts[1].mount_point, "/mnt/nas");
  EXPECT_EQ(mounts[1].fstype, "nfs4");
  EXPECT_EQ(mounts[3].mount_point, "/mnt/my data");
}

TEST(ResolveLocalVolume, HostPathIsReadInPlace) {
  Result<ResolvedVolume> r = Resolve("hostPath:/srv/fmnist");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->volume.local_path, "/srv/fmnist");
  EXPECT_EQ(r->volume.mount_path, "/data");
  EXPECT_FALSE(r->fetch.has_value());
}

TEST(ResolveLocalVolume, PvcIsADirectoryUnderThePvcRoot) {
  Result<ResolvedVolume> r = Resolve("pvc:claim/sub");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->volume.local_path, "/var/dljob/pvc/claim/sub");
  EXPECT_FALSE(r->fetch.has_value());
}

TEST(ResolveLocalVolume, NasUsesTheDeepestMountOfTheExport) {
  Result<ResolvedVolume> r = Resolve("nas://nas.example.com/export/fmnist/train");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->volume.local_path, "/mnt/nas/fmnist/train");
  EXPECT_FALSE(r->fetch.has_value());

  r = Resolve("nas://nas.example.com:2049/export/imagenet/val");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->volume.local_path, "/mnt/imagenet/val") << "deeper export wins; port ignored";

  r = Resolve("nas://nas.example.com/export");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->volume.local_path, "/mnt/nas");

  r = Resolve("nas://other.example.com/datasets/x");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->volume.local_path, "/mnt/my data/x");
}

TEST(ResolveLocalVolume, AnUnmountedNasExportSaysToMountItOrUseHostPath) {
  for (const char* source : {"nas://nas.example.com/exports/x",     // not a path segment match
                             "nas://nas.example.com/scratch/x",     // mounted, but not over NFS
                             "nas://nas2.example.com/export/x"}) {  // another server
    SCOPED_TRACE(source);
    Result<ResolvedVolume> r = Resolve(source);
    ASSERT_FALSE(r.ok());
    const std::string msg = r.status().message();
    EXPECT_EQ(msg.rfind("spec.data[2].source: " + std::string(source) + " is not mounted", 0), 0u)
        << msg;
    EXPECT_NE(msg.find("sudo mount -t nfs "), std::string::npos) << msg;
    EXPECT_NE(msg.find("use hostPath:"), std::string::npos) << msg;
  }
}

TEST(ResolveLocalVolume, OssIsFetchedIntoTheDefaultCache) {
  Result<ResolvedVolume> r = Resolve("oss://bucket/datasets/fmnist");
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->fetch.has_value());
  EXPECT_EQ(r->fetch->field, "spec.data[2]");
  EXPECT_EQ(r->fetch->from, "oss://bucket/datasets/fmnist");
  EXPECT_EQ(r->fetch->to, "/state/dljob/cache/" + Subdir("oss://bucket/datasets/fmnist"));
  EXPECT_EQ(r->volume.local_path, r->fetch->to);
}

TEST(ResolveLocalVolume, ACachePathHoldsThisDatasetsCopyInItsOwnDirectory) {
  Result<ResolvedVolume> r = Resolve("oss://bucket/fmnist", CacheSpec{"LocalSSD", "/mnt/nvme/c"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->fetch->to, "/mnt/nvme/c/" + Subdir("oss://bucket/fmnist"));
}

TEST(ResolveLocalVolume, ACacheOnLocalSourcesCopiesTheResolvedDirectory) {
  CacheSpec ssd{"LocalSSD", "/mnt/nvme"};
  Result<ResolvedVolume> r = Resolve("hostPath:/srv/fmnist", ssd);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->fetch.has_value());
  EXPECT_EQ(r->fetch->from, "/srv/fmnist");
  EXPECT_EQ(r->fetch->to, "/mnt/nvme/" + Subdir("hostPath:/srv/fmnist"));
  EXPECT_EQ(r->volume.local_path, r->fetch->to);

  r = Resolve("nas://nas.example.com/export/fmnist", ssd);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->fetch->from, "/mnt/nas/fmnist");
  EXPECT_EQ(r->fetch->to, "/mnt/nvme/" + Subdir("nas://nas.example.com/export/fmnist"));

  r = Resolve("pvc:claim", ssd);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->fetch->from, "/var/dljob/pvc/claim");
}

TEST(ResolveLocalVolume, ABadSourceNamesItsField) {
  Result<ResolvedVolume> r = Resolve("s4://x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("spec.data[2].source: unknown scheme", 0), 0u);
}

}  // namespace
}  // namespace dljob
