// See phase_breakdown.h.
#include "bench/phase_breakdown.h"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace dljob::bench {

namespace {

using kube::Span;

double Seconds(WallTime::duration d) { return std::chrono::duration<double>(d).count(); }

bool Covers(const Span& s, WallTime t) { return s.start <= t && t < s.end; }

std::string Printf(const char* format, auto... args) {
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, format, args...);
  return buffer;
}

}  // namespace

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t i = static_cast<size_t>(q * static_cast<double>(sorted.size()));
  return sorted[std::min(sorted.size() - 1, i)];
}

const char* PhaseName(Phase p) {
  switch (p) {
    case Phase::kToOperator:
      return "to the operator (API server write, watch)";
    case Phase::kQueue:
      return "work queue wait";
    case Phase::kReconcile:
      return "reconcile passes, operator's own work";
    case Phase::kApi:
      return "reconcile passes, API calls";
    case Phase::kCluster:
      return "waiting for the cluster (kubelets, informers)";
    case Phase::kToClient:
      return "Running status to the client (watch)";
  }
  return "?";
}

double JobPhases::total() const {
  double t = 0;
  for (double s : seconds) t += s;
  return t;
}

JobPhases PhasesOf(const JobWindow& w, const std::vector<Span>& spans) {
  JobPhases out;
  if (w.running <= w.submitted) return out;
  std::optional<WallTime> observed;
  std::optional<WallTime> last_pass_end;
  std::vector<WallTime> cuts = {w.submitted, w.running};
  for (const Span& s : spans) {
    if (s.name == "observe" && (!observed || s.start < *observed)) observed = s.start;
    if (s.name == "reconcile" && s.start >= w.submitted && s.start < w.running) {
      ++out.passes;
      if (!last_pass_end || s.end > *last_pass_end) last_pass_end = s.end;
    }
    if (s.name == "api" && s.start >= w.submitted && s.start < w.running) ++out.api_calls;
    if (s.end == s.start) continue;  // an instant covers nothing
    for (WallTime t : {s.start, s.end}) {
      if (t > w.submitted && t < w.running) cuts.push_back(t);
    }
  }
  for (const std::optional<WallTime>& t : {observed, last_pass_end}) {
    if (t && *t > w.submitted && *t < w.running) cuts.push_back(*t);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    const WallTime a = cuts[i];
    const WallTime b = cuts[i + 1];
    auto any = [&](const char* name) {
      return std::any_of(spans.begin(), spans.end(),
                         [&](const Span& s) { return s.name == name && Covers(s, a); });
    };
    Phase phase = Phase::kCluster;
    if (!observed || a < *observed) {
      phase = Phase::kToOperator;
    } else if (last_pass_end && a >= *last_pass_end) {
      phase = Phase::kToClient;
    } else if (any("api")) {
      phase = Phase::kApi;
    } else if (any("reconcile")) {
      phase = Phase::kReconcile;
    } else if (any("queue")) {
      phase = Phase::kQueue;
    }
    out.seconds[static_cast<int>(phase)] += Seconds(b - a);
  }
  return out;
}

Breakdown Summarize(const std::vector<Span>& spans, const std::vector<JobWindow>& windows) {
  Breakdown b;
  std::map<std::string, std::vector<Span>> by_job;
  std::map<std::string, std::vector<double>> api_ms;
  for (const Span& s : spans) {
    if (!s.key.empty()) by_job[s.key].push_back(s);
    if (s.name == "api") api_ms[s.detail].push_back(Seconds(s.end - s.start) * 1e3);
  }
  std::vector<double> per_phase[kPhaseCount];
  for (const JobWindow& w : windows) {
    auto it = by_job.find(w.key);
    if (it == by_job.end()) continue;
    JobPhases p = PhasesOf(w, it->second);
    ++b.jobs;
    for (int i = 0; i < kPhaseCount; ++i) per_phase[i].push_back(p.seconds[i]);
    b.mean_total += p.total();
    b.mean_passes += p.passes;
    b.mean_api_calls += p.api_calls;
  }
  if (b.jobs > 0) {
    b.mean_total /= b.jobs;
    b.mean_passes /= b.jobs;
    b.mean_api_calls /= b.jobs;
    for (int i = 0; i < kPhaseCount; ++i) {
      std::vector<double>& v = per_phase[i];
      double sum = 0;
      for (double x : v) sum += x;
      b.mean[i] = sum / b.jobs;
      std::sort(v.begin(), v.end());
      b.p50[i] = Quantile(v, 0.50);
      b.p99[i] = Quantile(v, 0.99);
    }
  }
  for (auto& [detail, ms] : api_ms) {
    std::sort(ms.begin(), ms.end());
    ApiCallStats& stats = b.api[detail];
    stats.count = static_cast<int>(ms.size());
    for (double x : ms) stats.total_seconds += x / 1e3;
    stats.p50_ms = Quantile(ms, 0.50);
    stats.p99_ms = Quantile(ms, 0.99);
  }
  return b;
}

std::string FormatBreakdown(const Breakdown& b, size_t api_rows) {
  std::string out = Printf("submit -> Running by phase, %d jobs (s per job):\n", b.jobs);
  out += Printf("  %-48s %8s %7s %8s %8s\n", "phase", "mean", "share", "p50", "p99");
  for (int i = 0; i < kPhaseCount; ++i) {
    out +=
        Printf("  %-48s %8.3f %6.1f%% %8.3f %8.3f\n", PhaseName(static_cast<Phase>(i)), b.mean[i],
               b.mean_total > 0 ? 100 * b.mean[i] / b.mean_total : 0.0, b.p50[i], b.p99[i]);
  }
  out += Printf("  %-48s %8.3f\n", "total", b.mean_total);
  out += Printf("  reconcile passes per job %.2f, API calls per job %.2f\n", b.mean_passes,
                b.mean_api_calls);
  std::vector<std::pair<std::string, ApiCallStats>> rows(b.api.begin(), b.api.end());
  std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    return x.second.total_seconds > y.second.total_seconds;
  });
  out += Printf("API calls by kind (every call of the run; most time first):\n");
  out += Printf("  %-32s %8s %10s %9s %9s\n", "call", "count", "total s", "p50 ms", "p99 ms");
  for (size_t i = 0; i < rows.size() && i < api_rows; ++i) {
    const auto& [detail, s] = rows[i];
    out += Printf("  %-32s %8d %10.2f %9.2f %9.2f\n", detail.c_str(), s.count, s.total_seconds,
                  s.p50_ms, s.p99_ms);
  }
  return out;
}

std::string FormatTimeline(const std::vector<Span>& spans, const std::string& key,
                           WallTime origin) {
  std::vector<Span> mine;
  for (const Span& s : spans) {
    if (s.key == key) mine.push_back(s);
  }
  std::stable_sort(mine.begin(), mine.end(),
                   [](const Span& a, const Span& b) { return a.start < b.start; });
  std::string out;
  for (const Span& s : mine) {
    std::string line =
        Printf("  %+10.1f ms  %-9s", Seconds(s.start - origin) * 1e3, s.name.c_str());
    if (s.end > s.start)
      line += Printf(" %8.2f ms", Seconds(s.end - s.start) * 1e3);
    else
      line += Printf(" %11s", "");
    out += line + "  " + s.detail + "\n";
  }
  return out;
}

}  // namespace dljob::bench
