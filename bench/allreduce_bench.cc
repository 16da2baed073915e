// Benchmark (a) of docs/benchmarks/README.md ("Targets and headline figures"): averaging a
// ResNet-50 gradient set (161 tensors, 25,557,032 floats, torchvision's layer shapes) over MPI
// ranks, several ways, measured in the same run against a raw TCP stream of the same bytes:
//   stream    the baseline (bench/wire_stream.h): plain TCP sockets from each rank to the next in
//             a ring, on the interface MPI's TCP transport uses (btl_tcp_if_include/exclude, or
//             --stream_if with the same syntax), moving per rank and iteration the bytes a ring
//             allreduce moves, 2(p-1)/p x 102.2 MB, out and in at once; no reduction;
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
// the median over rounds of the mean ms per iteration, slowest rank. Ratios are against the raw
// stream and against the faster of single and pertensor. The MCA parameters that matter for TCP
// and the load average before and after are printed with the figures. Run: mpirun -np N
// allreduce_bench [--rounds R] [--iters I] [--segment_kb K] [--in_flight F] [--local_size L]
// [--sweep] [--stream_if IFS] [--methods LIST] [--sum_segments KB,...] [--algorithms A,...]
// (--sweep: a range of segment sizes and in-flight counts for the averaging rows; --methods: a
// comma-separated subset of stream,fused,sum,fp16,hier,single,pertensor; --sum_segments: more
// sum rows with these segment sizes; --algorithms: more sum rows, each on a communicator whose
// MPI_Allreduce is Open MPI's tuned algorithm A, which needs --mca coll_tuned_use_dynamic_rules 1).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <mpi.h>

#include "bench/mpi_parameters.h"
#include "bench/wire_stream.h"
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
  std::string stream_if;  // btl_tcp_if_include syntax; empty: what MPI's TCP transport uses
  std::string methods = "stream,fused,sum,fp16,hier,single,pertensor";
  std::vector<size_t> sum_segments_kb;  // more "fused sum" rows, one per segment size
  std::vector<int> algorithms;          // more "fused sum" rows, one per forced algorithm
};

// "1,2,3" -> {1, 2, 3} (atol of each item).
template <typename T>
std::vector<T> Numbers(const std::string& list) {
  std::vector<T> out;
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    if (comma > at) out.push_back(static_cast<T>(std::atol(list.substr(at, comma - at).c_str())));
    at = comma + 1;
  }
  return out;
}

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
    else if (arg == "--stream_if" && i + 1 < argc)
      a.stream_if = argv[++i];
    else if (arg == "--methods" && i + 1 < argc)
      a.methods = argv[++i];
    else if (arg == "--sum_segments" && i + 1 < argc)
      a.sum_segments_kb = Numbers<size_t>(argv[++i]);
    else if (arg == "--algorithms" && i + 1 < argc)
      a.algorithms = Numbers<int>(argv[++i]);
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
  std::string key;  // what --methods names it by
  std::string name;
  std::function<void()> op;
  std::vector<double> samples;
};

// Whether the comma-separated `list` names `key`.
bool Listed(const std::string& list, const std::string& key) {
  return ("," + list + ",").find("," + key + ",") != std::string::npos;
}

// The median of the method called `key`, or 0 when it did not run.
double MedianOf(const std::vector<Method>& methods, const std::string& key) {
  for (const Method& m : methods) {
    if (m.key == key) return Median(m.samples);
  }
  return 0;
}

// A "fused sum" method (key "sum") of `options` over `collective`, its reducer kept in `fusers`.
void AddSum(Collective& collective, const FusionOptions& options, const std::string& name,
            std::vector<FloatSpan>& spans, std::deque<FusedAllreducer>& fusers,
            std::vector<Method>& methods) {
  FusedAllreducer* fuser = &fusers.emplace_back(collective, options);
  methods.push_back({"sum",
                     name,
                     [fuser, &spans]() {
                       if (!fuser->Allreduce(spans).ok()) std::abort();
                     },
                     {}});
}

// An MpiCollective over MPI_COMM_WORLD whose allreduce runs Open MPI's tuned algorithm
// `algorithm` (3 recursive doubling, 4 ring, 5 segmented ring, 6 Rabenseifner, ...): the
// parameter coll_tuned_allreduce_algorithm is read when a communicator is made, so it is set
// through MPI_T for this one and put back. Needs mpirun --mca coll_tuned_use_dynamic_rules 1.
Result<std::unique_ptr<MpiCollective>> WithAllreduceAlgorithm(int algorithm) {
  if (bench::MpiParameter("coll_tuned_use_dynamic_rules") != "true") {
    return Status::FailedPrecondition(
        "--algorithms needs mpirun --mca coll_tuned_use_dynamic_rules 1");
  }
  const std::string before = bench::MpiParameter("coll_tuned_allreduce_algorithm").value_or("0");
  if (!bench::SetMpiIntParameter("coll_tuned_allreduce_algorithm", algorithm)) {
    return Status::Unavailable("cannot set coll_tuned_allreduce_algorithm through MPI_T");
  }
  Result<std::unique_ptr<MpiCollective>> made = MpiCollective::Create(MPI_COMM_WORLD, {0, 1});
  bench::SetMpiIntParameter("coll_tuned_allreduce_algorithm", std::atoi(before.c_str()));
  return made;
}

