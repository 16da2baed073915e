// See protobuf.h.
#include "tests/apiserver/protobuf.h"

#include <cstring>
#include <functional>

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kMagic("k8s\0", 4);

std::string Base64(std::string_view in) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(n >> s) & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t n = uint8_t(in[i]) << 16;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

// Reads every field of `data` with `on_field`; `what` names the message in errors.
// on_field returns "" or why the field is wrong.
using FieldFn = std::function<std::string(const ProtoReader&)>;
std::string ReadMessage(std::string_view data, const std::string& what, const FieldFn& on_field) {
  ProtoReader r(data);
  while (r.Next()) {
    std::string why = on_field(r);
    if (!why.empty()) return what + ": " + why;
  }
  return r.error().empty() ? "" : what + ": " + r.error();
}

std::string WantBytes(const ProtoReader& r, int field) {
  return r.wire_type() == 2 ? ""
                            : "field " + std::to_string(field) + " has wire type " +
                                  std::to_string(r.wire_type()) + ", expected 2";
}

// A string field into `out[key]`, or appended when `repeated`.
std::string StringInto(const ProtoReader& r, Json& out, const char* key, bool repeated = false) {
  if (std::string why = WantBytes(r, r.field()); !why.empty()) return why;
  std::string value(r.bytes());
  if (value.empty() && !repeated) return "";  // Go's omitempty: "" is unset
  if (repeated) {
    out[key].push_back(value);
  } else {
    out[key] = value;
  }
  return "";
}

// A map<string, string|bytes> entry {1: key, 2: value}.
std::string MapEntryInto(const ProtoReader& r, Json& out, const char* key, bool bytes_value) {
  if (std::string why = WantBytes(r, r.field()); !why.empty()) return why;
  std::string k, v;
  std::string why = ReadMessage(r.bytes(), key, [&](const ProtoReader& e) -> std::string {
    if (e.field() != 1 && e.field() != 2) return "";
    if (std::string w = WantBytes(e, e.field()); !w.empty()) return w;
    (e.field() == 1 ? k : v) = std::string(e.bytes());
    return "";
  });
  if (!why.empty()) return why;
  out[key][k] = bytes_value ? Base64(v) : v;
  return "";
}

std::string ReadOwnerReference(std::string_view data, Json& refs) {
  Json ref = Json::object();
  std::string why = ReadMessage(data, "ownerReferences", [&](const ProtoReader& r) -> std::string {
    switch (r.field()) {
      case 1:
        return StringInto(r, ref, "kind");
      case 3:
        return StringInto(r, ref, "name");
      case 4:
        return StringInto(r, ref, "uid");
      case 5:
        return StringInto(r, ref, "apiVersion");
      case 6:
      case 7:
        if (r.wire_type() != 0) return "a bool field has the wrong wire type";
        ref[r.field() == 6 ? "controller" : "blockOwnerDeletion"] = r.varint() != 0;
        return "";
      default:
        return "";
    }
  });
  if (why.empty()) refs.push_back(std::move(ref));
  return why;
}

std::string ReadObjectMeta(std::string_view data, Json& meta) {
  return ReadMessage(data, "metadata", [&](const ProtoReader& r) -> std::string {
    switch (r.field()) {
      case 1:
        return StringInto(r, meta, "name");
      case 2:
        return StringInto(r, meta, "generateName");
      case 3:
        return StringInto(r, meta, "namespace");
      case 11:
        return MapEntryInto(r, meta, "labels", false);
      case 12:
        return MapEntryInto(r, meta, "annotations", false);
      case 13:
        if (std::string why = WantBytes(r, 13); !why.empty()) return why;
        return ReadOwnerReference(r.bytes(), meta["ownerReferences"]);
      case 14:
        return StringInto(r, meta, "finalizers", true);
      default:
        return "";  // server-set fields (uid, resourceVersion, timestamps, …) are not read
    }
  });
}

// A bool field; `pointer`: Go's *bool, where false is a value (else false is unset).
std::string ReadBool(const ProtoReader& r, Json& out, const char* key, bool pointer) {
  if (r.wire_type() != 0) return std::string(key) + ": wrong wire type";
  if (pointer || r.varint() != 0) out[key] = r.varint() != 0;
  return "";
}

// An int32 field (wire type 0) into `out[key]`.
std::string Int32Into(const ProtoReader& r, Json& out, const char* key) {
  if (r.wire_type() != 0) return std::string(key) + ": wrong wire type";
  if (r.varint() != 0) out[key] = static_cast<int32_t>(r.varint());  // omitempty
  return "";
}

