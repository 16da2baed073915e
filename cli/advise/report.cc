#include "cli/advise/report.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "base/human_format.h"

namespace dljob::advise {
namespace {

std::string Fixed(double v, const char* format) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string Result(const TrialMeasurement& m) {
  if (m.ok) return "ok";
  if (m.out_of_memory) return "out of memory";
  std::string e = m.error;
  if (e.size() > 60) e = e.substr(0, 57) + "...";
  return "failed: " + e;
}

}  // namespace

std::string FormatTrialTable(const AdviceRun& run) {
  std::vector<std::vector<std::string>> rows = {{"#", "AXIS", "THREADS", "LOADER", "DATA",
                                                 "MEM CAP", Upper(run.unit), "NOISE", "START",
                                                 "FETCH", "PEAK MEM", "RESULT"}};
  for (const TrialRecord& t : run.trials) {
    const TrialSetting& s = t.setting;
    const TrialMeasurement& m = t.measurement;
    rows.push_back({std::to_string(t.index), t.axis, std::to_string(s.threads_per_rank),
                    s.loader_threads ? std::to_string(*s.loader_threads) : "-",
                    s.data_path.empty() ? "-" : s.data_path,
                    s.memory_limit_bytes ? HumanBytes(*s.memory_limit_bytes) : "-",
                    m.ok ? Fixed(m.throughput, "%.1f") : "-",
                    m.ok && m.noise > 0 ? Fixed(m.noise * 100, "%.1f%%") : "-",
                    m.startup_seconds > 0 ? Fixed(m.startup_seconds, "%.1fs") : "-",
                    m.fetch_seconds > 0 ? Fixed(m.fetch_seconds, "%.1fs") : "-",
                    m.peak_memory_bytes ? HumanBytes(*m.peak_memory_bytes) : "-", Result(m)});
  }
  return RenderTable(rows);
}

std::string FormatRecommendation(const AdviceContext& c, const AdviceRun& run,
                                 const Recommendation& rec, const std::vector<std::string>& notes) {
  std::string out = "\nRecommendation for " + c.job_name + " (" + std::to_string(c.ranks) +
                    (c.ranks == 1 ? " rank" : " ranks") + " on " + c.device + ", " +
                    std::to_string(c.cpus) + " cores here):\n";
  std::vector<std::vector<std::string>> rows;
  for (const RecommendationLine& l : rec.lines) rows.push_back({"  " + l.field, l.value, l.why});
  out += RenderTable(rows);
  if (run.interrupted) out += "\nInterrupted: the trials above are all that ran.\n";
  for (const std::string& n : c.notices) out += "\nnote: " + n + "\n";
  out += "\n";
  for (const std::string& n : notes) out += n + "\n";
  return out;
}

nlohmann::ordered_json AdviceJson(const AdviceContext& c, const AdviceRun& run,
                                  const Recommendation& rec,
                                  const std::vector<std::string>& notes) {
  nlohmann::ordered_json j;
  j["job"] = c.job_name;
  j["ranks"] = c.ranks;
  j["device"] = c.device;
  j["cpus"] = c.cpus;
  j["unit"] = run.unit;
  j["trials"] = nlohmann::ordered_json::array();
  for (const TrialRecord& t : run.trials) {
    nlohmann::ordered_json r;
    r["index"] = t.index;
    r["axis"] = t.axis;
    r["threadsPerRank"] = t.setting.threads_per_rank;
    if (t.setting.loader_threads) r["loaderThreads"] = *t.setting.loader_threads;
    if (!t.setting.data_path.empty()) r["data"] = t.setting.data_path;
    if (t.setting.memory_limit_bytes) r["memoryLimitBytes"] = *t.setting.memory_limit_bytes;
    const TrialMeasurement& m = t.measurement;
    r["ok"] = m.ok;
    if (m.ok) {
      r["throughput"] = m.throughput;
      r["noise"] = m.noise;
    }
    r["startupSeconds"] = m.startup_seconds;
    if (m.fetch_seconds > 0) r["fetchSeconds"] = m.fetch_seconds;
    r["wallSeconds"] = m.wall_seconds;
    if (m.peak_memory_bytes) r["peakMemoryBytes"] = *m.peak_memory_bytes;
    if (m.out_of_memory) r["outOfMemory"] = true;
    if (!m.ok) r["error"] = m.error;
    j["trials"].push_back(r);
  }
  j["axes"] = nlohmann::ordered_json::array();
  for (const AxisResult& a : run.axes) {
    nlohmann::ordered_json r;
    r["axis"] = a.axis;
    r["choice"] = a.choice;
    if (a.saturation) {
      r["shape"] = ShapeName(a.saturation->shape);
      r["band"] = a.saturation->band;
    }
    r["explanation"] = a.explanation;
    j["axes"].push_back(r);
  }
  nlohmann::ordered_json r;
  r["threadsPerRank"] = rec.threads_per_rank;
  r["cpuPerGpu"] = rec.cpu_per_gpu;
  if (rec.memory_per_gpu) r["memoryPerGpu"] = *rec.memory_per_gpu;
  if (rec.loader_threads) r["loaderThreads"] = *rec.loader_threads;
  if (rec.cache) r["cache"] = *rec.cache;
  j["recommendation"] = r;
  j["interrupted"] = run.interrupted;
  j["notes"] = c.notices;
  for (const std::string& n : notes) j["notes"].push_back(n);
  return j;
}

}  // namespace dljob::advise
