#include "images/trainer/flags.h"

#include <sstream>

#include <gtest/gtest.h>

namespace dljob::trainer {
namespace {

struct Parsed {
  std::optional<int> exit;
  TrainConfig config;
  std::string out, err;
};

Parsed Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "dljob-train");
  Parsed p;
  std::ostringstream out, err;
  p.exit = ParseFlags(static_cast<int>(args.size()), args.data(), {"mnist_cnn", "mnist_mlp"},
                      &p.config, out, err);
  p.out = out.str();
  p.err = err.str();
  return p;
}

TEST(FlagsTest, Defaults) {
  Parsed p = Parse({});
  EXPECT_FALSE(p.exit.has_value());
  EXPECT_EQ(p.config.model, "mnist_cnn");
  EXPECT_EQ(p.config.batch_size, 32);
  EXPECT_EQ(p.config.num_warmup_batches, 5);
  EXPECT_DOUBLE_EQ(p.config.momentum, 0.9);
  EXPECT_EQ(p.config.data_name, DataName::kFashionMnist);
  EXPECT_EQ(p.config.collective, CollectiveChoice::kAuto);
  EXPECT_EQ(p.config.data_dir, "/usr/share/datasets/fashion-mnist");
  EXPECT_TRUE(p.config.eval);
}

TEST(FlagsTest, EqualsAndSpaceFormsBothWork) {
  Parsed p = Parse({"--model=mnist_mlp", "--batch_size", "16", "--num_batches=20",
                    "--learning_rate", "0.1", "--data_name=synthetic", "--eval=false", "--seed=7",
                    "--dump_params", "/tmp/p", "--print_losses"});
  ASSERT_FALSE(p.exit.has_value()) << p.err;
  EXPECT_EQ(p.config.model, "mnist_mlp");
  EXPECT_EQ(p.config.batch_size, 16);
  EXPECT_EQ(p.config.num_batches, 20);
  EXPECT_DOUBLE_EQ(p.config.learning_rate, 0.1);
  EXPECT_EQ(p.config.data_name, DataName::kSynthetic);
  EXPECT_FALSE(p.config.eval);
  EXPECT_EQ(p.config.seed, 7u);
  EXPECT_EQ(p.config.dump_params, "/tmp/p");
  EXPECT_TRUE(p.config.print_losses);
}

TEST(FlagsTest, CheckpointFlags) {
  Parsed defaults = Parse({});
  EXPECT_EQ(defaults.config.checkpoint_dir, "");
  EXPECT_EQ(defaults.config.checkpoint_every, 500);
  EXPECT_EQ(defaults.config.checkpoint_every_seconds, 0);
  EXPECT_EQ(defaults.config.checkpoint_keep, 3);
  Parsed p = Parse({"--checkpoint_dir=/ckpt", "--checkpoint_every=0", "--checkpoint_every_seconds",
                    "600", "--checkpoint_keep=2"});
  ASSERT_FALSE(p.exit.has_value()) << p.err;
  EXPECT_EQ(p.config.checkpoint_dir, "/ckpt");
  EXPECT_EQ(p.config.checkpoint_every, 0);
  EXPECT_EQ(p.config.checkpoint_every_seconds, 600);
  EXPECT_EQ(p.config.checkpoint_keep, 2);
  EXPECT_EQ(Parse({"--checkpoint_every_seconds=-1"}).exit, kUsageExitCode);
}

TEST(FlagsTest, ElasticLrScalingNeedsACheckpointDir) {
  EXPECT_FALSE(Parse({}).config.elastic_lr_scaling);
  Parsed p = Parse({"--checkpoint_dir=/ckpt", "--elastic_lr_scaling", "--trace_samples=/t"});
  ASSERT_FALSE(p.exit.has_value()) << p.err;
  EXPECT_TRUE(p.config.elastic_lr_scaling);
  EXPECT_EQ(p.config.trace_samples, "/t");
  Parsed alone = Parse({"--elastic_lr_scaling"});
  EXPECT_EQ(alone.exit, kUsageExitCode);
  EXPECT_NE(alone.err.find("--elastic_lr_scaling says how a run resumes a checkpoint written at "
                           "another rank count, and there is no --checkpoint_dir"),
            std::string::npos)
      << alone.err;
}