std::string ReadServicePort(std::string_view data, Json& ports) {
  Json port = Json::object();
  std::string why = ReadMessage(data, "ports", [&](const ProtoReader& r) -> std::string {
    switch (r.field()) {
      case 1:
        return StringInto(r, port, "name");
      case 2:
        return StringInto(r, port, "protocol");
      case 3:
        return Int32Into(r, port, "port");
      case 5:
        return Int32Into(r, port, "nodePort");
      case 6:
        return StringInto(r, port, "appProtocol");
      case 4: {  // IntOrString {1: type (0 int, 1 string), 2: intVal, 3: strVal}
        if (std::string w = WantBytes(r, 4); !w.empty()) return w;
        Json target = Json::object();
        std::string w = ReadMessage(r.bytes(), "targetPort", [&](const ProtoReader& t) {
          if (t.field() == 1) return Int32Into(t, target, "type");
          if (t.field() == 2) return Int32Into(t, target, "intVal");
          if (t.field() == 3) return StringInto(t, target, "strVal");
          return std::string();
        });
        if (!w.empty()) return w;
        if (target.value("type", 0) == 1) {
          port["targetPort"] = target.value("strVal", "");
        } else {
          port["targetPort"] = target.value("intVal", 0);
        }
        return "";
      }
      default:
        return "";
    }
  });
  if (why.empty()) ports.push_back(std::move(port));
  return why;
}

std::string ReadServiceSpec(std::string_view data, Json& spec) {
  return ReadMessage(data, "spec", [&](const ProtoReader& r) -> std::string {
    switch (r.field()) {
      case 1:
        if (std::string w = WantBytes(r, 1); !w.empty()) return w;
        return ReadServicePort(r.bytes(), spec["ports"]);
      case 2:
        return MapEntryInto(r, spec, "selector", false);
      case 3:
        return StringInto(r, spec, "clusterIP");
      case 4:
        return StringInto(r, spec, "type");
      case 5:
        return StringInto(r, spec, "externalIPs", true);
      case 7:
        return StringInto(r, spec, "sessionAffinity");
      case 10:
        return StringInto(r, spec, "externalName");
      case 13:
        return ReadBool(r, spec, "publishNotReadyAddresses", false);
      case 17:
        return StringInto(r, spec, "ipFamilyPolicy");
      case 18:
        return StringInto(r, spec, "clusterIPs", true);
      case 19:
        return StringInto(r, spec, "ipFamilies", true);
      default:
        return "";
    }
  });
}

// The object message of one kind: fields of `raw` into `object`.
std::string ReadObject(const std::string& kind, std::string_view raw, Json& object) {
  Json& meta = object["metadata"] = Json::object();
  auto with_meta = [&](const ProtoReader& r) -> std::string {
    if (std::string why = WantBytes(r, 1); !why.empty()) return why;
    return ReadObjectMeta(r.bytes(), meta);
  };
  if (kind == "Namespace") {
    return ReadMessage(raw, kind, [&](const ProtoReader& r) -> std::string {
      if (r.field() == 1) return with_meta(r);
      if (r.field() != 2) return "";
      if (std::string why = WantBytes(r, 2); !why.empty()) return why;
      Json& spec = object["spec"] = Json::object();
      return ReadMessage(r.bytes(), "spec", [&](const ProtoReader& s) -> std::string {
        return s.field() == 1 ? StringInto(s, spec, "finalizers", true) : "";
      });
    });
  }
  if (kind == "ConfigMap") {
    return ReadMessage(raw, kind, [&](const ProtoReader& r) -> std::string {
      switch (r.field()) {
        case 1:
          return with_meta(r);
        case 2:
          return MapEntryInto(r, object, "data", false);
        case 3:
          return MapEntryInto(r, object, "binaryData", true);
        case 4:
          return ReadBool(r, object, "immutable", true);
        default:
          return "";
      }
    });
  }
  if (kind == "Service") {
    return ReadMessage(raw, kind, [&](const ProtoReader& r) -> std::string {
      if (r.field() == 1) return with_meta(r);
      if (r.field() != 2) return "";
      if (std::string why = WantBytes(r, 2); !why.empty()) return why;
      return ReadServiceSpec(r.bytes(), object["spec"] = Json::object());
    });
  }
  // Secret
  return ReadMessage(raw, kind, [&](const ProtoReader& r) -> std::string {
    switch (r.field()) {
      case 1:
        return with_meta(r);
      case 2:
        return MapEntryInto(r, object, "data", true);
      case 3:
        return StringInto(r, object, "type");
      case 4:
        return MapEntryInto(r, object, "stringData", false);
      case 5:
        return ReadBool(r, object, "immutable", true);
      default:
        return "";
    }
  });
}

}  // namespace

bool ProtoReader::Fail(std::string why) {
  error_ = std::move(why) + " at byte " + std::to_string(pos_);
  return false;
}