// One row per method: its median, its ratio to the raw stream and to the faster of the two MPI
// baselines (single, pertensor); "-" where that did not run.
void PrintTable(const std::vector<Method>& methods) {
  const double single_ms = MedianOf(methods, "single");
  const double per_tensor_ms = MedianOf(methods, "pertensor");
  const double best = single_ms > 0 && per_tensor_ms > 0 ? std::min(single_ms, per_tensor_ms)
                                                         : std::max(single_ms, per_tensor_ms);
  const double stream_ms = MedianOf(methods, "stream");
  std::printf("%-34s %9s  %13s  %12s\n", "method", "ms/iter", "x raw stream", "x faster MPI");
  for (const Method& m : methods) {
    const double ms = Median(m.samples);
    char of_stream[32] = "-";
    char of_best[32] = "-";
    if (stream_ms > 0) std::snprintf(of_stream, sizeof(of_stream), "%.2f", ms / stream_ms);
    if (best > 0) std::snprintf(of_best, sizeof(of_best), "%.2f", ms / best);
    std::printf("%-34s %9.2f  %13s  %12s\n", m.name.c_str(), ms, of_stream, of_best);
  }
  if (single_ms > 0 && per_tensor_ms > 0) {
    std::printf("single / per-tensor = %.2f\n", single_ms / per_tensor_ms);
  }
}

// The first field of /proc/loadavg (the 1-minute load average), or "?".
std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  return in >> one ? one : "?";
}

// The MCA parameters this benchmark's TCP figures depend on, as MPI reports them.
const std::vector<std::string> kTcpParameters = {"pml",
                                                 "pml_ucx_tls",
                                                 "pml_ucx_devices",
                                                 "btl",
                                                 "btl_tcp_if_include",
                                                 "btl_tcp_links",
                                                 "btl_tcp_eager_limit",
                                                 "btl_tcp_rndv_eager_limit",
                                                 "btl_tcp_max_send_size",
                                                 "btl_tcp_sndbuf",
                                                 "btl_tcp_rcvbuf",
                                                 "coll_tuned_use_dynamic_rules",
                                                 "coll_tuned_allreduce_algorithm",
                                                 "coll_tuned_allreduce_algorithm_segmentsize"};

