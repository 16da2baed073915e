#include "cli/output.h"

#include <algorithm>
#include <cstdio>

#include "base/time_format.h"
#include "cli/start_estimate_view.h"
#include "jobs/codec.h"

namespace dljob {
namespace {

using SysClock = std::chrono::system_clock;

std::string Since(const std::string& from, const std::string& to_or_empty,
                  SysClock::time_point now) {
  auto start = ParseRfc3339(from);
  if (!start) return "-";
  auto end = to_or_empty.empty() ? std::optional(now) : ParseRfc3339(to_or_empty);
  if (!end) return "-";
  return HumanDuration(std::chrono::duration_cast<std::chrono::seconds>(*end - *start));
}

// printf of a metric, "-" when the job has not reported it. Takes the value, not the optional:
// GCC 12 at -O2 loses track of an optional's engaged flag through the copies in the row builders
// below and warns (-Wmaybe-uninitialized) that the value may be read unset.
std::string Number(double v, const char* fmt) {
  char buf[48];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}
std::string Number(const std::optional<double>& v, const char* fmt) {
  return v.has_value() ? Number(v.value(), fmt) : "-";
}

template <typename T>
std::string Integer(const std::optional<T>& v) {
  return v.has_value() ? std::to_string(v.value()) : "-";
}

// The IMG/SEC columns: images/sec, or for a job that reports words (a language model) its
// words/sec marked " words/s", so that the two are never mistaken for each other.
std::string Rate(const std::optional<double>& images, const std::optional<double>& words) {
  if (!images && words) return Number(*words, "%.1f") + " words/s";
  return Number(images, "%.1f");
}

// The ACCURACY column: accuracy, or a language model's validation perplexity ("ppl 143.2").
std::string Quality(const Throughput& t) {
  if (t.accuracy) return Number(*t.accuracy * 100, "%.2f%%");
  if (t.perplexity) return "ppl " + Number(*t.perplexity, "%.1f");
  return "-";
}

// The GPUs a job's run has: an elastic job's current size (status.workers.desired workers) once
// the operator has sized it, else spec.gpus.
std::optional<int64_t> RunGpus(const DLJob& job) {
  if (job.spec.elastic && job.status.workers && job.status.workers->desired > 0) {
    return job.status.workers->desired * job.spec.gpus_per_worker.value_or(1);
  }
  return job.spec.gpus;
}

// The GPUS column: the run's GPUs, and for an elastic job its range ("4 (2-8)").
std::string GpusColumn(const DLJob& job) {
  std::string gpus = Integer(RunGpus(job));
  if (const std::optional<ElasticSpec>& e = job.spec.elastic) {
    gpus += " (" + Integer(e->min_gpus) + "-" + Integer(e->max_gpus) + ")";
  }
  return gpus;
}

// Each row is built left to right, in the order of its table's header.
std::vector<std::string> Row(const DLJob& job, bool wide, SysClock::time_point now) {
  const DLJobStatus& st = job.status;
  const Throughput t = st.throughput.value_or(Throughput{});
  std::vector<std::string> row;
  row.push_back(job.metadata.name);
  row.push_back(st.phase == JobPhase::kUnset ? "Unknown" : PhaseName(st.phase));
  row.push_back(GpusColumn(job));
  row.push_back(Rate(t.images_per_sec, t.words_per_sec));
  if (wide) {
    std::string step = Integer(t.step);
    if (t.step && t.total_steps) step += "/" + std::to_string(*t.total_steps);
    row.push_back(step);
    row.push_back(Number(t.loss, "%.4g"));
    row.push_back(Quality(t));
    row.push_back(std::to_string(st.restarts.value_or(0)));
  }
  row.push_back(st.start_time.empty() ? "-" : Since(st.start_time, st.completion_time, now));
  row.push_back(EstimatedStart(job, now));
  row.push_back(Since(job.metadata.creation_timestamp, "", now));
  if (wide) row.push_back(job.spec.image);
  return row;
}

std::vector<std::string> TopRow(const DLJob& job, bool wide, SysClock::time_point now) {
  const DLJobStatus& st = job.status;
  const Throughput t = st.throughput.value_or(Throughput{});
  const int64_t gpus = RunGpus(job).value_or(0);
  std::optional<double> per_gpu = t.per_gpu_images_per_sec;
  if (!per_gpu && t.images_per_sec && gpus > 0) per_gpu = *t.images_per_sec / gpus;
  std::optional<double> per_gpu_words = t.per_gpu_words_per_sec;
  if (!per_gpu_words && t.words_per_sec && gpus > 0) per_gpu_words = *t.words_per_sec / gpus;
  std::string workers = "-";
  if (st.workers) {
    workers = std::to_string(st.workers->ready) + "/" + std::to_string(st.workers->desired);
  }
  std::vector<std::string> row;
  row.push_back(job.metadata.name);
  row.push_back(st.phase == JobPhase::kUnset ? "Unknown" : PhaseName(st.phase));
  row.push_back(GpusColumn(job));
  row.push_back(workers);
  row.push_back(Rate(t.images_per_sec, t.words_per_sec));
  row.push_back(Rate(per_gpu, per_gpu_words));
  row.push_back(Integer(t.step));
  row.push_back(Number(t.loss, "%.4g"));
  row.push_back(Since(t.updated_at, "", now));  // "-" before the first report
  if (wide) {
    std::string nodes;
    for (const PlacementEntry& p : st.placement) nodes += (nodes.empty() ? "" : ",") + p.node;
    row.push_back(Integer(t.epoch));
    row.push_back(Quality(t));
    row.push_back(std::to_string(st.restarts.value_or(0)));
    row.push_back(nodes.empty() ? "-" : nodes);
  }
  return row;
}

std::string FormatList(const std::vector<DLJob>& jobs, OutputFormat format) {
  nlohmann::json list = {
      {"apiVersion", kApiVersion}, {"kind", "DLJobList"}, {"items", nlohmann::json::array()}};
  for (const DLJob& job : jobs) list["items"].push_back(EncodeTree(job));
  return format == OutputFormat::kJson ? list.dump(2) + "\n" : JsonToYaml(list);
}

// rows[0] is the header; rows[i + 1] is jobs[i].
void AddNamespaceColumn(const std::vector<DLJob>& jobs,
                        std::vector<std::vector<std::string>>& rows) {
  rows[0].insert(rows[0].begin(), "NAMESPACE");
  for (size_t i = 0; i < jobs.size(); ++i) {
    const std::string& ns = jobs[i].metadata.namespace_;
    rows[i + 1].insert(rows[i + 1].begin(), ns.empty() ? "-" : ns);
  }
}

}  // namespace

Result<OutputFormat> ParseOutputFormat(const std::string& name) {
  if (name.empty() || name == "table") return OutputFormat::kTable;
  if (name == "wide") return OutputFormat::kWide;
  if (name == "json") return OutputFormat::kJson;
  if (name == "yaml") return OutputFormat::kYaml;
  return Status::InvalidArgument("unknown output format \"" + name +
                                 "\" (expected json, yaml or wide)");
}

std::string FormatJobs(const std::vector<DLJob>& jobs, OutputFormat format,
                       SysClock::time_point now, bool namespace_column) {
  if (format == OutputFormat::kJson || format == OutputFormat::kYaml)
    return FormatList(jobs, format);
  bool wide = format == OutputFormat::kWide;
  std::vector<std::vector<std::string>> rows;
  rows.push_back(wide ? std::vector<std::string>{"NAME", "STATUS", "GPUS", "IMG/SEC", "STEP",
                                                 "LOSS", "ACCURACY", "RESTARTS", "DURATION",
                                                 "ESTIMATED START", "AGE", "IMAGE"}
                      : std::vector<std::string>{"NAME", "STATUS", "GPUS", "IMG/SEC", "DURATION",
                                                 "ESTIMATED START", "AGE"});
  for (const DLJob& job : jobs) rows.push_back(Row(job, wide, now));
  if (namespace_column) AddNamespaceColumn(jobs, rows);
  return RenderTable(rows);
}

std::string FormatTop(const std::vector<DLJob>& jobs, OutputFormat format, SysClock::time_point now,
                      bool namespace_column) {
  if (format == OutputFormat::kJson || format == OutputFormat::kYaml)
    return FormatList(jobs, format);
  bool wide = format == OutputFormat::kWide;
  std::vector<std::vector<std::string>> rows;
  rows.push_back(
      {"NAME", "STATUS", "GPUS", "WORKERS", "IMG/SEC", "IMG/SEC/GPU", "STEP", "LOSS", "UPDATED"});
  if (wide) {
    for (const char* column : {"EPOCH", "ACCURACY", "RESTARTS", "NODES"}) rows[0].push_back(column);
  }
  int64_t total_gpus = 0;
  double total_rate = 0;
  std::optional<double> total_words;
  for (const DLJob& job : jobs) {
    rows.push_back(TopRow(job, wide, now));
    total_gpus += RunGpus(job).value_or(0);
    const auto& t = job.status.throughput;
    if (t && t->images_per_sec) total_rate += *t->images_per_sec;
    if (t && t->words_per_sec) total_words = total_words.value_or(0) + *t->words_per_sec;
  }
  if (namespace_column) AddNamespaceColumn(jobs, rows);
  char total[160];
  std::snprintf(total, sizeof total, "%zu %s, %lld GPUs, %.1f images/sec", jobs.size(),
                jobs.size() == 1 ? "job" : "jobs", static_cast<long long>(total_gpus), total_rate);
  std::string words = total_words ? ", " + Number(*total_words, "%.1f") + " words/sec" : "";
  return RenderTable(rows) + total + words + "\n";
}

std::string FormatJob(const DLJob& job, OutputFormat format, SysClock::time_point now) {
  switch (format) {
    case OutputFormat::kJson:
      return EncodeJson(job) + "\n";
    case OutputFormat::kYaml:
      return EncodeYaml(job);
    default:
      return FormatJobs({job}, format, now) + EstimateLine(job, now);
  }
}

}  // namespace dljob
