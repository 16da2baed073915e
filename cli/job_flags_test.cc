#include "cli/job_flags.h"

#include <gtest/gtest.h>

namespace dljob {
namespace {

TEST(SplitDataFlag, SplitsAtTheMountPath) {
  auto r = SplitDataFlag("hostPath:/srv/mnist:/data/mnist");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->first, "hostPath:/srv/mnist");
  EXPECT_EQ(r->second, "/data/mnist");
  r = SplitDataFlag("oss://bucket/imagenet/train:/data/imagenet");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->first, "oss://bucket/imagenet/train");
  EXPECT_EQ(r->second, "/data/imagenet");
  r = SplitDataFlag("pvc:datasets/mnist:/data");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->first, "pvc:datasets/mnist");
  EXPECT_EQ(r->second, "/data");
}

TEST(SplitDataFlag, RejectsAValueWithoutMountPath) {
  for (const char* bad : {"hostPath:/srv/mnist", "oss://bucket/x", "/data", "nothing"}) {
    auto r = SplitDataFlag(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("expected SOURCE:MOUNTPATH"), std::string::npos);
  }
}

TEST(VolumeNameFromMountPath, MakesADnsLabel) {
  EXPECT_EQ(VolumeNameFromMountPath("/data/fashion-mnist"), "fashion-mnist");
  EXPECT_EQ(VolumeNameFromMountPath("/data/ImageNet_Train/"), "imagenet-train");
  EXPECT_EQ(VolumeNameFromMountPath("/"), "");
}

TEST(ApplySubmitFlags, BuildsTheJobAFileWouldDescribe) {
  SubmitFlags f;
  f.name = "mnist";
  f.gpus = 2;
  f.image = "dljob/trainer:cpu";
  f.env = {"A=1", "B=x=y"};
  f.data = {"hostPath:/usr/share/datasets/fashion-mnist:/data/fashion-mnist"};
  f.command = {"dljob-train", "--model=mnist_cnn"};
  DLJob job;
  ASSERT_TRUE(ApplySubmitFlags(f, job).ok());
  EXPECT_EQ(job.metadata.name, "mnist");
  EXPECT_EQ(job.spec.gpus, 2);
  EXPECT_EQ(job.spec.image, "dljob/trainer:cpu");
  ASSERT_EQ(job.spec.env.size(), 2u);
  EXPECT_EQ(job.spec.env[1].name, "B");
  EXPECT_EQ(job.spec.env[1].value, "x=y");
  ASSERT_EQ(job.spec.data.size(), 1u);
  EXPECT_EQ(job.spec.data[0].name, "fashion-mnist");
  EXPECT_EQ(job.spec.data[0].source, "hostPath:/usr/share/datasets/fashion-mnist");
  EXPECT_EQ(job.spec.data[0].mount_path, "/data/fashion-mnist");
  EXPECT_EQ(job.spec.command, f.command);
}

TEST(ApplySubmitFlags, OverridesAFileAndReplacesEnvByName) {
  DLJob job;
  job.metadata.name = "from-file";
  job.spec.gpus = 16;
  job.spec.env = {{"A", "old"}};
  job.spec.command = {"train"};
  SubmitFlags f;
  f.name = "override";
  f.gpus = 2;
  f.env = {"A=new"};
  ASSERT_TRUE(ApplySubmitFlags(f, job).ok());
  EXPECT_EQ(job.metadata.name, "override");
  EXPECT_EQ(job.spec.gpus, 2);
  ASSERT_EQ(job.spec.env.size(), 1u);
  EXPECT_EQ(job.spec.env[0].value, "new");
  EXPECT_EQ(job.spec.command, std::vector<std::string>{"train"});  // no command given: kept
}

TEST(ApplySubmitFlags, NamesTheBadFlag) {
  SubmitFlags f;
  f.env = {"NOEQUALS"};
  DLJob job;
  Status s = ApplySubmitFlags(f, job);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "--env \"NOEQUALS\": expected KEY=VALUE");
}

}  // namespace
}  // namespace dljob
