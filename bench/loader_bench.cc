// loader_bench: the loader's per-core JPEG rate against libjpeg-turbo's decode-only rate on the
// same images, and its shard read throughput against a plain sequential read of the same bytes,
// all measured in one run (docs/benchmarks/README.md: at least 90% of
// decode-only).
//
//   loader_bench [--images 500] [--width 500] [--height 375] [--out 224] [--rounds 5]
//
// Makes N synthetic photos-like JPEGs (smooth gradients, shapes, mild noise; quality 90, 4:2:0)
// with TurboJPEG, packs them into shards in a temp directory, and then, interleaved over rounds
// (median reported), on one thread, timed in process CPU seconds (so rates are per core, and
// other load on the machine shifts them less than it would wall-clock rates):
//   decode-only     tjDecompress2 of every image at full size to RGB (the baseline)
//   loader          BatchBuilder::TransformSample: decode (reduced scale when the crop allows) +
//                   RandomResizedCrop + flip + bilinear resize + normalise to float CHW
//   loader, full    the same with reduced-scale decoding off
//   loader, 1/2^k   reduced scales restricted to 1/2, 1/4, 1/8 (the SIMD ones)
//   loader end to end  Loader with 1 thread: shard reads, CRC checks, all of the above, 4 epochs
//                   with batches dropped as they come (their buffers reused); and 1 epoch with
//                   every batch kept until the end (a fresh buffer for each)
// and for reads (files in the page cache after packing):
//   plain read      read(2) of each shard file in 4 MiB chunks
//   sequential      ShardReader::ForEach (CRC-checked, in file order)
//   shard windows   the loader's reads for an Order::kShardWindows epoch, batch 64 (coalesced)
//   global shuffle  the same for a global shuffle (about one read per record)
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <turbojpeg.h>

#include "storage/loader/batch_builder.h"
#include "storage/loader/loader.h"
#include "storage/pack.h"
#include "storage/testing/test_data.h"
#include "testing/command.h"

using namespace dljob;
using namespace dljob::storage;
using namespace dljob::storage::loader;

namespace {

std::vector<uint8_t> SyntheticPhoto(int w, int h, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const double fx = 0.005 + 0.03 * u(rng), fy = 0.005 + 0.03 * u(rng), ph = 6.28 * u(rng);
  std::vector<uint8_t> px(size_t(w) * h * 3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < 3; ++c) {
        double v = 128 + 90 * std::sin(x * fx * (c + 1) + ph) * std::cos(y * fy + c);
        px[(size_t(y) * w + x) * 3 + c] =
            static_cast<uint8_t>(std::clamp(v + int(rng() % 17) - 8, 0.0, 255.0));
      }
    }
  }
  for (int r = 0; r < 12; ++r) {  // a few flat shapes give edges
    const int x0 = rng() % w, y0 = rng() % h, rw = 10 + rng() % (w / 3), rh = 10 + rng() % (h / 3);
    const uint8_t col[3] = {uint8_t(rng()), uint8_t(rng()), uint8_t(rng())};
    for (int y = y0; y < std::min(h, y0 + rh); ++y) {
      for (int x = x0; x < std::min(w, x0 + rw); ++x) {
        for (int c = 0; c < 3; ++c) px[(size_t(y) * w + x) * 3 + c] = col[c];
      }
    }
  }
  tjhandle tj = tjInitCompress();
  unsigned char* out = nullptr;
  unsigned long size = 0;
  if (tjCompress2(tj, px.data(), w, 0, h, TJPF_RGB, &out, &size, TJSAMP_420, 90, 0) != 0) {
    std::fprintf(stderr, "tjCompress2: %s\n", tjGetErrorStr2(tj));
    std::exit(1);
  }
  std::vector<uint8_t> bytes(out, out + size);
  tjFree(out);
  tjDestroy(tj);
  return bytes;
}

