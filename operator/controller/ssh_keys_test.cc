#include "operator/controller/ssh_keys.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace dljob::controller {
namespace {

std::string RunCapture(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  std::array<char, 512> buf{};
  while (fgets(buf.data(), buf.size(), pipe)) out += buf.data();
  pclose(pipe);
  return out;
}

TEST(SshKeys, EachJobGetsItsOwnEd25519Key) {
  Result<SshKeyPair> a = GenerateSshKeyPair("dljob@ns/a");
  Result<SshKeyPair> b = GenerateSshKeyPair("dljob@ns/b");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->authorized_key.rfind("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI", 0), 0u)
      << a->authorized_key;
  EXPECT_EQ(a->authorized_key.substr(a->authorized_key.size() - 12), " dljob@ns/a\n");
  EXPECT_EQ(a->private_key.rfind("-----BEGIN OPENSSH PRIVATE KEY-----\n", 0), 0u);
  EXPECT_NE(a->authorized_key, b->authorized_key);
  EXPECT_NE(a->private_key, b->private_key);
}

// OpenSSH itself must read the private key and derive the same public key.
TEST(SshKeys, SshKeygenReadsThePrivateKey) {
  ASSERT_EQ(std::system("command -v ssh-keygen >/dev/null 2>&1"), 0)
      << "ssh-keygen (a test dependency, Debian package openssh-client) is not installed; run "
         "scripts/dev/setup.sh, which installs it and fails if it cannot";
  Result<SshKeyPair> pair = GenerateSshKeyPair("dljob@ns/j");
  ASSERT_TRUE(pair.ok());
  char dir_template[] = "/tmp/dljob-sshkey-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  std::string dir = dir_template, file = dir + "/id";
  { std::ofstream(file) << pair->private_key; }
  chmod(file.c_str(), 0600);
  std::string derived = RunCapture("ssh-keygen -y -f " + file + " 2>&1");
  unlink(file.c_str());
  rmdir(dir.c_str());
  // ssh-keygen prints "<type> <base64> <comment>"; compare type and key.
  std::string expected = pair->authorized_key.substr(0, pair->authorized_key.rfind(' '));
  EXPECT_EQ(derived.substr(0, expected.size()), expected) << derived;
}

}  // namespace
}  // namespace dljob::controller