TEST(FlagsTest, HelpListsFlagsAndModelsAndExitsZero) {
  Parsed p = Parse({"--help"});
  ASSERT_EQ(p.exit, 0);
  for (const char* needle : {"--batch_size", "--num_warmup_batches", "--data_dir", "mnist_mlp"}) {
    EXPECT_NE(p.out.find(needle), std::string::npos) << needle;
  }
}

TEST(FlagsTest, DataFormatAndMixedPrecision) {
  Parsed defaults = Parse({});
  EXPECT_EQ(defaults.config.data_format, DataFormat::kNchw);
  EXPECT_FALSE(defaults.config.use_fp16);
  Parsed p = Parse({"--data_format=NHWC", "--use_fp16"});
  ASSERT_FALSE(p.exit.has_value()) << p.err;
  EXPECT_EQ(p.config.data_format, DataFormat::kNhwc);
  EXPECT_TRUE(p.config.use_fp16);
  EXPECT_EQ(Parse({"--data_format", "NCWH"}).exit, kUsageExitCode);
}

TEST(FlagsTest, BadValuesAreUsageErrorsWithAHint) {
  for (std::vector<const char*> args : {std::vector<const char*>{"--batch_size=0"},
                                        {"--data_name=cifar10"},
                                        {"--bogus"},
                                        {"--learning_rate=abc"}}) {
    Parsed p = Parse(args);
    EXPECT_EQ(p.exit, kUsageExitCode) << args[0];
    EXPECT_EQ(p.err.rfind("dljob-train: error: ", 0), 0u) << p.err;
    EXPECT_NE(p.err.find("\nhint: "), std::string::npos);
  }
}

TEST(FlagsTest, VariableUpdateAndCommunicationFlags) {
  Parsed defaults = Parse({});
  EXPECT_EQ(defaults.config.variable_update, VariableUpdate::kAllreduce);
  EXPECT_EQ(defaults.config.allreduce_alg, AllreduceAlg::kRing);
  EXPECT_EQ(defaults.config.hierarchical_local_size, 0);
  EXPECT_FALSE(defaults.config.fp16_allreduce);
  EXPECT_TRUE(defaults.config.overlap_backward);
  EXPECT_EQ(defaults.config.timeline, "");
  Parsed p = Parse({"--allreduce_alg=hierarchical", "--hierarchical_local_size", "2",
                    "--fp16_allreduce", "--overlap_backward=false", "--timeline=/tmp/t.json"});
  ASSERT_FALSE(p.exit.has_value()) << p.err;
  EXPECT_EQ(p.config.allreduce_alg, AllreduceAlg::kHierarchical);
  EXPECT_EQ(p.config.hierarchical_local_size, 2);
  EXPECT_TRUE(p.config.fp16_allreduce);
  EXPECT_FALSE(p.config.overlap_backward);
  EXPECT_EQ(p.config.timeline, "/tmp/t.json");
  Parsed ps = Parse({"--variable_update", "parameter_server"});
  ASSERT_FALSE(ps.exit.has_value()) << ps.err;
  EXPECT_EQ(ps.config.variable_update, VariableUpdate::kParameterServer);
  EXPECT_EQ(Parse({"--variable_update=replicated"}).exit, kUsageExitCode);
  EXPECT_EQ(Parse({"--allreduce_alg=tree"}).exit, kUsageExitCode);
}

