// The protobuf body decoder: a Namespace as kubectl sends it, ConfigMap and Secret, 415 for other
// kinds, and every truncation and every single-byte change of a valid body handled without a read
// past the end.
#include "tests/apiserver/protobuf.h"

#include <gtest/gtest.h>

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  return out + static_cast<char>(v);
}
std::string Bytes(int field, const std::string& value) {
  return Varint((uint64_t(field) << 3) | 2) + Varint(value.size()) + value;
}
std::string Bool(int field, bool value) { return Varint(uint64_t(field) << 3) + Varint(value); }
std::string Entry(int field, const std::string& k, const std::string& v) {
  return Bytes(field, Bytes(1, k) + Bytes(2, v));
}

std::string Envelope(const std::string& api_version, const std::string& kind,
                     const std::string& raw) {
  return std::string("k8s\0", 4) + Bytes(1, Bytes(1, api_version) + Bytes(2, kind)) +
         Bytes(2, raw) + Bytes(3, "") + Bytes(4, kProtobufMediaType);
}

// A Namespace as `kubectl create namespace team-a` builds it, plus labels, an annotation, an
// owner reference, finalizers, a server-set field (uid) and a field number no decoder knows.
std::string NamespaceBody() {
  std::string meta = Bytes(1, "team-a") + Bytes(5, "ignored-uid") + Entry(11, "team", "vision") +
                     Entry(12, "note", "x") +
                     Bytes(13, Bytes(1, "Pod") + Bytes(3, "p") + Bytes(4, "u-1") + Bytes(5, "v1") +
                                   Bool(6, true)) +
                     Bytes(14, "example.com/f");
  std::string raw = Bytes(1, meta) + Bytes(2, Bytes(1, "kubernetes")) + Bytes(99, "future");
  return Envelope("v1", "Namespace", raw);
}

TEST(ProtobufTest, DecodesANamespace) {
  ApiResult<Json> ns = DecodeProtobufObject(NamespaceBody());
  ASSERT_TRUE(ns.ok()) << ns.error().message;
  EXPECT_EQ(*ns, Json::parse(R"({
    "apiVersion": "v1", "kind": "Namespace",
    "metadata": {"name": "team-a", "labels": {"team": "vision"}, "annotations": {"note": "x"},
                 "ownerReferences": [{"kind": "Pod", "name": "p", "uid": "u-1",
                                      "apiVersion": "v1", "controller": true}],
                 "finalizers": ["example.com/f"]},
    "spec": {"finalizers": ["kubernetes"]}})"));
}

TEST(ProtobufTest, DecodesConfigMapsAndSecretsWithBase64Bytes) {
  std::string cm = Bytes(1, Bytes(1, "c") + Bytes(3, "default")) + Entry(2, "k", "v") +
                   Entry(3, "bin", "\x01\x02\x03\x04") + Bool(4, true);
  ApiResult<Json> decoded = DecodeProtobufObject(Envelope("v1", "ConfigMap", cm));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ((*decoded)["data"], Json({{"k", "v"}}));
  EXPECT_EQ((*decoded)["binaryData"], Json({{"bin", "AQIDBA=="}}));
  EXPECT_EQ((*decoded)["immutable"], true);
  EXPECT_EQ((*decoded)["metadata"]["namespace"], "default");
  std::string secret = Bytes(1, Bytes(1, "s")) + Entry(2, "a", "hi") + Bytes(3, "Opaque");
  decoded = DecodeProtobufObject(Envelope("v1", "Secret", secret));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ((*decoded)["data"], Json({{"a", "aGk="}}));
  EXPECT_EQ((*decoded)["type"], "Opaque");
}

TEST(ProtobufTest, DecodesAServiceAsKubectlCreateServiceSendsIt) {
  std::string port = Bytes(1, "5678-8080") + Bytes(2, "TCP") + Varint(3 << 3) + Varint(5678) +
                     Bytes(4, Varint(1 << 3) + Varint(0) + Varint(2 << 3) + Varint(8080));
  std::string named = Bytes(1, "ssh") + Varint(3 << 3) + Varint(22) +
                      Bytes(4, Varint(1 << 3) + Varint(1) + Bytes(3, "sshd"));
  std::string spec = Bytes(1, port) + Bytes(1, named) + Entry(2, "app", "web") + Bytes(3, "None") +
                     Bytes(4, "ClusterIP") + Bool(13, true);
  std::string raw = Bytes(1, Bytes(1, "web")) + Bytes(2, spec);
  ApiResult<Json> decoded = DecodeProtobufObject(Envelope("v1", "Service", raw));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ((*decoded)["spec"], Json::parse(R"({
    "ports": [{"name": "5678-8080", "protocol": "TCP", "port": 5678, "targetPort": 8080},
              {"name": "ssh", "port": 22, "targetPort": "sshd"}],
    "selector": {"app": "web"}, "clusterIP": "None", "type": "ClusterIP",
    "publishNotReadyAddresses": true})"));
}

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

