#include "storage/loader/jpeg_decoder.h"

#include <cstdlib>
#include <string>

#include <turbojpeg.h>

namespace dljob::storage::loader {
namespace {

std::string TjError(void* handle) { return tjGetErrorStr2(static_cast<tjhandle>(handle)); }

}  // namespace

std::vector<ScaleFactor> ReducingScales() {
  std::vector<ScaleFactor> out;
  for (int n = 8; n >= 1; --n) {
    // 8/8 -> 1/1, 4/8 -> 1/2 and so on, as TurboJPEG lists them.
    int num = n, denom = 8;
    while (num % 2 == 0 && denom % 2 == 0) {
      num /= 2;
      denom /= 2;
    }
    out.push_back({num, denom});
  }
  return out;
}

int ScaledSize(int size, ScaleFactor f) { return (size * f.num + f.denom - 1) / f.denom; }

ScaleFactor ChooseScale(const Rect& crop, int out_width, int out_height,
                        std::span<const ScaleFactor> allowed) {
  ScaleFactor best{1, 1};
  for (ScaleFactor f : allowed) {
    if (f.value() < best.value() && crop.width * f.value() >= out_width &&
        crop.height * f.value() >= out_height) {
      best = f;
    }
  }
  return best;
}

JpegDecoder::JpegDecoder() : handle_(tjInitDecompress()) {
  if (handle_ == nullptr) std::abort();  // out of memory: nothing sensible to do
}

JpegDecoder::~JpegDecoder() { tjDestroy(static_cast<tjhandle>(handle_)); }

Result<JpegInfo> JpegDecoder::ReadInfo(std::span<const uint8_t> jpeg) {
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(static_cast<tjhandle>(handle_), jpeg.data(),
                          static_cast<unsigned long>(jpeg.size()), &width, &height, &subsamp,
                          &colorspace) != 0) {
    return Status::InvalidArgument("not a readable JPEG: " + TjError(handle_));
  }
  return JpegInfo{width, height};
}

Status JpegDecoder::Decode(std::span<const uint8_t> jpeg, int channels, ScaleFactor scale,
                           DecodedImage& out) {
  Result<JpegInfo> info = ReadInfo(jpeg);
  if (!info.ok()) return info.status();
  out.width = ScaledSize(info->width, scale);
  out.height = ScaledSize(info->height, scale);
  out.channels = channels;
  const size_t bytes = size_t(out.width) * out.height * channels;
  if (out.pixels.size() < bytes) out.pixels.resize(bytes);
  if (tjDecompress2(static_cast<tjhandle>(handle_), jpeg.data(),
                    static_cast<unsigned long>(jpeg.size()), out.pixels.data(), out.width, 0,
                    out.height, channels == 1 ? TJPF_GRAY : TJPF_RGB, 0) != 0) {
    return Status::InvalidArgument("JPEG decode failed: " + TjError(handle_));
  }
  return Status::Ok();
}

}  // namespace dljob::storage::loader