TEST(FlagsTest, ConflictingCombinationsNameBothFlags) {
  struct Case {
    std::vector<const char*> args;
    std::vector<const char*> named;
  };
  for (const Case& c :
       std::vector<Case>{{{"--variable_update=parameter_server", "--allreduce_alg=hierarchical"},
                          {"--variable_update=parameter_server", "--allreduce_alg=hierarchical"}},
                         {{"--variable_update=parameter_server", "--fp16_allreduce"},
                          {"--variable_update=parameter_server", "--fp16_allreduce"}},
                         {{"--variable_update=parameter_server", "--collective=nccl"},
                          {"--variable_update=parameter_server", "--collective=mpi"}},
                         {{"--allreduce_alg=hierarchical", "--collective=nccl"},
                          {"--allreduce_alg=hierarchical", "--collective=mpi"}},
                         {{"--hierarchical_local_size=2"},
                          {"--hierarchical_local_size=2", "--allreduce_alg=hierarchical"}}}) {
    Parsed p = Parse(c.args);
    EXPECT_EQ(p.exit, kUsageExitCode) << c.args[0];
    EXPECT_EQ(p.err.rfind("dljob-train: error: ", 0), 0u) << p.err;
    for (const char* name : c.named) EXPECT_NE(p.err.find(name), std::string::npos) << p.err;
  }
  // parameter_server on MPI, hierarchical with simulated nodes: fine.
  EXPECT_FALSE(Parse({"--variable_update=parameter_server", "--collective=mpi"}).exit);
  EXPECT_FALSE(Parse({"--allreduce_alg=hierarchical", "--hierarchical_local_size=2"}).exit);
}

// Every value of every choice: its name parses back to it, through the command line too.
template <Choice E>
void ExpectEveryNameRoundTrips(const char* flag, E TrainConfig::*field) {
  for (const ChoiceName<E>& c : Choices(E{})) {
    EXPECT_EQ(Name(c.value), c.name);
    Result<E> parsed = ParseChoice<E>(flag, c.name);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(*parsed, c.value);
    const std::string arg = std::string(flag) + "=" + std::string(c.name);
    Parsed p = Parse({arg.c_str()});
    ASSERT_FALSE(p.exit.has_value()) << p.err;
    EXPECT_EQ(p.config.*field, c.value) << arg;
  }
}

TEST(FlagsTest, EveryChoiceNameRoundTrips) {
  ExpectEveryNameRoundTrips("--data_name", &TrainConfig::data_name);
  ExpectEveryNameRoundTrips("--data_format", &TrainConfig::data_format);
  ExpectEveryNameRoundTrips("--collective", &TrainConfig::collective);
  ExpectEveryNameRoundTrips("--variable_update", &TrainConfig::variable_update);
  ExpectEveryNameRoundTrips("--allreduce_alg", &TrainConfig::allreduce_alg);
  ExpectEveryNameRoundTrips("--gradient_compression", &TrainConfig::gradient_compression);
}

TEST(FlagsTest, UnknownChoiceListsTheValidValues) {
  // The error names the flag, the value and every valid spelling, in CLI::IsMember's words.
  struct Case {
    const char* arg;
    const char* error;
  };
  for (const Case& c : std::vector<Case>{
           {"--data_name=cifar10",
            "--data_name: cifar10 not in {fashion-mnist,synthetic,imagenet,kjv}"},
           {"--data_format=NCWH", "--data_format: NCWH not in {NCHW,NHWC}"},
           {"--collective=gloo", "--collective: gloo not in {auto,mpi,nccl}"},
           {"--variable_update=replicated",
            "--variable_update: replicated not in {allreduce,parameter_server}"},
           {"--allreduce_alg=tree", "--allreduce_alg: tree not in {ring,hierarchical}"}}) {
    Parsed p = Parse({c.arg});
    EXPECT_EQ(p.exit, kUsageExitCode) << c.arg;
    EXPECT_EQ(p.err, std::string("dljob-train: error: ") + c.error +
                         "\nhint: run dljob-train --help for the flags and their defaults\n");
  }
  Parsed help = Parse({"--help"});
  EXPECT_NE(help.out.find("--collective TEXT:{auto,mpi,nccl}=auto"), std::string::npos) << help.out;
}

