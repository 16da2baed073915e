// Benchmark (a) of docs/benchmarks/README.md ("Targets and headline figures"): averaging a
// ResNet-50 gradient set (161 tensors, 25,557,032 floats, torchvision's layer shapes) over MPI
// ranks, three ways, measured in the same run:
//   fused     FusedAllreducer (comm/fused_allreduce.h): 64 MB fusion buffer, segmented and
//             pipelined (segment size and in-flight count as configured), unpacked and divided
//             by the world size — everything the trainer does for its gradients;
//   fused sum the same with FusionOptions::average = false: summed only, no scaling pass, large
//             tensors reduced in place in one call each (what the trainer runs once it
//             pre-scales the loss by 1/world);
//   fp16      the same with FusionOptions::fp16: halves on the wire, summed by a user MPI_Op;
//   hier      the same over HierarchicalCollective (comm/hierarchical_collective.h) with
//             simulated nodes of --local_size ranks (default 2; shown when it makes 2+ nodes of
//             2+ ranks, e.g. 2x2 at 4 ranks);
//   single    one MPI_Allreduce over one buffer of the same total size;
//   pertensor one MPI_Allreduce per tensor.
// The methods run interleaved in rounds (so machine noise hits all of them alike); each figure is
// the median over rounds of the mean ms per iteration, slowest rank. Ratios are against the faster
// baseline. Run: mpirun -np N allreduce_bench [--rounds R] [--iters I] [--segment_kb K]
// [--in_flight F] [--local_size L] [--sweep]   (--sweep: a range of segment sizes and in-flight
// counts).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <mpi.h>

#include "images/trainer/comm/fused_allreduce.h"
#include "images/trainer/comm/hierarchical_collective.h"
#include "images/trainer/comm/mpi_collective.h"
#include "images/trainer/comm/mpi_environment.h"

namespace dljob::trainer {
namespace {

// Element counts of torchvision's resnet50().parameters(), in registration order.
std::vector<size_t> ResNet50Counts() {
  std::vector<size_t> counts = {64 * 3 * 7 * 7, 64, 64};  // conv1, bn1
  const int blocks[4] = {3, 4, 6, 3};
  const size_t widths[4] = {64, 128, 256, 512};
  size_t in = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const size_t w = widths[stage];
    for (int b = 0; b < blocks[stage]; ++b) {
      const size_t block_in = b == 0 ? in : w * 4;
      counts.insert(counts.end(), {w * block_in, w, w, w * w * 9, w, w, w * 4 * w, w * 4, w * 4});
      if (b == 0) counts.insert(counts.end(), {w * 4 * in, w * 4, w * 4});  // downsample
    }
    in = w * 4;
  }
  counts.insert(counts.end(), {1000 * 2048, 1000});  // fc
  return counts;
}

struct Args {
  int rounds = 7;
  int iters = 3;
  size_t segment_kb = kDefaultSegmentBytes >> 10;  // FusionOptions' defaults
  int in_flight = 1;
  int local_size = 2;
  bool sweep = false;
};

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() { return i + 1 < argc ? std::atol(argv[++i]) : 0L; };
    if (arg == "--rounds")
      a.rounds = static_cast<int>(next());
    else if (arg == "--iters")
      a.iters = static_cast<int>(next());
    else if (arg == "--segment_kb")
      a.segment_kb = static_cast<size_t>(next());
    else if (arg == "--in_flight")
      a.in_flight = static_cast<int>(next());
    else if (arg == "--local_size")
      a.local_size = static_cast<int>(next());
    else if (arg == "--sweep")
      a.sweep = true;
  }
  return a;
}

// Mean ms per iteration of `op` on the slowest rank.
double TimeMs(MPI_Comm comm, int iters, const std::function<void()>& op) {
  MPI_Barrier(comm);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) op();
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
      iters;
  MPI_Allreduce(MPI_IN_PLACE, &ms, 1, MPI_DOUBLE, MPI_MAX, comm);
  return ms;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Method {
  std::string name;
  std::function<void()> op;
  std::vector<double> samples;
};

