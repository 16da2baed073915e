// The Env contract, checked on both implementations: the real filesystem (in a temporary
// directory) and MemEnv. A component tested on MemEnv can then trust it behaves as on disk.
#include "base/env.h"

#include <unistd.h>

#include <filesystem>
#include <memory>

#include <gtest/gtest.h>

#include "base/testing/mem_env.h"

namespace dljob {
namespace {

struct EnvCase {
  const char* name;
  bool in_memory;
};

class EnvContractTest : public ::testing::TestWithParam<EnvCase> {
 protected:
  void SetUp() override {
    if (GetParam().in_memory) {
      mem_ = std::make_unique<testing::MemEnv>();
      env_ = mem_.get();
      root_ = "/root";
    } else {
      env_ = &DefaultEnv();
      char tmpl[] = "/tmp/dljob-env-test-XXXXXX";
      ASSERT_NE(mkdtemp(tmpl), nullptr);
      root_ = std::string(tmpl) + "/root";
      owned_dir_ = tmpl;
    }
    ASSERT_TRUE(env_->CreateDirs(root_).ok());
  }
  void TearDown() override {
    if (!owned_dir_.empty()) std::filesystem::remove_all(owned_dir_);
  }
  std::string P(const std::string& rel) const { return root_ + "/" + rel; }