TEST(FlagsTest, RequestedCollectiveIsMpiForTheMpiAlgorithms) {
  EXPECT_EQ(RequestedCollective(Parse({}).config), CollectiveChoice::kAuto);
  EXPECT_EQ(RequestedCollective(Parse({"--collective=nccl"}).config), CollectiveChoice::kNccl);
  EXPECT_EQ(RequestedCollective(Parse({"--variable_update=parameter_server"}).config),
            CollectiveChoice::kMpi);
  EXPECT_EQ(RequestedCollective(Parse({"--allreduce_alg=hierarchical"}).config),
            CollectiveChoice::kMpi);
}

TEST(FlagsTest, MpiThreadMultipleOnlyForASecondMpiThread) {
  EXPECT_TRUE(NeedsMpiThreadMultiple(Parse({}).config));  // watchdog and overlap by default
  EXPECT_TRUE(NeedsMpiThreadMultiple(Parse({"--stall_timeout=0"}).config));         // overlap
  EXPECT_TRUE(NeedsMpiThreadMultiple(Parse({"--overlap_backward=false"}).config));  // watchdog
  EXPECT_FALSE(
      NeedsMpiThreadMultiple(Parse({"--stall_timeout=0", "--overlap_backward=false"}).config));
  EXPECT_FALSE(NeedsMpiThreadMultiple(
      Parse({"--stall_timeout=0", "--variable_update=parameter_server"}).config));
}

// --gradient_compression / --compression_threshold: their own block of flags.
TEST(FlagsTest, GradientCompressionTurnsTheOverlapOffAndRefusesWhatItCannotCombineWith) {
  Parsed defaults = Parse({});
  EXPECT_EQ(defaults.config.gradient_compression, GradientCompression::kNone);
  EXPECT_DOUBLE_EQ(defaults.config.compression_threshold, 0.5);
  EXPECT_TRUE(defaults.config.overlap_backward);

  Parsed p = Parse({"--gradient_compression=2bit", "--compression_threshold=0.02"});
  ASSERT_FALSE(p.exit.has_value()) << p.err;
  EXPECT_EQ(p.config.gradient_compression, GradientCompression::kTwoBit);
  EXPECT_DOUBLE_EQ(p.config.compression_threshold, 0.02);
  EXPECT_FALSE(p.config.overlap_backward) << "2bit exchanges the gradients after backward";
  EXPECT_FALSE(
      NeedsMpiThreadMultiple(Parse({"--gradient_compression=2bit", "--stall_timeout=0"}).config));
  EXPECT_FALSE(Parse({"--gradient_compression=2bit", "--overlap_backward=false"}).exit);
  EXPECT_FALSE(Parse({"--gradient_compression=none"}).exit);

  struct Case {
    std::vector<const char*> args;
    std::vector<const char*> named;
  };
  for (const Case& c :
       std::vector<Case>{{{"--gradient_compression=2bit", "--variable_update=parameter_server"},
                          {"--gradient_compression=2bit", "--variable_update=parameter_server"}},
                         {{"--gradient_compression=2bit", "--fp16_allreduce"},
                          {"--gradient_compression=2bit", "--fp16_allreduce"}},
                         {{"--gradient_compression=2bit", "--allreduce_alg=hierarchical"},
                          {"--gradient_compression=2bit", "--allreduce_alg=hierarchical"}},
                         {{"--gradient_compression=2bit", "--overlap_backward"},
                          {"--gradient_compression=2bit", "--overlap_backward"}},
                         {{"--compression_threshold=0.1"},
                          {"--compression_threshold", "--gradient_compression=2bit"}},
                         {{"--gradient_compression=2bit", "--compression_threshold=0"},
                          {"--compression_threshold"}},
                         {{"--gradient_compression=2bit", "--compression_threshold=-1"},
                          {"--compression_threshold"}},
                         {{"--gradient_compression=4bit"},
                          {"--gradient_compression: 4bit not in {none,2bit}"}}}) {
    Parsed bad = Parse(c.args);
    EXPECT_EQ(bad.exit, kUsageExitCode) << c.args.back();
    EXPECT_EQ(bad.err.rfind("dljob-train: error: ", 0), 0u) << bad.err;
    for (const char* name : c.named) EXPECT_NE(bad.err.find(name), std::string::npos) << bad.err;
  }
}

}  // namespace
}  // namespace dljob::trainer