// The raw TCP stream method (bench/wire_stream.h), or nullptr with one rank or when not listed.
// `line` describes it.
Result<std::unique_ptr<bench::TcpRing>> OpenStream(MPI_Comm comm, const Args& args,
                                                   std::string& line) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  if (size < 2 || !Listed(args.methods, "stream")) return std::unique_ptr<bench::TcpRing>();
  const bench::MpiTcpInterfaces mpi = bench::ReadMpiTcpInterfaces();
  const std::string include = args.stream_if.empty() ? mpi.include : args.stream_if;
  Result<std::vector<bench::InterfaceAddress>> local = bench::LocalInterfaces();
  Result<bench::InterfaceAddress> chosen =
      local.ok() ? bench::ChooseInterface(*local, include, mpi.exclude) : local.status();
  // Every rank learns whether all found an address before the (collective) ring is opened.
  int all_chose = chosen.ok() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &all_chose, 1, MPI_INT, MPI_MIN, comm);
  if (!chosen.ok()) return chosen.status();
  if (all_chose == 0) return Status::Unavailable("another rank found no address to listen on");
  Result<std::unique_ptr<bench::TcpRing>> ring = bench::TcpRing::Open(comm, chosen->ipv4);
  if (ring.ok()) line = "on " + chosen->name + " " + bench::FormatIpv4(chosen->ipv4);
  return ring;
}

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
  const std::string load_before = LoadAverage();

  // The raw stream: the bytes a ring allreduce of the whole set moves, out of `single` (as
  // bytes) and into a receive buffer of the same size, no reduction.
  const uint64_t stream_bytes = bench::RingAllreduceBytesPerRank(total * sizeof(float), c.size());
  std::vector<char> stream_in(total * sizeof(float));
  std::string stream_where;
  Result<std::unique_ptr<bench::TcpRing>> ring = OpenStream(comm, args, stream_where);
  if (!ring.ok()) {
    std::fprintf(stderr, "allreduce_bench: rank %d: raw TCP stream: %s\n", c.rank(),
                 ring.status().message().c_str());
    return 1;
  }

  std::vector<std::pair<size_t, int>> configs = {{args.segment_kb, args.in_flight}};
  if (args.sweep) {
    configs.clear();
    configs = {{256, 1},  {1024, 1},  {1024, 4},  {4096, 1}, {4096, 2},
               {8192, 1}, {16384, 1}, {32768, 1}, {65536, 1}};
  }
  std::vector<std::unique_ptr<MpiCollective>> forced;  // one per --algorithms entry
  std::deque<FusedAllreducer> fusers;                  // a deque: pointers into it are kept
  std::vector<Method> methods;
  bench::TcpRing* stream = ring->get();
  if (stream != nullptr) {
    methods.push_back({"stream",
                       "raw TCP stream (wire baseline)",
                       [&, stream]() {
                         Status s =
                             stream->Exchange(reinterpret_cast<const char*>(single.data()),
                                              stream_in.data(), stream_in.size(), stream_bytes);
                         if (!s.ok()) {
                           std::fprintf(stderr, "allreduce_bench: %s\n", s.message().c_str());
                           std::abort();
                         }
                       },
                       {}});
  }
  for (auto [kb, f] : configs) {
    fusers.emplace_back(c, FusionOptions{size_t{64} << 20, kb << 10, f});
    FusedAllreducer* fuser = &fusers.back();
    methods.push_back({"fused",
                       "fused seg=" + std::to_string(kb) + "KB inflight=" + std::to_string(f),
                       [fuser, &spans]() {
                         if (!fuser->AllreduceAverage(spans).ok()) std::abort();
                       },
                       {}});
  }
  const FusionOptions base{size_t{64} << 20, args.segment_kb << 10, 1};
  FusionOptions sum_options = base;
  sum_options.average = false;
  AddSum(c, sum_options, "fused sum, no scaling", spans, fusers, methods);
  for (size_t kb : args.sum_segments_kb) {
    FusionOptions options = sum_options;
    options.segment_bytes = kb << 10;
    AddSum(c, options, "fused sum seg=" + std::to_string(kb) + "KB", spans, fusers, methods);
  }
  for (int algorithm : args.algorithms) {
    Result<std::unique_ptr<MpiCollective>> made = WithAllreduceAlgorithm(algorithm);
    if (!made.ok()) {
      std::fprintf(stderr, "allreduce_bench: %s\n", made.status().message().c_str());
      return 1;
    }
    forced.push_back(std::move(*made));
    AddSum(*forced.back(), sum_options, "fused sum alg=" + std::to_string(algorithm), spans, fusers,
           methods);
  }
  FusionOptions half_options = base;
  half_options.fp16 = true;
  fusers.emplace_back(c, half_options);
  FusedAllreducer* half = &fusers.back();
  methods.push_back({"fp16",
                     "fused fp16 seg=" + std::to_string(args.segment_kb) + "KB",
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
    methods.push_back({"hier",
                       "fused " + hierarchical->name(),
                       [fuser, &spans]() {
                         if (!fuser->AllreduceAverage(spans).ok()) std::abort();
                       },
                       {}});
  }
  methods.push_back({"single",
                     "single MPI_Allreduce",
                     [&]() {
                       MPI_Allreduce(MPI_IN_PLACE, single.data(), static_cast<int>(total),
                                     MPI_FLOAT, MPI_SUM, comm);
                     },
                     {}});
  methods.push_back({"pertensor",
                     "MPI_Allreduce per tensor",
                     [&]() {
                       for (auto& t : tensors) {
                         MPI_Allreduce(MPI_IN_PLACE, t.data(), static_cast<int>(t.size()),
                                       MPI_FLOAT, MPI_SUM, comm);
                       }
                     },
                     {}});
  std::erase_if(methods, [&](const Method& m) { return !Listed(args.methods, m.key); });
  for (Method& m : methods) TimeMs(comm, 1, m.op);  // warm-up: page faults, MPI connections
  for (int r = 0; r < args.rounds; ++r) {
    for (Method& m : methods) m.samples.push_back(TimeMs(comm, args.iters, m.op));
    // Baselines sum without dividing; keep their values finite and normal.
    std::fill(single.begin(), single.end(), 1.0f);
    for (auto& t : tensors) std::fill(t.begin(), t.end(), 1.0f);
  }
  const std::string parameters = bench::DescribeMpiParameters(kTcpParameters);
  if (c.rank() != 0) return 0;
  std::printf(
      "ResNet-50 gradients: %zu tensors, %zu floats (%.1f MB), %d ranks, %d rounds x %d "
      "iters\n",
      counts.size(), total, total * 4.0 / 1e6, c.size(), args.rounds, args.iters);
  std::printf("MCA: %s\n", parameters.c_str());
  for (const char* name : {"UCX_TLS", "UCX_NET_DEVICES"}) {  // UCX's own, when pml ucx runs
    if (const char* value = std::getenv(name)) std::printf("%s=%s\n", name, value);
  }
  if (const double stream_ms = MedianOf(methods, "stream"); stream_ms > 0) {
    std::printf(
        "raw TCP stream %s: %.1f MB out and %.1f MB in per rank and iteration (ring allreduce's "
        "2(p-1)/p x %.1f MB), %.2f GB/s each way\n",
        stream_where.c_str(), stream_bytes / 1e6, stream_bytes / 1e6, total * 4.0 / 1e6,
        stream_bytes / 1e6 / stream_ms);
  }
  PrintTable(methods);
  std::printf("load average %s before, %s after\n", load_before.c_str(), LoadAverage().c_str());
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
