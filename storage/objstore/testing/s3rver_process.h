// S3rverProcess: a real S3-compatible server (the npm package s3rver, installed by
// scripts/dev/setup.sh into .deps/s3rver) run as a child process on 127.0.0.1 for tests.
//
// Start() launches `node --openssl-legacy-provider .../s3rver -d <temp dir> -a 127.0.0.1 -p 0
// --configure-bucket <bucket>` in its own process group and reads the port it prints. The
// destructor kills the group by PID and removes the data directory, also when a test fails. s3rver
// checks SigV4 signatures with the fixed credentials S3RVER/S3RVER — though it only checks the
// access key id of a V4 signature (sigv4_test.cc checks the signing itself against AWS's published
// values). Multipart uploads (s3rver 3.7): Create, UploadPart and Complete work; there is no
// AbortMultipartUpload (DELETE ?uploadId answers 405 MethodNotAllowed), and Complete checks
// neither the parts' ETags nor S3's 5 MiB minimum part size (so tests may use small parts), and
// gives the object a plain MD5 ETag rather than S3's "md5-N".
//
// s3rver is a test dependency like any package: when it is missing, Start() fails with a message
// that says to run scripts/dev/setup.sh (which fails loudly if it cannot install it), and the test
// fails. Tests must not skip for it: a suite that skips its object-store tests has not passed.
// Not thread-safe; one owner.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "storage/objstore/object_url.h"
#include "testing/command.h"

namespace dljob::storage::testing {

class S3rverProcess {
 public:
  // The s3rver entry script, or "" when it (or node) is not installed.
  static std::string ScriptPath();
  // What is missing and what to do about it (run scripts/dev/setup.sh).
  static std::string InstallHint();
  // For programs that are not tests (bench/), which may print InstallHint() and stop. Tests call
  // Start() and fail on its error instead of skipping.
  static bool Available() { return !ScriptPath().empty(); }

  explicit S3rverProcess(std::string bucket = "dljob-test") : bucket_(std::move(bucket)) {}
  ~S3rverProcess();

  // Launches s3rver. kFailedPrecondition naming scripts/dev/setup.sh when it is not installed.
  Status Start();
  const std::string& bucket() const { return bucket_; }
  int port() const { return port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  S3Config Config() const;  // endpoint, region us-east-1, S3RVER/S3RVER
  ObjectUrl Url() const { return {"s3", bucket_, ""}; }

 private:
  std::string bucket_;
  int port_ = 0;
  std::unique_ptr<dljob::testing::TempDir> dir_;
  std::unique_ptr<dljob::testing::Background> process_;
};

}  // namespace dljob::storage::testing