int Run(int argc, char** argv) {
  const Args args = ParseArgs(argc, argv);
  // Segmenting is the FusedAllreducer's job here; the collective sends what it is given whole.
  auto collective = MpiCollective::Create(MPI_COMM_WORLD, {0, 1});
  if (!collective.ok()) return 1;
  MpiCollective& c = **collective;
  const MPI_Comm comm = c.comm();
  const std::vector<size_t> counts = ResNet50Counts();
  size_t total = 0;
  for (size_t n : counts) total += n;
  std::vector<std::vector<float>> tensors;
  for (size_t n : counts) tensors.emplace_back(n, 1.0f);
  std::vector<FloatSpan> spans;  // reverse registration order, as the trainer passes them
  for (auto it = tensors.rbegin(); it != tensors.rend(); ++it)
    spans.push_back({it->data(), it->size()});
  std::vector<float> single(total, 1.0f);

  std::vector<std::pair<size_t, int>> configs = {{args.segment_kb, args.in_flight}};
  if (args.sweep) {
    configs.clear();
    configs = {{256, 1},  {1024, 1},  {1024, 4},  {4096, 1}, {4096, 2},
               {8192, 1}, {16384, 1}, {32768, 1}, {65536, 1}};
  }
  std::vector<FusedAllreducer> fusers;
  std::vector<Method> methods;
  fusers.reserve(configs.size() + 3);  // pointers into it are kept
  for (auto [kb, f] : configs) {
    fusers.emplace_back(c, FusionOptions{size_t{64} << 20, kb << 10, f});
    FusedAllreducer* fuser = &fusers.back();
    methods.push_back({"fused seg=" + std::to_string(kb) + "KB inflight=" + std::to_string(f),
                       [fuser, &spans]() {
                         if (!fuser->AllreduceAverage(spans).ok()) std::abort();
                       },
                       {}});
  }
  const FusionOptions base{size_t{64} << 20, args.segment_kb << 10, 1};
  FusionOptions sum_options = base;
  sum_options.average = false;
  fusers.emplace_back(c, sum_options);
  FusedAllreducer* sum = &fusers.back();
  methods.push_back({"fused sum, no scaling",
                     [sum, &spans]() {
                       if (!sum->Allreduce(spans).ok()) std::abort();
                     },
                     {}});
  FusionOptions half_options = base;
  half_options.fp16 = true;
  fusers.emplace_back(c, half_options);
  FusedAllreducer* half = &fusers.back();
  methods.push_back({"fused fp16 seg=" + std::to_string(args.segment_kb) + "KB",
                     [half, &spans]() {
                       if (!half->AllreduceAverage(spans).ok()) std::abort();
                     },
                     {}});
  std::unique_ptr<Collective> hierarchical;
  const int nodes = args.local_size > 0 ? c.size() / args.local_size : 0;
  if (args.local_size >= 2 && nodes >= 2 && c.size() % args.local_size == 0) {
    auto made = MakeHierarchicalMpiCollective(MPI_COMM_WORLD, args.local_size);
    if (!made.ok()) {
      std::fprintf(stderr, "allreduce_bench: %s\n", made.status().message().c_str());
      return 1;
    }
    hierarchical = std::move(*made);
    fusers.emplace_back(*hierarchical, base);
    FusedAllreducer* fuser = &fusers.back();
    methods.push_back({"fused " + hierarchical->name(),
                       [fuser, &spans]() {
                         if (!fuser->AllreduceAverage(spans).ok()) std::abort();
                       },
                       {}});
  }
  methods.push_back({"single MPI_Allreduce",
                     [&]() {
                       MPI_Allreduce(MPI_IN_PLACE, single.data(), static_cast<int>(total),
                                     MPI_FLOAT, MPI_SUM, comm);
                     },
                     {}});
  methods.push_back({"MPI_Allreduce per tensor",
                     [&]() {
                       for (auto& t : tensors) {
                         MPI_Allreduce(MPI_IN_PLACE, t.data(), static_cast<int>(t.size()),
                                       MPI_FLOAT, MPI_SUM, comm);
                       }
                     },
                     {}});
  for (Method& m : methods) TimeMs(comm, 1, m.op);  // warm-up: page faults, MPI connections
  for (int r = 0; r < args.rounds; ++r) {
    for (Method& m : methods) m.samples.push_back(TimeMs(comm, args.iters, m.op));
    // Baselines sum without dividing; keep their values finite and normal.
    std::fill(single.begin(), single.end(), 1.0f);
    for (auto& t : tensors) std::fill(t.begin(), t.end(), 1.0f);
  }
  if (c.rank() != 0) return 0;
  const size_t n = methods.size();
  const double single_ms = Median(methods[n - 2].samples);
  const double per_tensor_ms = Median(methods[n - 1].samples);
  const double best = std::min(single_ms, per_tensor_ms);
  std::printf(
      "ResNet-50 gradients: %zu tensors, %zu floats (%.1f MB), %d ranks, %d rounds x %d "
      "iters\n",
      counts.size(), total, total * 4.0 / 1e6, c.size(), args.rounds, args.iters);
  for (const Method& m : methods) {
    const double ms = Median(m.samples);
    std::printf("%-34s %9.2f ms/iter   x%.2f of the faster baseline\n", m.name.c_str(), ms,
                ms / best);
  }
  std::printf("single / per-tensor = %.2f\n", single_ms / per_tensor_ms);
  return 0;
}

}  // namespace
}  // namespace dljob::trainer

int main(int argc, char** argv) {
  auto env = dljob::trainer::MpiEnvironment::Create(&argc, &argv);
  if (!env.ok()) {
    std::fprintf(stderr, "allreduce_bench: %s\n", env.status().message().c_str());
    return 1;
  }
  return dljob::trainer::Run(argc, argv);
}
