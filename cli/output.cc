#include "cli/output.h"

#include <algorithm>
#include <cstdio>

#include "jobs/codec.h"
#include "base/time_format.h"

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

std::string Number(const std::optional<double>& v, const char* fmt) {
  if (!v) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, fmt, *v);
  return buf;
}

std::vector<std::string> Row(const DLJob& job, bool wide, SysClock::time_point now) {
  const DLJobStatus& st = job.status;
  std::optional<Throughput> t = st.throughput;
  std::string phase = st.phase == JobPhase::kUnset ? "Unknown" : PhaseName(st.phase);
  std::vector<std::string> row = {
      job.metadata.name,
      phase,
      job.spec.gpus ? std::to_string(*job.spec.gpus) : "-",
      Number(t ? t->images_per_sec : std::nullopt, "%.1f"),
      st.start_time.empty() ? "-" : Since(st.start_time, st.completion_time, now),
      Since(job.metadata.creation_timestamp, "", now),
  };
  if (wide) {
    std::string step = t && t->step ? std::to_string(*t->step) : "-";
    if (t && t->step && t->total_steps) step += "/" + std::to_string(*t->total_steps);
    std::optional<double> acc;
    if (t && t->accuracy) acc = *t->accuracy * 100;
    row.insert(row.begin() + 4,
               {step, Number(t ? t->loss : std::nullopt, "%.4g"), acc ? Number(acc, "%.2f%%") : "-",
                std::to_string(st.restarts.value_or(0))});
    row.push_back(job.spec.image);
  }
  return row;
}

std::vector<std::string> TopRow(const DLJob& job, bool wide, SysClock::time_point now) {
  const DLJobStatus& st = job.status;
  std::optional<Throughput> t = st.throughput;
  std::optional<double> rate = t ? t->images_per_sec : std::nullopt;
  std::optional<double> per_gpu = t ? t->per_gpu_images_per_sec : std::nullopt;
  if (!per_gpu && rate && job.spec.gpus.value_or(0) > 0) per_gpu = *rate / *job.spec.gpus;
  std::string workers = "-";
  if (st.workers) {
    workers = std::to_string(st.workers->ready) + "/" + std::to_string(st.workers->desired);
  }
  std::vector<std::string> row = {
      job.metadata.name,
      st.phase == JobPhase::kUnset ? "Unknown" : PhaseName(st.phase),
      job.spec.gpus ? std::to_string(*job.spec.gpus) : "-",
      workers,
      Number(rate, "%.1f"),
      Number(per_gpu, "%.1f"),
      t && t->step ? std::to_string(*t->step) : "-",
      Number(t ? t->loss : std::nullopt, "%.4g"),
      t ? Since(t->updated_at, "", now) : "-",
  };
  if (wide) {
    std::optional<double> acc;
    if (t && t->accuracy) acc = *t->accuracy * 100;
    std::string nodes;
    for (const PlacementEntry& p : st.placement) nodes += (nodes.empty() ? "" : ",") + p.node;
    row.insert(row.end(),
               {t && t->epoch ? std::to_string(*t->epoch) : "-", acc ? Number(acc, "%.2f%%") : "-",
                std::to_string(st.restarts.value_or(0)), nodes.empty() ? "-" : nodes});
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

std::string RenderTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 3, ' ');
    }
    out += line + "\n";
  }
  return out;
}

std::string FormatJobs(const std::vector<DLJob>& jobs, OutputFormat format,
                       SysClock::time_point now, bool namespace_column) {
  if (format == OutputFormat::kJson || format == OutputFormat::kYaml)
    return FormatList(jobs, format);
  bool wide = format == OutputFormat::kWide;
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"NAME", "STATUS", "GPUS", "IMG/SEC", "DURATION", "AGE"});
  if (wide) {
    rows[0].insert(rows[0].begin() + 4, {"STEP", "LOSS", "ACCURACY", "RESTARTS"});
    rows[0].push_back("IMAGE");
  }
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
  if (wide) rows[0].insert(rows[0].end(), {"EPOCH", "ACCURACY", "RESTARTS", "NODES"});
  int64_t total_gpus = 0;
  double total_rate = 0;
  for (const DLJob& job : jobs) {
    rows.push_back(TopRow(job, wide, now));
    total_gpus += job.spec.gpus.value_or(0);
    const auto& t = job.status.throughput;
    if (t && t->images_per_sec) total_rate += *t->images_per_sec;
  }
  if (namespace_column) AddNamespaceColumn(jobs, rows);
  char total[128];
  std::snprintf(total, sizeof total, "%zu %s, %lld GPUs, %.1f images/sec\n", jobs.size(),
                jobs.size() == 1 ? "job" : "jobs", static_cast<long long>(total_gpus), total_rate);
  return RenderTable(rows) + total;
}

std::string FormatJob(const DLJob& job, OutputFormat format, SysClock::time_point now) {
  switch (format) {
    case OutputFormat::kJson:
      return EncodeJson(job) + "\n";
    case OutputFormat::kYaml:
      return EncodeYaml(job);
    default:
      return FormatJobs({job}, format, now);
  }
}

}  // namespace dljob
