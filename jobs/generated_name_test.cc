#include "jobs/generated_name.h"

#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "jobs/child_names.h"
#include "jobs/validation.h"

namespace dljob {
namespace {

using Command = std::vector<std::string>;

struct Row {
  const char* why;
  Command command;
  std::string image;
  int64_t workers;
  std::string prefix;
};

const std::string k48(48, 'a');  // the longest base for up to 10 workers: 48 + '-' + 5 = 54

const Row kRows[] = {
    // The model of a dljob-train command, in either flag form, wherever dljob-train sits.
    {"model=", {"dljob-train", "--model=resnet50"}, "trainer:cuda", 2, "resnet50-"},
    {"model value", {"dljob-train", "--batch_size", "64", "--model", "vgg16"}, "t", 2, "vgg16-"},
    {"model under mpirun",
     {"mpirun", "-np", "2", "/opt/dljob/bin/dljob-train", "--model=alexnet"},
     "t",
     2,
     "alexnet-"},
    {"underscores", {"dljob-train", "--model=mnist_cnn"}, "t", 2, "mnist-cnn-"},
    {"upper case", {"dljob-train", "--model=InceptionV3"}, "t", 2, "inceptionv3-"},
    {"runs of others", {"dljob-train", "--model=__ResNet..50__"}, "t", 2, "resnet-50-"},
    {"a digit first", {"dljob-train", "--model=3d_unet"}, "t", 2, "dljob-3d-unet-"},
    {"first --model wins", {"dljob-train", "--model=a1", "--model=b2"}, "t", 2, "a1-"},
    // No model: the image's repository, without registry, port, path, tag or digest.
    {"no model flag", {"dljob-train", "--num_batches=10"}, "dljob/trainer:cpu", 1, "trainer-"},
    {"--model without a value", {"dljob-train", "--model"}, "trainer", 1, "trainer-"},
    {"not dljob-train",
     {"python", "train.py", "--model=bert"},
     "pytorch/pytorch:2.1",
     1,
     "pytorch-"},
    {"a script named like it",
     {"/bin/sh", "-c", "dljob-train --model=x"},
     "busybox",
     1,
     "busybox-"},
    {"empty model", {"dljob-train", "--model="}, "ubuntu", 1, "ubuntu-"},
    {"model of symbols", {"dljob-train", "--model=__"}, "ubuntu", 1, "ubuntu-"},
    {"bare image", {"true"}, "ubuntu", 1, "ubuntu-"},
    {"tag", {"true"}, "ubuntu:22.04", 1, "ubuntu-"},
    {"registry", {"true"}, "registry.example.com/dljob/trainer", 1, "trainer-"},
    {"registry with port and tag",
     {"true"},
     "registry.example.com:5000/team/trainer:cuda-12",
     1,
     "trainer-"},
    {"localhost port, no tag", {"true"}, "localhost:5000/trainer", 1, "trainer-"},
    {"digest", {"true"}, "nvcr.io/nvidia/pytorch@sha256:0123abcd", 1, "pytorch-"},
    {"tag and digest", {"true"}, "ghcr.io/org/My_Trainer:v1@sha256:0123abcd", 1, "my-trainer-"},
    {"image digit first", {"true"}, "r/2048-game:latest", 1, "dljob-2048-game-"},
    // Nothing usable: the fallback.
    {"no command, no image", {}, "", 1, "dljob-"},
    {"image of symbols", {"true"}, "registry.example.com/___:tag", 1, "dljob-"},
    {"image ending in /", {"true"}, "registry.example.com/", 1, "dljob-"},
    // Cut to fit: prefix + 5 within MaxJobNameLength(workers); no '-' doubled by the cut.
    {"exactly fits", {"dljob-train", "--model=" + k48}, "t", 10, k48 + "-"},
    {"one too long", {"dljob-train", "--model=" + k48 + "b"}, "t", 10, k48 + "-"},
    {"11 workers: one less",
     {"dljob-train", "--model=" + k48},
     "t",
     11,
     std::string(47, 'a') + "-"},
    {"16384 workers", {"dljob-train", "--model=" + k48}, "t", kMaxGpus, std::string(44, 'a') + "-"},
    {"cut at a dash",
     {"dljob-train", "--model=" + std::string(47, 'a') + "-bcd"},
     "t",
     1,
     std::string(47, 'a') + "-"},
    {"no workers counts as one", {"dljob-train", "--model=" + k48 + "b"}, "t", 0, k48 + "-"},
};

TEST(GeneratedName, PrefixFromTheModelElseTheImage) {
  for (const Row& r : kRows) {
    std::string prefix = GenerateNamePrefix(r.command, r.image, r.workers);
    EXPECT_EQ(prefix, r.prefix) << r.why;
    EXPECT_EQ(CheckGenerateName(prefix, std::max<int64_t>(r.workers, 1)), "") << r.why;
    EXPECT_EQ(prefix.back(), '-') << r.why;
  }
}

TEST(GeneratedName, TheJobFormCountsTheJobsWorkers) {
  DLJob job;
  job.spec.command = {"dljob-train", "--model=" + std::string(60, 'm')};
  job.spec.image = "t";
  job.spec.gpus = 800;
  job.spec.gpus_per_worker = 8;  // 100 workers: "-worker-99", names up to 53
  EXPECT_EQ(GenerateNamePrefix(job), std::string(47, 'm') + "-");
  EXPECT_EQ(GenerateNamePrefix(job), GenerateNamePrefix(job.spec.command, job.spec.image, 100));
}

// Every name made from every prefix above, with any suffix, is a valid job name.
TEST(GeneratedName, EveryNameMadeIsAValidJobName) {
  Rng rng(7);
  for (const Row& r : kRows) {
    std::string prefix = GenerateNamePrefix(r.command, r.image, r.workers);
    for (int i = 0; i < 20; ++i) {
      std::string name = prefix + GeneratedNameSuffix(rng);
      EXPECT_EQ(CheckJobName(name, std::max<int64_t>(r.workers, 1)), "") << name;
    }
  }
}

TEST(GeneratedName, TheSuffixIsFiveCharactersOfTheApiServersAlphabet) {
  Rng rng(1);
  std::map<char, int> seen;
  for (int i = 0; i < 2000; ++i) {
    std::string suffix = GeneratedNameSuffix(rng);
    ASSERT_EQ(suffix.size(), kGeneratedSuffixLength);
    for (char c : suffix) ++seen[c];
  }
  EXPECT_EQ(std::string(kGeneratedNameAlphabet), "bcdfghjklmnpqrstvwxz2456789");
  ASSERT_EQ(seen.size(), 27u) << "every character of the alphabet, and no other, is drawn";
  for (const auto& [c, n] : seen) {
    EXPECT_NE(std::string(kGeneratedNameAlphabet).find(c), std::string::npos) << c;
    EXPECT_GT(n, 10000 / 27 / 2) << c;  // 10,000 draws: about 370 each
    EXPECT_LT(n, 10000 / 27 * 2) << c;
  }
  Rng a(42), b(42);
  EXPECT_EQ(GeneratedNameSuffix(a), GeneratedNameSuffix(b)) << "one seed, one name";
}

TEST(GeneratedName, DrawFreeNameSkipsTakenNamesAndGivesUpAfterTheAttempts) {
  Rng reference(3);
  std::vector<std::string> draws;
  for (int i = 0; i < kGenerateNameAttempts + 1; ++i) {
    draws.push_back("mnist-cnn-" + GeneratedNameSuffix(reference));
  }
  ASSERT_EQ(std::set<std::string>(draws.begin(), draws.end()).size(), draws.size());

  for (int taken_count = 0; taken_count <= kGenerateNameAttempts; ++taken_count) {
    std::set<std::string> taken(draws.begin(), draws.begin() + taken_count);
    std::vector<std::string> asked;
    Rng rng(3);
    std::optional<std::string> name =
        DrawFreeName("mnist-cnn-", rng, [&](const std::string& candidate) {
          asked.push_back(candidate);
          return taken.count(candidate) > 0;
        });
    if (taken_count < kGenerateNameAttempts) {
      ASSERT_TRUE(name.has_value()) << taken_count;
      EXPECT_EQ(*name, draws[taken_count]) << "the first draw not taken";
      EXPECT_EQ(asked.size(), static_cast<size_t>(taken_count + 1));
    } else {
      EXPECT_FALSE(name.has_value()) << "8 taken in a row: given up, as the API server does";
      EXPECT_EQ(asked.size(), static_cast<size_t>(kGenerateNameAttempts));
    }
  }
  Rng rng(3);
  EXPECT_FALSE(DrawFreeName(
                   "p-", rng, [](const std::string&) { return true; }, 2)
                   .has_value());
}

}  // namespace
}  // namespace dljob
