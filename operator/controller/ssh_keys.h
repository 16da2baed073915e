// Per-job SSH keys: the key pair the launcher uses to reach every worker's sshd.
//
// GenerateSshKeyPair makes a fresh Ed25519 key with OpenSSL and writes it in the formats OpenSSH
// reads: the private key as an unencrypted "OPENSSH PRIVATE KEY" block (what ssh-keygen writes),
// the public key as one authorized_keys line ("ssh-ed25519 AAAA… comment"). Each job gets its own
// key, so one job's pods can never log in to another's. The reconciler takes a generator as a
// std::function so tests can pass a fixed pair. Thread-safe.
#pragma once

#include <functional>
#include <string>

#include "base/status.h"

namespace dljob::controller {

struct SshKeyPair {
  std::string private_key;     // "-----BEGIN OPENSSH PRIVATE KEY-----\n…"
  std::string authorized_key;  // "ssh-ed25519 AAAA… <comment>\n"
};

using SshKeyGenerator = std::function<Result<SshKeyPair>(const std::string& comment)>;

Result<SshKeyPair> GenerateSshKeyPair(const std::string& comment);

}  // namespace dljob::controller
