#include "storage/idx_reader.h"

#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace dljob::storage {
namespace {

namespace fs = std::filesystem;

class IdxReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("idx_reader_test." + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string WritePlain(const std::string& name, const std::vector<uint8_t>& bytes) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    return path;
  }

  std::string WriteGzip(const std::string& name, const std::vector<uint8_t>& bytes) {
    std::string path = (dir_ / name).string();
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
    return path;
  }

  static IdxArray Sample() {
    IdxArray a;
    a.dims = {2, 3, 2};
    for (int i = 0; i < 12; ++i) a.data.push_back(static_cast<uint8_t>(i * 20));
    return a;
  }

  fs::path dir_;
};

TEST_F(IdxReaderTest, RoundTripsPlainAndGzipped) {
  const IdxArray sample = Sample();
  for (const std::string& path :
       {WritePlain("a.idx", EncodeIdx(sample)), WriteGzip("a.idx.gz", EncodeIdx(sample))}) {
    Result<IdxArray> read = ReadIdxFile(path);
    ASSERT_TRUE(read.ok()) << read.status().message();
    EXPECT_EQ(read->dims, sample.dims);
    EXPECT_EQ(read->data, sample.data);
    EXPECT_EQ(read->num_elements(), 12);
  }
}

TEST_F(IdxReaderTest, MissingFileIsNotFound) {
  Result<IdxArray> read = ReadIdxFile((dir_ / "nope").string());
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kNotFound);
  EXPECT_NE(read.status().message().find("nope"), std::string::npos);
}

TEST_F(IdxReaderTest, TruncatedDataSaysHowMuchIsMissing) {
  std::vector<uint8_t> bytes = EncodeIdx(Sample());
  bytes.resize(bytes.size() - 5);
  Result<IdxArray> read = ReadIdxFile(WritePlain("t.idx", bytes));
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("truncated: header promises 12 bytes of data, file has 7"),
            std::string::npos)
      << read.status().message();
}

TEST_F(IdxReaderTest, TruncatedGzipStreamIsCorrupt) {
  std::string path = WriteGzip("t.gz", EncodeIdx(Sample()));
  fs::resize_file(path, fs::file_size(path) - 10);
  Result<IdxArray> read = ReadIdxFile(path);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("corrupt gzip data"), std::string::npos)
      << read.status().message();
}

TEST_F(IdxReaderTest, GarbledGzipStreamIsCorrupt) {
  std::string path = WriteGzip("g.gz", EncodeIdx(Sample()));
  std::vector<uint8_t> bytes = *ReadMaybeGzipped(WritePlain("copy", {}));  // empty file reads fine
  EXPECT_TRUE(bytes.empty());
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(12);
  f.write("\xff\xff\xff\xff\xff\xff", 6);
  f.close();
  Result<IdxArray> read = ReadIdxFile(path);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("g.gz"), std::string::npos);
}

TEST(ParseIdxTest, RejectsMalformedHeaders) {
  struct Case {
    std::vector<uint8_t> bytes;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{0, 0}, "too short"},
      {{1, 0, 8, 1, 0, 0, 0, 0}, "bad magic"},
      {{0, 0, 0x0d, 1, 0, 0, 0, 0}, "unsupported IDX element type 0x0d"},
      {{0, 0, 8, 0}, "bad IDX dimension count 0"},
      {{0, 0, 8, 2, 0, 0, 0, 1}, "truncated IDX header"},
      {{0, 0, 8, 1, 0, 0, 0, 1, 7, 7}, "1 unexpected bytes after the data"},
  };
  for (const Case& c : cases) {
    Result<IdxArray> parsed = ParseIdx(c.bytes, "x");
    ASSERT_FALSE(parsed.ok()) << c.expected;
    EXPECT_NE(parsed.status().message().find(c.expected), std::string::npos)
        << parsed.status().message();
    EXPECT_EQ(parsed.status().message().rfind("x: ", 0), 0u);
  }
}

TEST(ParseIdxTest, ReadsBigEndianDimensions) {
  std::vector<uint8_t> bytes = {0, 0, 8, 1, 0, 0, 1, 2};  // one dimension of 258
  bytes.resize(bytes.size() + 258, 9);
  Result<IdxArray> parsed = ParseIdx(bytes, "x");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->dims, std::vector<int64_t>{258});
}

}  // namespace
}  // namespace dljob::storage
