#include "operator/controller/ssh_keys.h"

#include <cstdint>
#include <memory>
#include <vector>

#include <openssl/evp.h>
#include <openssl/rand.h>

namespace dljob::controller {
namespace {

using Bytes = std::vector<unsigned char>;

// The SSH wire encoding (RFC 4251): big-endian uint32, and strings prefixed by their length.
void PutU32(Bytes& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<unsigned char>(v >> shift));
}
void PutString(Bytes& out, const Bytes& s) {
  PutU32(out, static_cast<uint32_t>(s.size()));
  out.insert(out.end(), s.begin(), s.end());
}
void PutString(Bytes& out, const std::string& s) { PutString(out, Bytes(s.begin(), s.end())); }

std::string Base64(const Bytes& in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), in.data(),
                          static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

Bytes PublicBlob(const Bytes& pub) {
  Bytes blob;
  PutString(blob, std::string("ssh-ed25519"));
  PutString(blob, pub);
  return blob;
}

// openssh-key-v1, unencrypted (PROTOCOL.key in the OpenSSH sources describes the layout).
std::string OpenSshPrivateKey(const Bytes& seed, const Bytes& pub, const std::string& comment) {
  uint32_t check = 0;
  RAND_bytes(reinterpret_cast<unsigned char*>(&check), sizeof check);
  Bytes secret(seed);
  secret.insert(secret.end(), pub.begin(), pub.end());  // Ed25519 private key = seed ‖ public
  Bytes priv;
  PutU32(priv, check);
  PutU32(priv, check);
  PutString(priv, std::string("ssh-ed25519"));
  PutString(priv, pub);
  PutString(priv, secret);
  PutString(priv, comment);
  for (unsigned char pad = 1; priv.size() % 8 != 0; ++pad) priv.push_back(pad);

  std::string magic = "openssh-key-v1";
  Bytes body(magic.begin(), magic.end());
  body.push_back(0);
  PutString(body, std::string("none"));  // cipher
  PutString(body, std::string("none"));  // kdf
  PutString(body, std::string());        // kdf options
  PutU32(body, 1);                       // one key
  PutString(body, PublicBlob(pub));
  PutString(body, priv);

  std::string b64 = Base64(body);
  std::string out = "-----BEGIN OPENSSH PRIVATE KEY-----\n";
  for (size_t i = 0; i < b64.size(); i += 70) out += b64.substr(i, 70) + "\n";
  return out + "-----END OPENSSH PRIVATE KEY-----\n";
}

}  // namespace

Result<SshKeyPair> GenerateSshKeyPair(const std::string& comment) {
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(
      EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr), EVP_PKEY_CTX_free);
  EVP_PKEY* raw = nullptr;
  if (!ctx || EVP_PKEY_keygen_init(ctx.get()) <= 0 || EVP_PKEY_keygen(ctx.get(), &raw) <= 0) {
    return Status::Internal("generating the job's SSH key: OpenSSL could not make an Ed25519 key");
  }
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(raw, EVP_PKEY_free);
  Bytes seed(32), pub(32);
  size_t seed_len = seed.size(), pub_len = pub.size();
  if (EVP_PKEY_get_raw_private_key(key.get(), seed.data(), &seed_len) <= 0 ||
      EVP_PKEY_get_raw_public_key(key.get(), pub.data(), &pub_len) <= 0 || seed_len != 32 ||
      pub_len != 32) {
    return Status::Internal("generating the job's SSH key: OpenSSL did not export the key");
  }
  SshKeyPair pair;
  pair.private_key = OpenSshPrivateKey(seed, pub, comment);
  pair.authorized_key = "ssh-ed25519 " + Base64(PublicBlob(pub)) + " " + comment + "\n";
  OPENSSL_cleanse(seed.data(), seed.size());
  return pair;
}

}  // namespace dljob::controller
