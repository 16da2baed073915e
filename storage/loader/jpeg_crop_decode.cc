// JpegDecoder::DecodeCrop over the libjpeg API (see jpeg_decoder.h). libjpeg reports errors by
// calling error_exit, which must not return: it longjmps back here. Nothing with a destructor
// lives between the setjmp and the calls that may jump.
#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstddef>
#include <cstdio>
#include <string>

#include <jpeglib.h>  // needs size_t and FILE first

#include "storage/loader/jpeg_decoder.h"

namespace dljob::storage::loader {
namespace {

struct ErrorManager {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void OnError(j_common_ptr info) {
  auto* err = reinterpret_cast<ErrorManager*>(info->err);
  (*info->err->format_message)(info, err->message);
  std::longjmp(err->jump, 1);
}

// Level -1 is a warning (corrupt or truncated data that libjpeg would fill in): an error here.
void OnMessage(j_common_ptr info, int level) {
  if (level < 0) OnError(info);
}

}  // namespace

Result<Rect> JpegDecoder::DecodeCrop(std::span<const uint8_t> jpeg, int channels, ScaleFactor scale,
                                     const Rect& crop, DecodedImage& out) {
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = OnError;
  err.pub.emit_message = OnMessage;
  JDIMENSION x0 = 0, y0 = 0;
  double fx = 1, fy = 1;
  if (setjmp(err.jump) != 0) {
    jpeg_destroy_decompress(&cinfo);
    return Status::InvalidArgument(std::string("JPEG decode failed: ") + err.message);
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, jpeg.data(), static_cast<unsigned long>(jpeg.size()));
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  cinfo.scale_num = static_cast<unsigned>(scale.num * 8 / scale.denom);
  cinfo.scale_denom = 8;
  jpeg_start_decompress(&cinfo);
  fx = double(cinfo.output_width) / cinfo.image_width;
  fy = double(cinfo.output_height) / cinfo.image_height;
  {
    const auto clampi = [](double v, JDIMENSION hi) {
      return static_cast<JDIMENSION>(std::clamp(v, 0.0, double(hi)));
    };
    x0 = clampi(std::floor(crop.x * fx), cinfo.output_width - 1);
    const JDIMENSION x1 =
        std::max(x0 + 1, clampi(std::ceil((crop.x + crop.width) * fx), cinfo.output_width));
    y0 = clampi(std::floor(crop.y * fy), cinfo.output_height - 1);
    const JDIMENSION y1 =
        std::max(y0 + 1, clampi(std::ceil((crop.y + crop.height) * fy), cinfo.output_height));
    JDIMENSION width = x1 - x0;
    jpeg_crop_scanline(&cinfo, &x0, &width);  // widens to whole iMCUs; x0 moves left
    if (y0 > 0) jpeg_skip_scanlines(&cinfo, y0);
    out.width = static_cast<int>(cinfo.output_width);
    out.height = static_cast<int>(y1 - y0);
    out.channels = channels;
    const size_t bytes = size_t(out.width) * out.height * channels;
    if (out.pixels.size() < bytes) out.pixels.resize(bytes);
    const size_t stride = size_t(out.width) * channels;
    while (cinfo.output_scanline < y1) {
      JSAMPROW row = out.pixels.data() + (cinfo.output_scanline - y0) * stride;
      jpeg_read_scanlines(&cinfo, &row, 1);
    }
  }
  jpeg_abort_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return Rect{crop.x * fx - x0, crop.y * fy - y0, crop.width * fx, crop.height * fy};
}

}  // namespace dljob::storage::loader
