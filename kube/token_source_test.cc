#include "kube/token_source.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "base/testing/fake_clock.h"

namespace dljob::kube {
namespace {

namespace fs = std::filesystem;
using dljob::testing::FakeClock;
using std::chrono::seconds;

class TokenSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "kube_token_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/token";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void WriteToken(const std::string& text) { std::ofstream(path_, std::ios::binary) << text; }

  std::string dir_;
  std::string path_;
  FakeClock clock_;
};

TEST_F(TokenSourceTest, RereadsOnlyAfterTheRefreshInterval) {
  WriteToken("first\n");
  FileTokenSource source(path_, clock_, seconds(60));
  EXPECT_EQ(*source.Token(), "first");
  WriteToken("second");
  clock_.Advance(seconds(59));
  EXPECT_EQ(*source.Token(), "first");  // still cached
  clock_.Advance(seconds(1));
  EXPECT_EQ(*source.Token(), "second");
}

TEST_F(TokenSourceTest, KeepsTheLastGoodTokenWhenTheFileVanishesOrIsEmpty) {
  WriteToken("good");
  FileTokenSource source(path_, clock_, seconds(10));
  EXPECT_EQ(*source.Token(), "good");
  fs::remove(path_);
  clock_.Advance(seconds(10));
  EXPECT_EQ(*source.Token(), "good");
  WriteToken("  \n");
  clock_.Advance(seconds(10));
  EXPECT_EQ(*source.Token(), "good");
  WriteToken("rotated\r\n");
  clock_.Advance(seconds(10));
  EXPECT_EQ(*source.Token(), "rotated");
}

TEST_F(TokenSourceTest, InitialTokenUntilTheFileAppears) {
  FileTokenSource source(path_, clock_, seconds(5), "from-config");
  EXPECT_EQ(*source.Token(), "from-config");
  WriteToken("from-file");
  clock_.Advance(seconds(5));
  EXPECT_EQ(*source.Token(), "from-file");
}

TEST_F(TokenSourceTest, ARefusedTokenMakesTheFileBeReadAgainAtOnce) {
  WriteToken("old");
  FileTokenSource source(path_, clock_, seconds(60));
  EXPECT_EQ(*source.Token(), "old");
  WriteToken("rotated");
  source.Invalidate("older");  // not the current token: no effect
  EXPECT_EQ(*source.Token(), "old");
  source.Invalidate("old");
  EXPECT_EQ(*source.Token(), "rotated");  // no clock advance needed
  WriteToken("later");
  EXPECT_EQ(*source.Token(), "rotated");  // and the refresh interval starts again

  StaticTokenSource fixed("s");
  fixed.Invalidate("s");
  EXPECT_EQ(*fixed.Token(), "s");
}

TEST_F(TokenSourceTest, MakeTokenSourcePrefersTheFile) {
  WriteToken("file-token");
  Config config;
  config.token = "static";
  EXPECT_EQ(*MakeTokenSource(config, clock_)->Token(), "static");
  config.token_file = path_;
  EXPECT_EQ(*MakeTokenSource(config, clock_)->Token(), "file-token");
  EXPECT_EQ(*MakeTokenSource(Config{}, clock_)->Token(), "");
}

}  // namespace
}  // namespace dljob::kube
