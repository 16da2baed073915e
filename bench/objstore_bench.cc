// objstore_bench: cache warm-up throughput (WarmCache, N parallel ranged downloads) against a
// plain sequential copy (one whole-object GET after another, written to a file) of the same
// objects from the same server, measured in the same run. Prints MiB/s of each and the ratio.
//
//   objstore_bench [--objects 32] [--mib 4] [--parallel 8]
// Needs s3rver (scripts/dev/setup.sh); the server is started on 127.0.0.1 and stopped on exit.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "storage/objstore/cache_warmup.h"
#include "storage/objstore/s3_store.h"
#include "storage/objstore/testing/s3rver_process.h"
#include "testing/command.h"

using namespace dljob;
using namespace dljob::storage;
using Stopwatch = std::chrono::steady_clock;  // a measurement: the benchmark times itself

int main(int argc, char** argv) {
  int objects = 32, mib = 4, parallel = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--objects")) objects = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--mib")) mib = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--parallel")) parallel = std::atoi(argv[i + 1]);
  }
  if (!storage::testing::S3rverProcess::Available()) {
    std::fprintf(stderr, "%s\n", storage::testing::S3rverProcess::InstallHint().c_str());
    return 2;
  }
  storage::testing::S3rverProcess server("bench");
  if (Status s = server.Start(); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  auto store = std::move(S3Store::Open(server.Url(), server.Config()).value());
  std::string data(static_cast<size_t>(mib) << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 2654435761u) >> 13);
  for (int i = 0; i < objects; ++i) {
    data[0] = static_cast<char>(i);
    if (Status s = store->Put("set/obj-" + std::to_string(i), data); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
  }
  const double total_mib = double(objects) * mib;
  dljob::testing::TempDir out;

  // Baseline: list, then one whole GET per object, written out, one after another.
  Stopwatch::time_point t0 = Stopwatch::now();
  auto listed = ListAll(*store, "set/");
  std::filesystem::create_directories(out.path() + "/seq");
  for (const ObjectInfo& o : listed.value()) {
    std::string bytes = store->Get(o.key).value();
    std::ofstream(out.path() + "/seq/" + o.key.substr(4), std::ios::binary) << bytes;
  }
  const double seq_s = std::chrono::duration<double>(Stopwatch::now() - t0).count();

  WarmCacheOptions options;
  options.parallel = parallel;
  t0 = Stopwatch::now();
  Result<WarmCacheResult> r = WarmCache(*store, "set", out.path() + "/warm", options);
  const double warm_s = std::chrono::duration<double>(Stopwatch::now() - t0).count();
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.status().message().c_str());
    return 1;
  }
  std::printf("objects %d x %d MiB from s3rver on loopback, %u hardware threads\n", objects, mib,
              std::thread::hardware_concurrency());
  std::printf("sequential copy        %8.1f MiB/s  (%.2f s)\n", total_mib / seq_s, seq_s);
  std::printf("WarmCache parallel=%-3d %8.1f MiB/s  (%.2f s, MD5-verified)  ratio %.2fx\n",
              parallel, total_mib / warm_s, warm_s, seq_s / warm_s);
  return 0;
}
