#include "cli/local/data_fetch.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "base/testing/fake_clock.h"

namespace dljob {
namespace {

namespace fs = std::filesystem;

class Notices : public JobObserver {
 public:
  void OnOutput(int, bool, std::string_view) override {}
  void OnUpdate(const DLJob&) override {}
  void OnNotice(std::string_view message) override { lines.emplace_back(message); }
  std::vector<std::string> lines;
};

class FetchDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/dljob-fetch-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    fs::create_directories(root_ + "/src/sub");
    std::ofstream(root_ + "/src/a.idx") << "images";
    std::ofstream(root_ + "/src/sub/b.idx") << "labels";
  }
  void TearDown() override { fs::remove_all(root_); }
  static std::optional<std::string> NoEnv(const std::string&) { return std::nullopt; }

  std::string root_;
  Notices observer_;
  dljob::testing::FakeClock clock_;
};

TEST_F(FetchDataTest, CopiesADirectoryThenOnlyWhatChanged) {
  DataFetch f{"spec.data[0]", root_ + "/src", root_ + "/cache/ds"};
  ASSERT_TRUE(FetchData({f}, NoEnv, observer_, clock_).ok());
  std::ifstream in(root_ + "/cache/ds/sub/b.idx");
  std::string content((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(content, "labels");
  ASSERT_EQ(observer_.lines.size(), 2u);
  EXPECT_EQ(observer_.lines[0], "fetching " + f.from + " → " + f.to);
  EXPECT_EQ(observer_.lines[1].rfind("fetched " + f.from + ": 2 objects (", 0), 0u)
      << observer_.lines[1];

  observer_.lines.clear();
  std::ofstream(root_ + "/src/c.idx") << "new file";
  ASSERT_TRUE(FetchData({f}, NoEnv, observer_, clock_).ok());
  ASSERT_EQ(observer_.lines.size(), 2u);
  EXPECT_NE(observer_.lines[1].find(": 3 objects"), std::string::npos) << observer_.lines[1];
  EXPECT_NE(observer_.lines[1].find("1 copied, 2 already there"), std::string::npos)
      << observer_.lines[1];
  EXPECT_TRUE(fs::exists(root_ + "/cache/ds/c.idx"));
}

TEST_F(FetchDataTest, AnEmptySourceIsAnErrorNotAnEmptyDataset) {
  fs::create_directories(root_ + "/empty");
  Status s =
      FetchData({{"spec.data[1]", root_ + "/empty", root_ + "/cache/e"}}, NoEnv, observer_, clock_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "spec.data[1].source: " + root_ +
                             "/empty holds no objects (nothing to fetch); check the bucket and "
                             "prefix");
}

TEST_F(FetchDataTest, AMissingDirectoryNamesTheField) {
  Status s =
      FetchData({{"spec.data[2]", root_ + "/nope", root_ + "/cache/n"}}, NoEnv, observer_, clock_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("spec.data[2].source", 0), 0u) << s.message();
  EXPECT_TRUE(observer_.lines.empty()) << "nothing was fetched";
}

TEST_F(FetchDataTest, AnOssSourceWithoutEndpointSaysWhichVariablesToSet) {
  Status s =
      FetchData({{"spec.data[0]", "oss://bucket/x", root_ + "/cache/o"}}, NoEnv, observer_, clock_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("spec.data[0].source: oss://bucket/x: no endpoint", 0), 0u)
      << s.message();
  EXPECT_NE(s.message().find("never the spec: set OSS_ENDPOINT"), std::string::npos);
}

}  // namespace
}  // namespace dljob
