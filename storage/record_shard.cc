#include "storage/record_shard.h"

namespace dljob::storage {

std::string SampleFormatName(SampleFormat format) {
  switch (format) {
    case SampleFormat::kRaw:
      return "raw";
    case SampleFormat::kJpeg:
      return "jpeg";
  }
  return "format " + std::to_string(static_cast<int>(format));
}

void EncodeSample(const Sample& sample, std::vector<uint8_t>& out) {
  out.reserve(out.size() + kSampleHeaderBytes + sample.data.size());
  PutU32(out, sample.label);
  out.push_back(static_cast<uint8_t>(sample.format));
  out.push_back(sample.channels);
  PutU16(out, sample.height);
  PutU16(out, sample.width);
  PutU16(out, 0);
  out.insert(out.end(), sample.data.begin(), sample.data.end());
}

Result<Sample> DecodeSample(std::span<const uint8_t> payload) {
  if (payload.size() < kSampleHeaderBytes) {
    return Status::InvalidArgument("sample too short (" + std::to_string(payload.size()) +
                                   " bytes, header needs " + std::to_string(kSampleHeaderBytes) +
                                   ")");
  }
  const uint8_t* p = payload.data();
  Sample s;
  s.label = GetU32(p);
  s.format = static_cast<SampleFormat>(p[4]);
  s.channels = p[5];
  s.height = GetU16(p + 6);
  s.width = GetU16(p + 8);
  if (s.format != SampleFormat::kRaw && s.format != SampleFormat::kJpeg) {
    return Status::InvalidArgument("unknown sample " + SampleFormatName(s.format));
  }
  if (GetU16(p + 10) != 0) return Status::InvalidArgument("sample reserved field is not 0");
  const size_t bytes = payload.size() - kSampleHeaderBytes;
  if (s.format == SampleFormat::kRaw &&
      bytes != size_t{s.height} * size_t{s.width} * size_t{s.channels}) {
    return Status::InvalidArgument("raw sample " + std::to_string(s.height) + "x" +
                                   std::to_string(s.width) + "x" + std::to_string(s.channels) +
                                   " has " + std::to_string(bytes) + " pixel bytes");
  }
  s.data.assign(p + kSampleHeaderBytes, p + payload.size());
  return s;
}

}  // namespace dljob::storage
