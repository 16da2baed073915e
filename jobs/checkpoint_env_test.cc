#include "jobs/checkpoint_env.h"

#include <gtest/gtest.h>

namespace dljob {
namespace {

using Args = std::vector<std::string>;

TEST(CheckpointEnv, TheDirectoryAndEverySetField) {
  EXPECT_EQ(CheckpointEnv(CheckpointSpec{"pvc:c", "/ckpt", 500, 1800, 2}, "/ckpt"),
            (std::vector<EnvVar>{{"DLJOB_CHECKPOINT_DIR", "/ckpt"},
                                 {"DLJOB_CHECKPOINT_EVERY_STEPS", "500"},
                                 {"DLJOB_CHECKPOINT_EVERY_SECONDS", "1800"},
                                 {"DLJOB_CHECKPOINT_KEEP", "2"}}));
  EXPECT_EQ(
      CheckpointEnv(CheckpointSpec{"pvc:c", std::nullopt, std::nullopt, std::nullopt, std::nullopt},
                    "/local/ckpt"),
      (std::vector<EnvVar>{{"DLJOB_CHECKPOINT_DIR", "/local/ckpt"}}));
}

TEST(IsDljobTrain, ByBaseName) {
  EXPECT_TRUE(IsDljobTrain("dljob-train"));
  EXPECT_TRUE(IsDljobTrain("/usr/local/bin/dljob-train"));
  EXPECT_FALSE(IsDljobTrain("dljob-train.sh"));
  EXPECT_FALSE(IsDljobTrain("python3"));
  EXPECT_FALSE(IsDljobTrain(""));
}

struct FlagCase {
  const char* name;
  CheckpointSpec checkpoint;
  Args command;
  Args want;
};

class WithCheckpointFlagsCase : public ::testing::TestWithParam<FlagCase> {};

TEST_P(WithCheckpointFlagsCase, AddsWhatTheCommandDoesNotSet) {
  EXPECT_EQ(WithCheckpointFlags(GetParam().command, GetParam().checkpoint, "/ckpt"),
            GetParam().want);
}

const FlagCase kFlagCases[] = {
    {"EveryField",
     {"pvc:c", "/ckpt", 500, 1800, 2},
     {"dljob-train", "--model=resnet50"},
     {"dljob-train", "--model=resnet50", "--checkpoint_dir=/ckpt", "--checkpoint_every=500",
      "--checkpoint_every_seconds=1800", "--checkpoint_keep=2"}},
    {"SecondsOnlyTurnsStepsOff",
     {"pvc:c", "/ckpt", std::nullopt, 600, 3},
     {"/opt/bin/dljob-train"},
     {"/opt/bin/dljob-train", "--checkpoint_dir=/ckpt", "--checkpoint_every=0",
      "--checkpoint_every_seconds=600", "--checkpoint_keep=3"}},
    {"TheCommandWinsFlagByFlag",
     {"pvc:c", "/ckpt", 500, std::nullopt, 3},
     {"dljob-train", "--checkpoint_dir=/mine", "--checkpoint_keep", "9"},
     {"dljob-train", "--checkpoint_dir=/mine", "--checkpoint_keep", "9", "--checkpoint_every=500"}},
    {"APrefixIsNotTheFlag",
     {"pvc:c", "/ckpt", 100, std::nullopt, std::nullopt},
     {"dljob-train", "--checkpoint_every_seconds=60"},
     {"dljob-train", "--checkpoint_every_seconds=60", "--checkpoint_dir=/ckpt",
      "--checkpoint_every=100"}},
    {"TheProgramItselfIsNotAFlag",
     {"pvc:c", "/ckpt", std::nullopt, std::nullopt, std::nullopt},
     {"dljob-train"},
     {"dljob-train", "--checkpoint_dir=/ckpt"}},
    {"OtherProgramsGetOnlyTheEnvironment",
     {"pvc:c", "/ckpt", 500, 60, 2},
     {"python3", "train.py", "dljob-train"},
     {"python3", "train.py", "dljob-train"}},
    {"AShellWrapperIsLeftAlone",
     {"pvc:c", "/ckpt", 500, std::nullopt, 2},
     {"/bin/sh", "-c", "dljob-train --model=mnist_cnn"},
     {"/bin/sh", "-c", "dljob-train --model=mnist_cnn"}},
    {"Empty", {"pvc:c", "/ckpt", 500, std::nullopt, 2}, {}, {}},
};

INSTANTIATE_TEST_SUITE_P(Cases, WithCheckpointFlagsCase, ::testing::ValuesIn(kFlagCases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace dljob
