#include "storage/testing/test_data.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>

#include <turbojpeg.h>

#include "storage/idx_reader.h"

namespace dljob::storage::testdata {

Sample RawSample(uint32_t label, uint16_t height, uint16_t width, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Sample s{label, SampleFormat::kRaw, 1, height, width, {}};
  s.data.resize(size_t{height} * width);
  for (uint8_t& b : s.data) b = static_cast<uint8_t>(rng());
  return s;
}

std::vector<uint8_t> MakeJpeg(int width, int height, int channels, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> pixels(size_t(width) * height * channels);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>((i * 7 + rng() % 32));
  tjhandle tj = tjInitCompress();
  unsigned char* out = nullptr;
  unsigned long size = 0;
  int rc = tjCompress2(tj, pixels.data(), width, 0, height, channels == 1 ? TJPF_GRAY : TJPF_RGB,
                       &out, &size, channels == 1 ? TJSAMP_GRAY : TJSAMP_420, 90, 0);
  if (rc != 0) throw std::runtime_error(tjGetErrorStr2(tj));  // a broken test setup
  std::vector<uint8_t> bytes(out, out + size);
  tjFree(out);
  tjDestroy(tj);
  return bytes;
}

std::vector<uint8_t> WriteIdxPair(const std::string& dir, const std::string& prefix, int n) {
  IdxArray images{{n, 28, 28}, {}}, labels{{n}, {}};
  for (int i = 0; i < n; ++i) {
    Sample s = RawSample(i % 10, 28, 28, i);
    images.data.insert(images.data.end(), s.data.begin(), s.data.end());
    labels.data.push_back(static_cast<uint8_t>(i % 10));
  }
  WriteBytes(dir + "/" + prefix + "-images-idx3-ubyte", EncodeIdx(images));
  WriteBytes(dir + "/" + prefix + "-labels-idx1-ubyte", EncodeIdx(labels));
  return labels.data;
}

void WriteJpegTree(const std::string& dir, const std::vector<std::string>& classes, int per_class) {
  for (size_t c = 0; c < classes.size(); ++c) {
    std::filesystem::create_directories(dir + "/" + classes[c]);
    for (int k = 0; k < per_class; ++k) {
      WriteBytes(dir + "/" + classes[c] + "/" + std::to_string(k) + ".jpg",
                 MakeJpeg(16 + k, 12 + int(c), k % 2 ? 1 : 3, c * 1000 + k));
    }
  }
}

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

}  // namespace dljob::storage::testdata