// CPU seconds of this process (all its threads, user and system) spent in fn. Per-core rates
// are work per CPU second; on a shared machine wall time would measure the scheduler as well.
double Seconds(const std::function<void()>& fn) {
  timespec t0{}, t1{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  fn();
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
  return double(t1.tv_sec - t0.tv_sec) + 1e-9 * double(t1.tv_nsec - t0.tv_nsec);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Check(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    std::exit(1);
  }
}

// The loader's reads for one epoch in `order`, batch 64: coalesced runs, every record CRC-checked.
uint64_t LoaderReads(const ShardSet& set, Order order) {
  SamplerOptions so;
  so.order = order;
  so.window = 256;
  Sampler sampler(set.records(), so);
  std::vector<uint64_t> samples = sampler.RankOrder(0);
  uint64_t bytes = 0;
  std::vector<uint8_t> buffer;
  for (size_t at = 0; at < samples.size(); at += 64) {
    const size_t n = std::min<size_t>(64, samples.size() - at);
    std::vector<RecordRef> refs(n);
    std::vector<uint64_t> offsets(n), sizes(n);
    for (size_t k = 0; k < n; ++k) {
      refs[k] = sampler.Locate(samples[at + k]);
      offsets[k] = set.shards[refs[k].shard]->record_offset(refs[k].record);
      sizes[k] = set.shards[refs[k].shard]->record_size(refs[k].record);
    }
    for (const ReadRun& run : PlanReads(refs, offsets, sizes, ReadOptions{})) {
      const ShardReader& shard = *set.shards[run.shard];
      buffer.resize(run.size);
      Check(shard.file().ReadAt(run.offset, buffer));
      bytes += run.size;
      for (size_t k : run.items) {
        Check(shard.Decode(refs[k].record, {buffer.data() + (offsets[k] - run.offset), sizes[k]})
                  .status());
      }
    }
  }
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  int images = 500, width = 500, height = 375, out = 224, rounds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--images")) images = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--width")) width = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--height")) height = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--out")) out = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
  }
  dljob::testing::TempDir tmp;
  const std::string src = tmp.path() + "/src", data = tmp.path() + "/data";
  uint64_t jpeg_bytes = 0;
  for (int i = 0; i < images; ++i) {
    const std::string dir = src + "/class" + std::to_string(i % 10);
    std::filesystem::create_directories(dir);
    std::vector<uint8_t> jpeg = SyntheticPhoto(width, height, i);
    jpeg_bytes += jpeg.size();
    testdata::WriteBytes(dir + "/" + std::to_string(i) + ".jpg", jpeg);
  }
  PackOptions pack;
  pack.shard.max_records_per_shard = 128;
  Result<PackResult> packed = PackDataset(src, data, pack);
  Check(packed.status());
  Result<ShardSet> set = OpenLocalSplit(data, "train");
  Check(set.status());

  // The same JPEG bytes for every method, in memory.
  std::vector<Sample> samples;
  for (const ShardReaderPtr& shard : set->shards) {
    Check(shard->ForEach([&](uint64_t, const Sample& s) {
      samples.push_back(s);
      return Status::Ok();
    }));
  }
  std::printf(
      "loader_bench: %d JPEGs %dx%d (%.1f KiB average), output %dx%dx3 CHW, %d rounds, "
      "1 thread, CPU time\n",
      images, width, height, jpeg_bytes / 1024.0 / images, out, out, rounds);

  Sampler sampler(set->records(), SamplerOptions{});
  auto transform = [&](std::vector<ScaleFactor> scales) {
    TransformOptions t;
    t.output.width = t.output.height = out;
    t.decode_scales = std::move(scales);
    return t;
  };
  struct Variant {
    std::string name;
    std::vector<ScaleFactor> scales;
    bool crop_decode;
  };
  const std::vector<Variant> variants = {
      {"loader: decode+crop+flip+resize+normalise", {{1, 2}, {1, 4}, {1, 8}}, true},
      {"loader, crop decode, full scale only", {}, true},
      {"loader, crop decode, all scales 1/8..7/8", ReducingScales(), true},
      {"loader, whole-image decode, full scale", {}, false},
      {"loader, whole-image decode, reduced scales", ReducingScales(), false},
  };
  std::vector<std::unique_ptr<BatchBuilder>> builders;
  std::vector<std::string> methods = {"decode-only (tjDecompress2, full size)"};
  for (const Variant& v : variants) {
    TransformOptions t = transform(v.scales);
    t.crop_decode = v.crop_decode;
    builders.push_back(std::make_unique<BatchBuilder>(*set, sampler, t, ReadOptions{}));
    methods.push_back(v.name);
  }
  methods.push_back("loader end to end (Loader, 1 thread, 4 epochs)");
  const size_t kEndToEnd = methods.size() - 1;
  methods.push_back("  1 epoch, every batch kept (no buffer reuse)");
  const size_t kKept = methods.size() - 1;
  std::vector<float> floats(size_t(3) * out * out);
  tjhandle tj = tjInitDecompress();
  std::vector<uint8_t> rgb(size_t(width) * height * 3);

  std::map<std::string, std::vector<double>> secs;
  for (int r = 0; r < rounds; ++r) {
    secs[methods[0]].push_back(Seconds([&] {
      for (const Sample& s : samples) {
        if (tjDecompress2(tj, s.data.data(), s.data.size(), rgb.data(), width, 0, height, TJPF_RGB,
                          0) != 0) {
          std::fprintf(stderr, "decode: %s\n", tjGetErrorStr2(tj));
          std::exit(1);
        }
      }
    }));
    for (size_t m = 0; m < builders.size(); ++m) {
      secs[methods[m + 1]].push_back(Seconds([&] {
        for (size_t i = 0; i < samples.size(); ++i) {
          Check(builders[m]->TransformSample(samples[i], 0, i, floats.data()));
        }
      }));
    }
    for (size_t m : {kEndToEnd, kKept}) {
      secs[methods[m]].push_back(Seconds([&] {
        std::vector<Batch> kept;  // holding batches keeps their buffers from being reused
        LoaderOptions lo;
        lo.batch_size = 50;
        lo.threads = 1;
        lo.batches_in_flight = 2;
        // A Loader allocates its first batches_in_flight + 1 buffers and then reuses them; over
        // 4 epochs (40 batches of 50) start-up weighs about as little as in a training run.
        // The "kept" variant holds every batch of 1 epoch, so every buffer is a fresh one.
        lo.epochs = m == kKept ? 1 : 4;
        lo.transform = transform({{1, 2}, {1, 4}, {1, 8}});
        Result<ShardSet> again = OpenLocalSplit(data, "train");
        Check(again.status());
        Result<LoaderPtr> loader = Loader::Open(std::move(again).value(), lo);
        Check(loader.status());
        while (true) {
          Result<std::optional<Batch>> b = (*loader)->Next();
          Check(b.status());
          if (!b->has_value()) break;
          if (m == kKept) kept.push_back(std::move(**b));
        }
      }));
    }
  }
  tjDestroy(tj);
  const double base = samples.size() / Median(secs[methods[0]]);
  const double loader_images = double(images / 50 * 50);
  std::printf("\n%-46s %12s %10s\n", "method", "images/s", "vs decode");
  for (size_t m = 0; m < methods.size(); ++m) {
    const double n = m == kEndToEnd ? 4 * loader_images
                     : m == kKept   ? loader_images
                                    : double(samples.size());
    const double rate = n / Median(secs[methods[m]]);
    std::printf("%-46s %12.1f %9.2fx\n", methods[m].c_str(), rate, rate / base);
  }

  // Reads.
  uint64_t shard_bytes = 0;
  std::vector<std::string> files;
  for (const ShardReaderPtr& s : set->shards) {
    files.push_back(s->name());
    shard_bytes += s->file_size();
  }
  std::map<std::string, std::vector<double>> rsecs;
  const std::vector<std::string> reads = {"plain sequential read(2), 4 MiB", "ShardReader::ForEach",
                                          "loader reads, shard windows",
                                          "loader reads, global shuffle"};
  uint64_t window_bytes = 0, shuffle_bytes = 0;
  std::vector<char> chunk(4 << 20);
  for (int r = 0; r < rounds; ++r) {
    rsecs[reads[0]].push_back(Seconds([&] {
      for (const std::string& f : files) {
        const int fd = ::open(f.c_str(), O_RDONLY);
        while (::read(fd, chunk.data(), chunk.size()) > 0) {
        }
        ::close(fd);
      }
    }));
    rsecs[reads[1]].push_back(Seconds([&] {
      for (const ShardReaderPtr& s : set->shards) {
        Check(s->ForEach([](uint64_t, const Sample&) { return Status::Ok(); }));
      }
    }));
    rsecs[reads[2]].push_back(
        Seconds([&] { window_bytes = LoaderReads(*set, Order::kShardWindows); }));
    rsecs[reads[3]].push_back(
        Seconds([&] { shuffle_bytes = LoaderReads(*set, Order::kGlobalShuffle); }));
  }
  const double mib = shard_bytes / 1048576.0;
  const double plain = mib / Median(rsecs[reads[0]]);
  std::printf(
      "\n%.1f MiB in %zu shards (page cache); reads of an epoch in the loader's order "
      "fetch %.1f MiB (windows) / %.1f MiB (shuffle)\n",
      mib, files.size(), window_bytes / 1048576.0, shuffle_bytes / 1048576.0);
  std::printf("%-46s %12s %10s\n", "method", "MiB/s", "vs plain");
  for (const std::string& m : reads) {
    const double rate = mib / Median(rsecs[m]);
    std::printf("%-46s %12.1f %9.2fx\n", m.c_str(), rate, rate / plain);
  }
  return 0;
}
