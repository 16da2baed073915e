// work_queue_bench: what one reconcile's trip through the operator's work queue costs (Add, Get,
// Done of a ready key) while many other keys wait with a timed requeue, as every queued job of a
// large run does (kube/runtime/work_queue.h). The ratio is against the same trips with no key
// waiting, measured in the same run: a queue whose Get() looks at every waiting key grows
// linearly with them.
//
//   work_queue_bench [--trips N] [--repeats R]
//
// For each count of waiting keys (0, 1,000, 15,000: the Kueue-shaped case's jobs), the keys are
// added with AddAfter(1 hour), then `trips` ready keys (1,000 distinct, in turn) are added, taken
// and done, one thread; the figure is the median over `repeats` of the mean wall time per trip.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/machine.h"
#include "kube/runtime/work_queue.h"

namespace {

using dljob::kube::WorkQueue;

double NsPerTrip(int waiting, int trips) {
  WorkQueue queue(dljob::RealClock());
  for (int i = 0; i < waiting; ++i) {
    queue.AddAfter("waiting/job-" + std::to_string(i), std::chrono::hours(1));
  }
  std::vector<std::string> keys;
  for (int i = 0; i < 1000; ++i) keys.push_back("ready/job-" + std::to_string(i));
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < trips; ++i) {
    queue.Add(keys[i % keys.size()]);
    std::optional<std::string> key = queue.TryGet();
    if (!key) {
      std::fprintf(stderr, "work_queue_bench: no key ready after Add\n");
      std::exit(1);
    }
    queue.Done(*key);
  }
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / trips;
}

}  // namespace

int main(int argc, char** argv) {
  int trips = 20000;
  int repeats = 5;
  CLI::App app("work_queue_bench: the operator's work queue with many keys waiting");
  app.add_option("--trips", trips, "Add/Get/Done trips per measurement")
      ->check(CLI::PositiveNumber);
  app.add_option("--repeats", repeats, "measurements per count (the median is shown)")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  std::printf("work_queue_bench: %s\n", dljob::bench::MachineLine(DLJOB_BUILD_TYPE).c_str());
  std::printf("%10s %14s %10s\n", "waiting", "ns per trip", "vs 0");
  double base = 0;
  for (int waiting : {0, 1000, 15000}) {
    std::vector<double> runs;
    for (int r = 0; r < repeats; ++r) runs.push_back(NsPerTrip(waiting, trips));
    std::sort(runs.begin(), runs.end());
    const double median = runs[runs.size() / 2];
    if (waiting == 0) base = median;
    std::printf("%10d %14.0f %9.2fx\n", waiting, median, median / base);
  }
  return 0;
}
