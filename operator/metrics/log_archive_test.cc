#include "operator/metrics/log_archive.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "storage/objstore/local_dir_store.h"
#include "storage/objstore/s3_store.h"
#include "storage/objstore/testing/s3rver_process.h"
#include "testing/command.h"

namespace dljob::metrics {
namespace {

const WallTime kT0{std::chrono::seconds(1'800'000'000)};

// The same cases over both forms of the archive: a directory (a PVC's mount) and an S3 bucket
// served by a real s3rver process.
class LogArchiveCases {
 public:
  virtual ~LogArchiveCases() = default;
  storage::ObjectStore& store() { return *store_; }

  void ReadsNothingAsNotFound() {
    LogArchive archive(store(), "logs");
    Result<std::string> log = archive.Read("team-a", "resnet");
    ASSERT_FALSE(log.ok());
    EXPECT_EQ(log.status().code(), StatusCode::kNotFound);
    EXPECT_NE(log.status().message().find("team-a/resnet"), std::string::npos);
  }

  void KeepsIncarnationsInOrderAcrossChunksAndReopens() {
    LogArchiveOptions o;
    o.chunk_bytes = 40;  // a chunk every two lines or so
    LogArchive archive(store(), "logs", o);
    {
      Result<PodLogWriterPtr> w =
          archive.OpenPod("ns", "job", {"job-launcher", "u1", "2024-01-02T03:04:05Z"});
      ASSERT_TRUE(w.ok()) << w.status().message();
      EXPECT_EQ((*w)->archived_lines(), 0);
      for (int i = 0; i < 5; ++i) {
        (*w)->Add("[rank 0] line " + std::to_string(i));
        ASSERT_TRUE(
            (*w)->Flush(false, kT0).ok());  // every line fills a chunk or is the first write
      }
      ASSERT_TRUE((*w)->Flush(true, kT0).ok());
    }
    // A later incarnation (created later, uid sorting first) comes after it.
    {
      Result<PodLogWriterPtr> w =
          archive.OpenPod("ns", "job", {"job-launcher", "a0", "2024-01-02T03:10:00Z"});
      ASSERT_TRUE(w.ok()) << w.status().message();
      (*w)->Add("[rank 0] second");
      ASSERT_TRUE((*w)->Flush(true, kT0).ok());
    }
    // Another archive object over the same store (a second replica, a restarted operator)
    // continues the first pod where it ended.
    LogArchive other(store(), "logs", o);
    Result<PodLogWriterPtr> again =
        other.OpenPod("ns", "job", {"job-launcher", "u1", "2024-01-02T03:04:05Z"});
    ASSERT_TRUE(again.ok()) << again.status().message();
    EXPECT_EQ((*again)->archived_lines(), 5);
    (*again)->Add("[rank 0] line 5");
    ASSERT_TRUE((*again)->Flush(true, kT0).ok());

    Result<std::string> log = other.Read("ns", "job");
    ASSERT_TRUE(log.ok()) << log.status().message();
    EXPECT_EQ(*log,
              "[mpirun] dljob: following launcher pod job-launcher\n"
              "[rank 0] line 0\n[rank 0] line 1\n[rank 0] line 2\n[rank 0] line 3\n"
              "[rank 0] line 4\n[rank 0] line 5\n"
              "[mpirun] dljob: following launcher pod job-launcher\n[rank 0] second\n");
    Result<std::vector<storage::ObjectInfo>> chunks = storage::ListAll(store(), "logs/ns/job/");
    ASSERT_TRUE(chunks.ok());
    EXPECT_GT(chunks->size(), 3u);  // the first pod's log really is in several chunks
    // A job whose name starts like this one's is another job.
    EXPECT_FALSE(other.Read("ns", "jo").ok());
  }

  void WritesAtMostOncePerIntervalUnlessForced() {
    LogArchive archive(store(), "", LogArchiveOptions{});  // 5 s interval
    Result<PodLogWriterPtr> w = archive.OpenPod("ns", "job", {"p", "u", ""});
    ASSERT_TRUE(w.ok());
    (*w)->Add("[rank 0] a");
    ASSERT_TRUE((*w)->Flush(false, kT0).ok());  // the first write goes at once
    (*w)->Add("[rank 0] b");
    ASSERT_TRUE((*w)->Flush(false, kT0 + std::chrono::seconds(4)).ok());
    EXPECT_EQ(archive.Read("ns", "job").value(),
              "[mpirun] dljob: following launcher pod p\n[rank 0] a\n");
    ASSERT_TRUE((*w)->Flush(false, kT0 + std::chrono::seconds(5)).ok());
    EXPECT_EQ(archive.Read("ns", "job").value(),
              "[mpirun] dljob: following launcher pod p\n[rank 0] a\n[rank 0] b\n");
  }

  void OnlyWritesWhileAllowed() {
    bool leading = false;
    LogArchiveOptions o;
    o.may_write = [&leading] {
      return leading ? Status::Ok() : Status::FailedPrecondition("not the leader");
    };
    LogArchive archive(store(), "", o);
    Result<PodLogWriterPtr> w = archive.OpenPod("ns", "job", {"p", "u", ""});
    ASSERT_TRUE(w.ok());
    (*w)->Add("[rank 0] a");
    Status refused = (*w)->Flush(true, kT0);
    EXPECT_FALSE(refused.ok());
    EXPECT_NE(refused.message().find("not the leader"), std::string::npos) << refused.message();
    EXPECT_EQ(archive.Read("ns", "job").status().code(), StatusCode::kNotFound);
    leading = true;  // the lines were kept for the next write
    ASSERT_TRUE((*w)->Flush(true, kT0).ok());
    EXPECT_EQ(archive.Read("ns", "job").value(),
              "[mpirun] dljob: following launcher pod p\n[rank 0] a\n");
  }

  void ReadsTheSingleFileOfEarlierVersionsFirst() {
    ASSERT_TRUE(store().Put("ns/job.log", "[rank 0] old\n").ok());
    LogArchive archive(store(), "");
    EXPECT_EQ(archive.Read("ns", "job").value(), "[rank 0] old\n");
    Result<PodLogWriterPtr> w = archive.OpenPod("ns", "job", {"p", "u", ""});
    ASSERT_TRUE(w.ok());
    (*w)->Add("[rank 0] new");
    ASSERT_TRUE((*w)->Flush(true, kT0).ok());
    EXPECT_EQ(archive.Read("ns", "job").value(),
              "[rank 0] old\n[mpirun] dljob: following launcher pod p\n[rank 0] new\n");
  }

 protected:
  storage::ObjectStorePtr store_;
};

class LogArchiveDirTest : public ::testing::Test, public LogArchiveCases {
 protected:
  void SetUp() override { store_ = std::move(storage::LocalDirStore::Open(dir_.path())).value(); }
  dljob::testing::TempDir dir_;
};

class LogArchiveS3Test : public ::testing::Test, public LogArchiveCases {
 protected:
  void SetUp() override {
    Status started = s3_.Start();
    ASSERT_TRUE(started.ok()) << started.message();
    auto store = storage::S3Store::Open(s3_.Url(), s3_.Config());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(store).value();
  }
  storage::testing::S3rverProcess s3_;
};

#define DLJOB_LOG_ARCHIVE_CASE(name)          \
  TEST_F(LogArchiveDirTest, name) { name(); } \
  TEST_F(LogArchiveS3Test, name) { name(); }

DLJOB_LOG_ARCHIVE_CASE(ReadsNothingAsNotFound)
DLJOB_LOG_ARCHIVE_CASE(KeepsIncarnationsInOrderAcrossChunksAndReopens)
DLJOB_LOG_ARCHIVE_CASE(WritesAtMostOncePerIntervalUnlessForced)
DLJOB_LOG_ARCHIVE_CASE(OnlyWritesWhileAllowed)
DLJOB_LOG_ARCHIVE_CASE(ReadsTheSingleFileOfEarlierVersionsFirst)

}  // namespace
}  // namespace dljob::metrics
