// See s3rver_process.h.
#include "storage/objstore/testing/s3rver_process.h"

#include <unistd.h>

#include <filesystem>
#include <regex>

namespace dljob::storage::testing {

std::string S3rverProcess::ScriptPath() {
  const std::string script =
      dljob::testing::SourceDir() + "/.deps/s3rver/node_modules/s3rver/bin/s3rver.js";
  if (!std::filesystem::exists(script)) return "";
  if (::access("/usr/bin/node", X_OK) != 0 && ::access("/usr/local/bin/node", X_OK) != 0) {
    return "";
  }
  return script;
}

std::string S3rverProcess::InstallHint() {
  return "s3rver (a test dependency) is not installed: " + dljob::testing::SourceDir() +
         "/.deps/s3rver/node_modules/s3rver/bin/s3rver.js or node is missing; run "
         "scripts/dev/setup.sh, which installs node, npm and s3rver and fails if it cannot";
}

S3rverProcess::~S3rverProcess() {
  process_.reset();  // SIGKILL to the process group, then reap
  dir_.reset();      // remove the data and log files
}

Status S3rverProcess::Start() {
  const std::string script = ScriptPath();
  if (script.empty()) return Status::FailedPrecondition(InstallHint());
  dir_ = std::make_unique<dljob::testing::TempDir>();
  const std::string data = dir_->path() + "/data";
  std::filesystem::create_directories(data);
  const std::string out = dir_->path() + "/stdout", err = dir_->path() + "/stderr";
  process_ = std::make_unique<dljob::testing::Background>(
      // s3rver's continuation tokens use DES, which Node 17+ only has in OpenSSL's legacy provider.
      std::vector<std::string>{"node", "--openssl-legacy-provider", script, "-d", data, "-a",
                               "127.0.0.1", "-p", "0", "--silent", "--configure-bucket", bucket_},
      std::map<std::string, std::string>{}, out, err);
  const std::regex listening(R"(listening on 127\.0\.0\.1:(\d+))");
  std::smatch m;
  bool up = dljob::testing::WaitFor(
      [&] {
        const std::string text = dljob::testing::ReadFile(out);
        if (!std::regex_search(text, m, listening)) return false;
        port_ = std::stoi(m[1].str());
        return true;
      },
      30000);
  if (!up) {
    return Status::Unavailable("s3rver did not start: " + dljob::testing::ReadFile(err));
  }
  return Status::Ok();
}

S3Config S3rverProcess::Config() const {
  S3Config c;
  c.endpoint = endpoint();
  c.region = "us-east-1";
  c.access_key_id = "S3RVER";
  c.secret_access_key = "S3RVER";
  return c;
}

}  // namespace dljob::storage::testing