bool ProtoReader::ReadVarint(uint64_t* out) {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= data_.size()) return Fail("truncated varint");
    uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    value |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *out = value;
      return true;
    }
  }
  return Fail("varint longer than 10 bytes");
}

bool ProtoReader::Next() {
  if (!error_.empty() || pos_ >= data_.size()) return false;
  uint64_t tag = 0;
  if (!ReadVarint(&tag)) return false;
  field_ = static_cast<int>(tag >> 3);
  wire_type_ = static_cast<int>(tag & 7);
  if (tag >> 3 == 0 || tag >> 3 > (1u << 29)) return Fail("invalid field number");
  switch (wire_type_) {
    case 0:
      return ReadVarint(&varint_);
    case 1:
    case 5: {
      size_t n = wire_type_ == 1 ? 8 : 4;
      if (data_.size() - pos_ < n) return Fail("truncated fixed-width field");
      varint_ = 0;
      for (size_t i = 0; i < n; ++i) varint_ |= uint64_t(uint8_t(data_[pos_ + i])) << (8 * i);
      pos_ += n;
      return true;
    }
    case 2: {
      uint64_t len = 0;
      if (!ReadVarint(&len)) return false;
      if (len > data_.size() - pos_) return Fail("length-delimited field runs past the end");
      bytes_ = data_.substr(pos_, len);
      pos_ += len;
      return true;
    }
    default:
      return Fail("unsupported wire type " + std::to_string(wire_type_));
  }
}

void ProtoWriter::Varint(uint64_t value) {
  while (value >= 0x80) {
    data_ += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  data_ += static_cast<char>(value);
}

void ProtoWriter::Tag(int field, int wire_type) {
  Varint((static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
}

void ProtoWriter::String(int field, std::string_view value, bool always) {
  if (value.empty() && !always) return;
  Tag(field, 2);
  Varint(value.size());
  data_.append(value);
}

void ProtoWriter::Bool(int field, bool value, bool always) {
  if (!value && !always) return;
  Tag(field, 0);
  Varint(value ? 1 : 0);
}

void ProtoWriter::Int64(int field, int64_t value) {
  if (value == 0) return;
  Tag(field, 0);
  Varint(static_cast<uint64_t>(value));  // two's complement, 10 bytes when negative
}

void ProtoWriter::Double(int field, double value) {
  if (value == 0) return;
  Tag(field, 1);
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  for (int i = 0; i < 8; ++i) data_ += static_cast<char>((bits >> (8 * i)) & 0xff);
}

void ProtoWriter::Message(int field, const ProtoWriter& inner) { String(field, inner.data_, true); }

ApiResult<Json> DecodeProtobufObject(std::string_view body) {
  if (body.substr(0, kMagic.size()) != kMagic) {
    return BadRequestError("the protobuf body does not start with the \"k8s\\x00\" magic");
  }
  Json type_meta = Json::object();
  std::string_view raw;
  std::string content_type;
  std::string why = ReadMessage(
      body.substr(kMagic.size()), "runtime.Unknown", [&](const ProtoReader& r) -> std::string {
        if (r.field() == 1) {
          if (std::string w = WantBytes(r, 1); !w.empty()) return w;
          return ReadMessage(r.bytes(), "typeMeta", [&](const ProtoReader& t) -> std::string {
            if (t.field() == 1) return StringInto(t, type_meta, "apiVersion");
            if (t.field() == 2) return StringInto(t, type_meta, "kind");
            return "";
          });
        }
        if (r.field() == 2) {
          if (std::string w = WantBytes(r, 2); !w.empty()) return w;
          raw = r.bytes();
        }
        if (r.field() == 4) {
          if (std::string w = WantBytes(r, 4); !w.empty()) return w;
          content_type = std::string(r.bytes());
        }
        return "";
      });
  if (!why.empty()) return BadRequestError("the protobuf body is malformed: " + why);
  std::string api_version = type_meta.value("apiVersion", "");
  std::string kind = type_meta.value("kind", "");
  if (!content_type.empty() && content_type != kProtobufMediaType) {
    return ErrorForCode(415,
                        "the protobuf envelope holds " + content_type + "; send application/json");
  }
  if (api_version != "v1" ||
      (kind != "Namespace" && kind != "ConfigMap" && kind != "Secret" && kind != "Service")) {
    return ErrorForCode(415,
                        "the test API server reads protobuf bodies of v1 Namespace, ConfigMap, "
                        "Secret and Service only, not " +
                            (api_version.empty() ? std::string("?") : api_version) + " " +
                            (kind.empty() ? std::string("?") : kind) + "; send application/json");
  }
  Json object = {{"apiVersion", api_version}, {"kind", kind}};
  why = ReadObject(kind, raw, object);
  if (!why.empty()) return BadRequestError("the protobuf body is malformed: " + why);
  return object;
}

}  // namespace dljob::apiserver
