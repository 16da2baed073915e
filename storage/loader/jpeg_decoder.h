// JpegDecoder: libjpeg-turbo (TurboJPEG 2 API, tjDecompress2) decoding into a reusable buffer,
// optionally at a reduced scale.
//
// TurboJPEG can decode at N/8 of the full size by running a smaller inverse DCT, which is cheaper
// than decoding everything and shrinking afterwards. ChooseScale picks, for a crop of the full
// image that will be resized to the output, the smallest allowed factor at which the crop still
// has at least the output's pixels in both directions, so the final bilinear resize never
// enlarges what a full decode would have shrunk. bench/loader_bench measures what it gains.
//
// DecodeCrop decodes only the part of the image a crop needs, through libjpeg-turbo's libjpeg API
// (jpeg_crop_scanline, jpeg_skip_scanlines; TurboJPEG 2 has no cropped decode): columns outside
// the crop (rounded out to whole iMCUs) skip the inverse DCT and colour conversion, rows above it
// are only entropy-decoded, and decoding stops at its last row. Rows below the crop are not
// looked at, so damage there goes unnoticed by the decoder — the record's CRC covers it.
//
// Decode treats TurboJPEG warnings (corrupt or truncated data that libjpeg would paper over) as
// errors: a damaged image is reported, never fed to training. Messages do not say which record;
// the caller prefixes that.
//
// Thread-safety: a JpegDecoder owns a TurboJPEG handle and is not thread-safe; use one per
// thread. The free functions are thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "storage/loader/image_transform.h"

namespace dljob::storage::loader {

struct ScaleFactor {
  int num = 1, denom = 1;
  double value() const { return double(num) / denom; }
  bool operator==(const ScaleFactor&) const = default;
};

// The factors TurboJPEG offers that do not enlarge (1/1, 7/8, ..., 1/8), largest first.
std::vector<ScaleFactor> ReducingScales();

// The smallest factor in `allowed` (plus 1/1, always allowed) for which crop.width * f >=
// out_width and crop.height * f >= out_height.
ScaleFactor ChooseScale(const Rect& crop, int out_width, int out_height,
                        std::span<const ScaleFactor> allowed);

// An image's size scaled by f, rounded up as TurboJPEG does.
int ScaledSize(int size, ScaleFactor f);

struct DecodedImage {
  std::vector<uint8_t> pixels;  // interleaved, rows width*channels bytes apart; reused
  int width = 0, height = 0, channels = 0;
  ImageView view() const {
    return {pixels.data(), width, height, channels, int64_t{width} * channels};
  }
};

struct JpegInfo {
  int width = 0, height = 0;
};

class JpegDecoder {
 public:
  JpegDecoder();
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  // kInvalidArgument for bytes that are not a JPEG TurboJPEG can read.
  Result<JpegInfo> ReadInfo(std::span<const uint8_t> jpeg);
  // Decodes to `channels` (1 = grey, 3 = RGB) at `scale` into `out` (its buffer reused).
  Status Decode(std::span<const uint8_t> jpeg, int channels, ScaleFactor scale, DecodedImage& out);
  // Decodes at `scale` the part of the image covering `crop` (in full-size pixels) into `out`,
  // and returns where the crop lies in `out` (scaled, fractional). Warnings are errors here too.
  Result<Rect> DecodeCrop(std::span<const uint8_t> jpeg, int channels, ScaleFactor scale,
                          const Rect& crop, DecodedImage& out);

 private:
  void* handle_;  // tjhandle
};

}  // namespace dljob::storage::loader
