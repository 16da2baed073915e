#include "cli/advise/recommendation.h"

#include <cmath>
#include <cstdio>

#include "base/human_format.h"

namespace dljob::advise {
namespace {

std::string WhyOf(const AdviceRun& run, const char* axis, const std::string& fallback) {
  for (const AxisResult& a : run.axes) {
    if (a.axis == axis) return a.explanation;
  }
  return fallback;
}

}  // namespace

Recommendation Recommend(const AdviceRun& run, const AdvisePlan& plan) {
  Recommendation r;
  r.threads_per_rank = run.chosen.threads_per_rank;
  if (!plan.loader_threads.empty()) r.loader_threads = run.chosen.loader_threads;
  r.cpu_per_gpu = std::to_string(r.threads_per_rank + r.loader_threads.value_or(0));
  r.lines.push_back(
      {"resources.cpuPerGpu", r.cpu_per_gpu,
       std::to_string(r.threads_per_rank) + " intra-op thread(s) per rank" +
           (r.loader_threads ? " + " + std::to_string(*r.loader_threads) + " loader thread(s)"
                             : "") +
           "; threads " + WhyOf(run, kAxisThreads, "")});
  if (run.memory_cap_bytes) {
    const double per_rank =
        static_cast<double>(*run.memory_cap_bytes) * kMemoryHeadroom / std::max(1, plan.ranks);
    r.memory_per_gpu = MemoryQuantity(static_cast<int64_t>(std::ceil(per_rank)));
    r.lines.push_back({"resources.memoryPerGpu", *r.memory_per_gpu,
                       HumanBytes(*run.memory_cap_bytes) + " for " + std::to_string(plan.ranks) +
                           " rank(s), +25% headroom; memory " + WhyOf(run, kAxisMemory, "")});
  } else {
    r.lines.push_back(
        {"resources.memoryPerGpu", "-",
         plan.memory_note.empty() ? WhyOf(run, kAxisMemory, "not measured") : plan.memory_note});
  }
  if (r.loader_threads) {
    r.lines.push_back({"loader threads", std::to_string(*r.loader_threads),
                       "--loader_threads; " + WhyOf(run, kAxisLoader, "")});
  } else {
    r.lines.push_back({"loader threads", "-", plan.loader_note});
  }
  if (run.chosen.data_path.empty()) {
    r.lines.push_back({"cache the data", "-", plan.data_note});
  } else {
    r.cache = run.chosen.data_path == kDataCache;
    std::string why = plan.data_paths.size() > 1 ? WhyOf(run, kAxisData, "") : plan.data_note;
    r.lines.push_back({"cache the data", *r.cache ? "yes" : "no", why});
  }
  return r;
}

std::vector<std::string> NoiseNotes(const AdviceRun& run, double tolerance) {
  std::vector<std::string> notes;
  for (const AxisResult& a : run.axes) {
    if (!a.saturation || a.saturation->shape == CurveShape::kSingle ||
        a.saturation->band <= tolerance + 1e-9) {
      continue;  // one candidate: the band decided nothing
    }
    char text[320];
    std::snprintf(text, sizeof text,
                  "the %s trials were noisy: their band widened from %.0f%% to %.0f%%, so "
                  "smaller differences count as none; for a firmer answer rerun on a quieter "
                  "machine, or with more --repeats or a larger --num-batches",
                  a.axis.c_str(), tolerance * 100, a.saturation->band * 100);
    notes.push_back(text);
  }
  return notes;
}

std::vector<std::string> CarryOverNotes(bool on_gpu, const std::string& job_file) {
  const std::string file = job_file.empty() ? "JOB.yaml" : job_file;
  std::vector<std::string> notes;
  if (!on_gpu) {
    notes.push_back(
        "These trials ran the ranks on CPU. Threads per rank and loader threads measured here size "
        "CPU ranks only: on a GPU node the model runs as GPU kernels and a rank's threads mostly "
        "feed the GPU (input pipeline, launches, communication), so the cpuPerGpu found here is "
        "not the GPU job's.");
    notes.push_back(
        "What carries over: where the data is read from (object store, cache, local disk) and "
        "the cache decision, and the memory of the host process (dataset in memory, loader "
        "buffers, libraries) — GPU memory is not counted either way.");
  }
  notes.push_back(
      "To size the GPU job, run advise on a GPU node of the kind the job will get: `dljob "
      "advise -f " +
      file +
      "` there (with dljob and dljob-train installed), or as a DLJob whose command is "
      "`dljob advise -f <the job file> -o yaml` on one GPU worker.");
  return notes;
}

}  // namespace dljob::advise
