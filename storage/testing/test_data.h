// Test data for storage's tests: deterministic samples, IDX directories and JPEG trees made on
// the fly (JPEGs encoded with libjpeg-turbo), so no test depends on files it did not make.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/record_shard.h"

namespace dljob::storage::testdata {

// A raw height x width grey sample whose pixels derive from `seed`.
Sample RawSample(uint32_t label, uint16_t height, uint16_t width, uint64_t seed);
// A small JPEG (channels 1 or 3) encoded with tjCompress2.
std::vector<uint8_t> MakeJpeg(int width, int height, int channels, uint64_t seed);

// Writes <dir>/<prefix>-images-idx3-ubyte and -labels-idx1-ubyte with n 28x28 images (labels
// i % 10). Returns the labels.
std::vector<uint8_t> WriteIdxPair(const std::string& dir, const std::string& prefix, int n);

// Writes <dir>/<class>/<k>.jpg, `per_class` files for each class.
void WriteJpegTree(const std::string& dir, const std::vector<std::string>& classes, int per_class);

std::vector<uint8_t> ReadBytes(const std::string& path);
void WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace dljob::storage::testdata
