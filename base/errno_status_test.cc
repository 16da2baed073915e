#include "base/errno_status.h"

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>

namespace dljob {
namespace {

TEST(ErrnoStatusTest, NamesWhatFailedOnWhatAndWhy) {
  Status s = ErrnoStatus("cannot open", "/data/labels.txt", ENOENT);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "cannot open \"/data/labels.txt\": No such file or directory");
}

TEST(ErrnoStatusTest, WithoutAPathNamesOnlyWhatFailed) {
  EXPECT_EQ(ErrnoStatus("pipe", "", EMFILE).message(),
            std::string("pipe: ") + std::strerror(EMFILE));
}

TEST(ErrnoStatusTest, CodeFollowsTheErrno) {
  EXPECT_EQ(ErrnoStatus("x", "p", ENOENT).code(), StatusCode::kNotFound);
  EXPECT_EQ(ErrnoStatus("x", "p", EEXIST).code(), StatusCode::kAlreadyExists);
  for (int err : {EACCES, EIO, ENOSPC, EISDIR, ENOTDIR, EROFS, EMFILE}) {
    EXPECT_EQ(ErrnoStatus("x", "p", err).code(), StatusCode::kUnavailable) << err;
  }
}

TEST(ErrnoStatusTest, ReadsErrnoWhenNotGivenOne) {
  errno = ENOSPC;
  Status s = ErrnoStatus("cannot write", "/full");
  EXPECT_EQ(s.message(), std::string("cannot write \"/full\": ") + std::strerror(ENOSPC));
}

}  // namespace
}  // namespace dljob