// Bodies captured from kubectl v1.32.4: `kubectl create namespace team-a` and `kubectl create
// service clusterip web --tcp=80:8080` (every empty field is on the wire, as Go encodes them).
TEST(ProtobufTest, DecodesWhatKubectl132Sends) {
  ApiResult<Json> ns = DecodeProtobufObject(
      Unhex("6b3873000a0f0a02763112094e616d657370616365121e0a160a067465616d2d6112001a0022002a0032"
            "003800420012001a020a001a002200"));
  ASSERT_TRUE(ns.ok()) << ns.error().message;
  EXPECT_EQ(*ns, Json::parse(R"({"apiVersion": "v1", "kind": "Namespace",
                                 "metadata": {"name": "team-a"}, "spec": {}})"));
  ApiResult<Json> service = DecodeProtobufObject(
      Unhex("6b3873000a0d0a02763112075365727669636512690a1f0a0377656212001a0022002a00320038004200"
            "5a0a0a03617070120377656212420a1b0a0738302d38303830120354435018502207080010903f1a0028"
            "00120a0a0361707012037765621a002209436c757374657249503a00420052005a00600068001a020a00"
            "1a002200"));
  ASSERT_TRUE(service.ok()) << service.error().message;
  EXPECT_EQ(*service, Json::parse(R"({"apiVersion": "v1", "kind": "Service",
      "metadata": {"name": "web", "labels": {"app": "web"}},
      "spec": {"ports": [{"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080}],
               "selector": {"app": "web"}, "type": "ClusterIP"}})"));
}

TEST(ProtobufTest, OtherKindsAre415AndGarbageIs400) {
  ApiResult<Json> pod = DecodeProtobufObject(Envelope("v1", "Pod", ""));
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.error().http, 415);
  EXPECT_NE(pod.error().message.find("v1 Pod"), std::string::npos) << pod.error().message;
  ApiResult<Json> no_magic = DecodeProtobufObject("{\"kind\":\"Namespace\"}");
  ASSERT_FALSE(no_magic.ok());
  EXPECT_EQ(no_magic.error().http, 400);
  std::string wrong_wire = std::string("k8s\0", 4) + Varint((1 << 3) | 0) + Varint(5);
  ApiResult<Json> wrong = DecodeProtobufObject(wrong_wire);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().http, 400);
}

TEST(ProtobufTest, EveryTruncationIsAnErrorOrAPrefixDecode) {
  const std::string body = NamespaceBody();
  for (size_t n = 0; n < body.size(); ++n) {
    ApiResult<Json> decoded = DecodeProtobufObject(std::string_view(body).substr(0, n));
    // A cut between two top-level fields is a well-formed shorter message (without the raw
    // object or its type it is a 415); any cut inside a field is a 400.
    if (!decoded.ok()) {
      EXPECT_TRUE(decoded.error().http == 400 || decoded.error().http == 415) << n;
    }
  }
}

TEST(ProtobufTest, EverySingleByteChangeIsHandled) {
  const std::string body = NamespaceBody();
  for (size_t i = 0; i < body.size(); ++i) {
    for (int delta : {1, 0x40, 0x80, 0xff}) {
      std::string changed = body;
      changed[i] = static_cast<char>(static_cast<uint8_t>(changed[i]) + delta);
      ApiResult<Json> decoded = DecodeProtobufObject(changed);
      if (!decoded.ok()) {
        EXPECT_TRUE(decoded.error().http == 400 || decoded.error().http == 415) << i;
      } else {
        EXPECT_TRUE(decoded->is_object()) << i;
      }
    }
  }
}

TEST(ProtoReaderTest, WireTypesAndLimits) {
  std::string data = Varint((1 << 3) | 0) + Varint(300) + Varint((2 << 3) | 1) +
                     std::string(8, '\x01') + Varint((3 << 3) | 5) + std::string(4, '\x02') +
                     Bytes(4, "abc");
  ProtoReader r(data);
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.field(), 1);
  EXPECT_EQ(r.varint(), 300u);
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.varint(), 0x0101010101010101ULL);
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.varint(), 0x02020202u);
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.bytes(), "abc");
  EXPECT_FALSE(r.Next());
  EXPECT_EQ(r.error(), "");
  // A reader views its input: each input outlives its reader.
  const std::string huge_input = Varint((1 << 3) | 2) + Varint(1ULL << 62);
  ProtoReader huge(huge_input);
  EXPECT_FALSE(huge.Next());
  EXPECT_NE(huge.error(), "");
  const std::string group_input = Varint((1 << 3) | 3);
  ProtoReader group(group_input);
  EXPECT_FALSE(group.Next());
  EXPECT_NE(group.error().find("wire type 3"), std::string::npos);
  const std::string endless_input(11, '\xff');
  ProtoReader endless(endless_input);
  EXPECT_FALSE(endless.Next());
  EXPECT_NE(endless.error(), "");
}

}  // namespace
}  // namespace dljob::apiserver
