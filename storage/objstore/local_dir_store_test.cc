// LocalDirStore against a real temporary directory.
#include "storage/objstore/local_dir_store.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "testing/command.h"

namespace dljob::storage {
namespace {

namespace fs = std::filesystem;

class LocalDirStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<LocalDirStore>> s = LocalDirStore::Open(dir_.path());
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
  }
  testing::TempDir dir_;
  std::unique_ptr<LocalDirStore> store_;
};

TEST_F(LocalDirStoreTest, PutGetHeadDeleteRoundTrip) {
  std::string data("binary\0bytes", 12);
  ASSERT_TRUE(store_->Put("a/b/c.bin", data).ok());
  EXPECT_TRUE(fs::is_regular_file(dir_.path() + "/a/b/c.bin"));
  Result<std::string> got = store_->Get("a/b/c.bin");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, data);
  Result<ObjectInfo> head = store_->Head("a/b/c.bin");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->key, "a/b/c.bin");
  EXPECT_EQ(head->size, 12u);
  EXPECT_FALSE(head->etag.empty());
  EXPECT_FALSE(IsMd5Etag(head->etag));

  ASSERT_TRUE(store_->Delete("a/b/c.bin").ok());
  EXPECT_EQ(store_->Get("a/b/c.bin").status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(fs::exists(dir_.path() + "/a")) << "empty directories are removed";
  EXPECT_TRUE(store_->Delete("a/b/c.bin").ok()) << "deleting a missing key is not an error";
}

TEST_F(LocalDirStoreTest, PutReplacesAndLeavesNoTemporaryFiles) {
  ASSERT_TRUE(store_->Put("k", "first version").ok());
  const std::string etag1 = store_->Head("k")->etag;
  ASSERT_TRUE(store_->Put("k", "second").ok());
  EXPECT_EQ(*store_->Get("k"), "second");
  EXPECT_NE(store_->Head("k")->etag, etag1);
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir_.path())) {
    ++files;
    EXPECT_EQ(e.path().filename().string().find(kLocalTempMarker), std::string::npos);
  }
  EXPECT_EQ(files, 1);
}

TEST_F(LocalDirStoreTest, RangesAndTheirErrorsNameTheObject) {
  ASSERT_TRUE(store_->Put("r", "0123456789").ok());
  EXPECT_EQ(*store_->GetRange("r", 2, 3), "234");
  EXPECT_EQ(*store_->GetRange("r", 8, 100), "89") << "a range past the end is cut short";
  Result<std::string> past = store_->GetRange("r", 10, 1);
  EXPECT_EQ(past.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(past.status().message().find(dir_.path() + "/r"), std::string::npos)
      << past.status().message();
  Result<std::string> missing = store_->GetRange("nope", 0, 1);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), dir_.path() + "/nope: not found");
}

TEST_F(LocalDirStoreTest, RejectsKeysThatEscapeTheRoot) {
  // A bucket one level down, so an escape would land inside this test's own directory.
  fs::create_directories(dir_.path() + "/bucket");
  Result<std::unique_ptr<LocalDirStore>> nested = LocalDirStore::Open(dir_.path() + "/bucket");
  ASSERT_TRUE(nested.ok()) << nested.status().message();
  for (const char* key : {"../x", "a/../../x", "/etc/passwd", "a//b", "", "a/./b", "dir/"}) {
    Status s = (*nested)->Put(key, "x");
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << key;
    EXPECT_EQ((*nested)->Get(key).status().code(), StatusCode::kInvalidArgument) << key;
  }
  EXPECT_FALSE(fs::exists(dir_.path() + "/x"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_.path() + "/bucket"), {}), 0);
}

TEST_F(LocalDirStoreTest, ListsByPrefixInKeyOrderWithPages) {
  std::vector<std::string> keys;
  for (int i = 0; i < 25; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "train/part-%03d", (i * 7) % 25);  // written out of order
    keys.push_back(name);
    ASSERT_TRUE(store_->Put(name, std::string(i, 'x')).ok());
  }
  ASSERT_TRUE(store_->Put("trainer.txt", "no").ok());
  ASSERT_TRUE(store_->Put("val/part-000", "v").ok());
  std::ofstream(dir_.path() + "/train/" + kLocalTempMarker + "abc") << "in flight";
  std::sort(keys.begin(), keys.end());

  std::vector<std::string> seen;
  ListOptions options{.prefix = "train/", .continuation_token = "", .max_keys = 10};
  int pages = 0;
  while (true) {
    Result<ListPage> page = store_->List(options);
    ASSERT_TRUE(page.ok()) << page.status().message();
    ++pages;
    EXPECT_LE(page->objects.size(), 10u);
    for (const ObjectInfo& o : page->objects) seen.push_back(o.key);
    if (page->next_token.empty()) break;
    options.continuation_token = page->next_token;
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(seen, keys);

  Result<std::vector<ObjectInfo>> all = ListAll(*store_, "train");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 26u) << "\"train\" also matches trainer.txt";
  EXPECT_TRUE(ListAll(*store_, "nothing/here")->empty());
}

TEST(LocalDirStoreOpen, NeedsAnExistingDirectory) {
  EXPECT_EQ(LocalDirStore::Open("/nonexistent/dljob").status().code(), StatusCode::kNotFound);
  testing::TempDir dir;
  std::ofstream(dir.path() + "/file") << "x";
  EXPECT_EQ(LocalDirStore::Open(dir.path() + "/file").status().code(),
            StatusCode::kInvalidArgument);
  Result<std::unique_ptr<LocalDirStore>> s = LocalDirStore::Open(dir.path() + "/");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->Url("k"), dir.path() + "/k");
}

TEST(ObjectKeys, Md5EtagShape) {
  EXPECT_TRUE(IsMd5Etag("9e107d9d372bb6826bd81d3542a419d6"));
  EXPECT_FALSE(IsMd5Etag("9e107d9d372bb6826bd81d3542a419d6-2"));  // multipart
  EXPECT_FALSE(IsMd5Etag("9e107d9d372bb6826bd81d3542a419dz"));
}

}  // namespace
}  // namespace dljob::storage