  std::unique_ptr<testing::MemEnv> mem_;
  Env* env_ = nullptr;
  std::string root_, owned_dir_;
};

TEST_P(EnvContractTest, WrittenFilesReadBackAndAreReplacedWhole) {
  ASSERT_TRUE(env_->WriteFileAtomically(P("a.json"), "first").ok());
  EXPECT_EQ(*env_->ReadFile(P("a.json")), "first");
  ASSERT_TRUE(env_->WriteFileAtomically(P("a.json"), "2nd").ok());
  EXPECT_EQ(*env_->ReadFile(P("a.json")), "2nd");
  EXPECT_TRUE(env_->FileExists(P("a.json")));
  // No temporary file is left beside it.
  EXPECT_EQ(*env_->ListDir(root_), std::vector<std::string>{"a.json"});
}

TEST_P(EnvContractTest, MissingThingsAreNotFound) {
  EXPECT_EQ(env_->ReadFile(P("nope")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(env_->ListDir(P("nope")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(env_->RemoveAll(P("nope")).code(), StatusCode::kNotFound);
  EXPECT_EQ(env_->WriteFileAtomically(P("no/dir/file"), "x").code(), StatusCode::kNotFound);
  EXPECT_EQ(env_->CreateDir(P("no/parent")).code(), StatusCode::kNotFound);
  EXPECT_FALSE(env_->FileExists(P("nope")));
}

TEST_P(EnvContractTest, CreateDirIsExclusiveAndCreateDirsIsNot) {
  ASSERT_TRUE(env_->CreateDir(P("job")).ok());
  EXPECT_EQ(env_->CreateDir(P("job")).code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(env_->CreateDirs(P("job")).ok());
  EXPECT_TRUE(env_->CreateDirs(P("x/y/z")).ok());
  EXPECT_TRUE(env_->FileExists(P("x/y")));
}

TEST_P(EnvContractTest, ListDirNamesDirectEntriesSorted) {
  ASSERT_TRUE(env_->CreateDirs(P("d/sub/deeper")).ok());
  ASSERT_TRUE(env_->WriteFileAtomically(P("d/b"), "").ok());
  ASSERT_TRUE(env_->WriteFileAtomically(P("d/a"), "").ok());
  ASSERT_TRUE(env_->WriteFileAtomically(P("d/sub/c"), "").ok());
  EXPECT_EQ(*env_->ListDir(P("d")), (std::vector<std::string>{"a", "b", "sub"}));
}

TEST_P(EnvContractTest, RemoveAllTakesEverythingBelow) {
  ASSERT_TRUE(env_->CreateDirs(P("d/sub")).ok());
  ASSERT_TRUE(env_->WriteFileAtomically(P("d/sub/f"), "x").ok());
  ASSERT_TRUE(env_->WriteFileAtomically(P("dd"), "sibling with a common prefix").ok());
  ASSERT_TRUE(env_->RemoveAll(P("d")).ok());
  EXPECT_FALSE(env_->FileExists(P("d/sub/f")));
  EXPECT_FALSE(env_->FileExists(P("d")));
  EXPECT_TRUE(env_->FileExists(P("dd")));
}

TEST_P(EnvContractTest, AppendableFilesGrowAtTheEndAndKeepWhatWasThere) {
  ASSERT_TRUE(env_->WriteFileAtomically(P("log"), "old\n").ok());
  {
    Result<std::unique_ptr<AppendableFile>> file = env_->NewAppendableFile(P("log"));
    ASSERT_TRUE(file.ok()) << file.status().message();
    ASSERT_TRUE((*file)->Append("one\n").ok());
    EXPECT_EQ(*env_->ReadFile(P("log")), "old\none\n");  // visible before the file is closed
    ASSERT_TRUE((*file)->Append("two\n").ok());
  }
  EXPECT_EQ(*env_->ReadFile(P("log")), "old\none\ntwo\n");
  Result<std::unique_ptr<AppendableFile>> fresh = env_->NewAppendableFile(P("new"));
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(*env_->ReadFile(P("new")), "");  // created empty
  Result<std::unique_ptr<AppendableFile>> nowhere = env_->NewAppendableFile(P("no/dir/log"));
  EXPECT_EQ(nowhere.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(nowhere.status().message(),
            "cannot open \"" + P("no/dir/log") + "\": No such file or directory");
  EXPECT_EQ(env_->NewAppendableFile(root_).status().code(), StatusCode::kUnavailable);
}

TEST_P(EnvContractTest, ReadingAMissingFileNamesThePath) {
  Result<std::string> missing = env_->ReadFile(P("nope"));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "cannot open \"" + P("nope") + "\": No such file or directory");
}

TEST_P(EnvContractTest, RenameFileReplacesTheTargetWhole) {
  ASSERT_TRUE(env_->WriteFileAtomically(P("a"), "new").ok());
  ASSERT_TRUE(env_->WriteFileAtomically(P("b"), "old").ok());
  ASSERT_TRUE(env_->RenameFile(P("a"), P("b")).ok());
  EXPECT_EQ(*env_->ReadFile(P("b")), "new");
  EXPECT_FALSE(env_->FileExists(P("a")));
  Status missing = env_->RenameFile(P("a"), P("c"));
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.message(),
            "cannot rename \"" + P("a") + "\" to \"" + P("c") + "\": No such file or directory");
  ASSERT_TRUE(env_->CreateDir(P("d")).ok());
  EXPECT_EQ(env_->RenameFile(P("b"), P("d")).code(), StatusCode::kUnavailable);
  EXPECT_EQ(*env_->ReadFile(P("b")), "new");  // a failed rename leaves both sides as they were
}

TEST_P(EnvContractTest, SyncedAppendsAreKeptAndRenamedIntoPlace) {
  // The download pattern: append to a part file, sync it, rename it over the final name.
  ASSERT_TRUE(env_->WriteFileAtomically(P("object"), "stale").ok());
  {
    Result<std::unique_ptr<AppendableFile>> part = env_->NewAppendableFile(P("object.part"));
    ASSERT_TRUE(part.ok());
    ASSERT_TRUE((*part)->Append("fresh ").ok());
    ASSERT_TRUE((*part)->Append("bytes").ok());
    ASSERT_TRUE((*part)->Sync().ok());
  }
  ASSERT_TRUE(env_->RenameFile(P("object.part"), P("object")).ok());
  EXPECT_EQ(*env_->ReadFile(P("object")), "fresh bytes");
  EXPECT_EQ(*env_->ListDir(root_), std::vector<std::string>{"object"});
}

TEST_P(EnvContractTest, AtomicWriteOverADirectoryFailsAndLeavesNoTemporary) {
  ASSERT_TRUE(env_->CreateDir(P("d")).ok());
  Status s = env_->WriteFileAtomically(P("d"), "x");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(P("d")), std::string::npos) << s.message();
  EXPECT_EQ(*env_->ListDir(root_), std::vector<std::string>{"d"});
}

INSTANTIATE_TEST_SUITE_P(Both, EnvContractTest,
                         ::testing::Values(EnvCase{"Posix", false}, EnvCase{"Memory", true}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(MemEnvTest, InjectedWriteFailuresChangeNothing) {
  testing::MemEnv env;
  ASSERT_TRUE(env.CreateDirs("/s").ok());
  ASSERT_TRUE(env.WriteFileAtomically("/s/job.json", "old").ok());
  env.FailWrites(2, Status::Unavailable("disk full"));
  EXPECT_EQ(env.WriteFileAtomically("/s/job.json", "new").message(), "disk full");
  EXPECT_EQ(env.CreateDir("/s/other").code(), StatusCode::kUnavailable);
  EXPECT_EQ(*env.ReadFile("/s/job.json"), "old");
  EXPECT_FALSE(env.FileExists("/s/other"));
  EXPECT_TRUE(env.WriteFileAtomically("/s/job.json", "new").ok());  // the third write succeeds
  EXPECT_EQ(*env.ReadFile("/s/job.json"), "new");
  env.FailWrites(1, Status::Unavailable("disk full"));
  EXPECT_EQ(env.RenameFile("/s/job.json", "/s/moved").message(), "disk full");
  EXPECT_EQ(*env.ReadFile("/s/job.json"), "new");
  EXPECT_FALSE(env.FileExists("/s/moved"));
}

TEST(MemEnvTest, InjectedFailuresHitAppendsAndOpensForAppending) {
  testing::MemEnv env;
  ASSERT_TRUE(env.CreateDirs("/s").ok());
  Result<std::unique_ptr<AppendableFile>> log = env.NewAppendableFile("/s/log");
  ASSERT_TRUE(log.ok());
  ASSERT_TRUE((*log)->Append("a\n").ok());
  env.FailWrites(2, Status::Unavailable("disk full"));
  EXPECT_EQ((*log)->Append("b\n").message(), "disk full");
  EXPECT_EQ(env.NewAppendableFile("/s/other").status().message(), "disk full");
  EXPECT_EQ(*env.ReadFile("/s/log"), "a\n");
  EXPECT_FALSE(env.FileExists("/s/other"));
  ASSERT_TRUE((*log)->Append("c\n").ok());  // the third write succeeds
  EXPECT_EQ(*env.ReadFile("/s/log"), "a\nc\n");
  // Removed while open: appends still succeed and go nowhere, as to an unlinked file.
  ASSERT_TRUE(env.RemoveAll("/s/log").ok());
  EXPECT_TRUE((*log)->Append("d\n").ok());
  EXPECT_FALSE(env.FileExists("/s/log"));
}

}  // namespace
}  // namespace dljob
