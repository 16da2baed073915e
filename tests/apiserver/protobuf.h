// Kubernetes protobuf request bodies (Content-Type application/vnd.kubernetes.protobuf), decoded
// to the JSON the rest of the test server works on.
//
// The envelope is the 4 bytes "k8s\0" followed by a runtime.Unknown message {1: typeMeta
// {1: apiVersion, 2: kind}, 2: raw, 3: contentEncoding, 4: contentType}; raw is the object's own
// message. kubectl's typed clients send it for built-in kinds (`kubectl create namespace`). This
// file decodes the kinds kubectl creates that dljob's docs and tests use: v1 Namespace, ConfigMap,
// Secret and Service (ObjectMeta with name, generateName, namespace, labels, annotations,
// ownerReferences, finalizers; NamespaceSpec.finalizers; ConfigMap data/binaryData/immutable;
// Secret data/stringData/type/immutable; ServiceSpec ports, selector, clusterIP(s), type,
// externalIPs, sessionAffinity, externalName, publishNotReadyAddresses, ipFamilies and
// ipFamilyPolicy). Field numbers are those of Kubernetes' generated.proto files. Any other kind is
// a 415, which names the kinds read (a client then has to send JSON). Fields it does not know are
// skipped, as protobuf readers do.
//
// ProtoReader and ProtoWriter are the wire format: varints, the wire types, length checks. Every
// read of a malformed or truncated input is an error, never a read past the end. ProtoWriter
// writes proto3's encoding (a field at its default value is left out), which is how the OpenAPI
// v2 document goes to kubectl (openapi_v2_proto.h).
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tests/apiserver/api_errors.h"

namespace dljob::apiserver {

inline constexpr char kProtobufMediaType[] = "application/vnd.kubernetes.protobuf";

// One message's fields in order. REQUIRES: Next() returned true before Field()/value accessors.
class ProtoReader {
 public:
  explicit ProtoReader(std::string_view data) : data_(data) {}

  // Reads the next field's tag and value; false at the end or on an error (see error()).
  bool Next();
  int field() const { return field_; }
  int wire_type() const { return wire_type_; }
  uint64_t varint() const { return varint_; }        // wire type 0
  std::string_view bytes() const { return bytes_; }  // wire type 2
  // "" while the input is well-formed so far.
  const std::string& error() const { return error_; }

 private:
  bool ReadVarint(uint64_t* out);
  bool Fail(std::string why);

  std::string_view data_;
  size_t pos_ = 0;
  int field_ = 0;
  int wire_type_ = 0;
  uint64_t varint_ = 0;
  std::string_view bytes_;
  std::string error_;
};

// Appends fields to a message. Nested messages are written with Message(): build the inner one
// with its own writer first.
class ProtoWriter {
 public:
  // Left out when empty (proto3), unless `always` (a repeated string's items are always written).
  void String(int field, std::string_view value, bool always = false);
  void Bool(int field, bool value, bool always = false);  // left out when false
  void Int64(int field, int64_t value);                   // left out when 0
  void Double(int field, double value);                   // left out when 0
  void Message(int field, const ProtoWriter& inner);      // always written, even when empty
  const std::string& data() const { return data_; }

 private:
  void Tag(int field, int wire_type);
  void Varint(uint64_t value);

  std::string data_;
};

// The JSON object of a protobuf request body (envelope included). 400 for a malformed body,
// 415 for a kind this file does not decode.
ApiResult<nlohmann::json> DecodeProtobufObject(std::string_view body);

}  // namespace dljob::apiserver
