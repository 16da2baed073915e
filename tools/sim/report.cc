#include "tools/sim/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dljob::scheduler::sim {
namespace {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Pad(const std::string& s, size_t width, bool left = false) {
  if (s.size() >= width) return s;
  return left ? s + std::string(width - s.size(), ' ') : std::string(width - s.size(), ' ') + s;
}

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A readable tick step for a span: 1, 2 or 5 times a power of ten, about `ticks` per span.
double TickStep(double span, int ticks) {
  if (span <= 0) return 1;
  const double raw = span / ticks;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * mag) return m * mag;
  }
  return 10 * mag;
}

std::string Num(double v) {
  if (std::fabs(v - std::round(v)) < 1e-9) return Fixed(v, 0);
  return Fixed(v, v < 10 ? 1 : 0);
}

}  // namespace

std::string HumanSeconds(double s) {
  if (s < 120) return Fixed(s, 0) + "s";
  if (s < 2 * 3600) return Fixed(s / 60, 1) + "m";
  return Fixed(s / 3600, 2) + "h";
}

std::string FormatTable(const std::vector<Summary>& summaries) {
  std::vector<std::string> header = {
      "policy",   "jobs",      "done",         "avg JCT", "p95 JCT", "avg wait", "p95 wait",
      "makespan", "GPU alloc", "alloc queued", "frag",    "preempt", "wall"};
  const bool estimated =
      std::any_of(summaries.begin(), summaries.end(), [](const Summary& s) { return s.estimated; });
  // The resize column only where elastic jobs were resized, so a rigid replay reads as before.
  const bool resized =
      std::any_of(summaries.begin(), summaries.end(), [](const Summary& s) { return s.resizes; });
  if (resized) header.insert(header.end() - 1, "resize");
  // Of the done jobs, those ended by their time limit rather than their work: only where some
  // were, since their JCT counts the kill, not a finish.
  const bool killed = std::any_of(summaries.begin(), summaries.end(),
                                  [](const Summary& s) { return s.deadline_exceeded; });
  if (killed) header.insert(header.begin() + 3, "deadline");
  if (estimated) {
    for (const char* c : {"est err p50", "est err p90", "est in 25%", "est unknown"}) {
      header.push_back(c);
    }
  }
  std::vector<std::vector<std::string>> rows = {header};
  for (const Summary& s : summaries) {
    rows.push_back(
        {s.policy, std::to_string(s.jobs), std::to_string(s.finished), HumanSeconds(s.avg_jct),
         HumanSeconds(s.p95_jct), HumanSeconds(s.avg_wait), HumanSeconds(s.p95_wait),
         HumanSeconds(double(s.makespan)), Fixed(100 * s.gpu_allocation, 1) + "%",
         Fixed(100 * s.gpu_allocation_queued, 1) + "%", Fixed(100 * s.fragmentation, 1) + "%",
         std::to_string(s.preemptions), Fixed(s.wall_seconds, 1) + "s"});
    if (resized) rows.back().insert(rows.back().end() - 1, std::to_string(s.resizes));
    if (killed) rows.back().insert(rows.back().begin() + 3, std::to_string(s.deadline_exceeded));
    if (!estimated) continue;
    const EstimateAccuracy& e = s.estimates;
    const int64_t made = e.count + e.unknown;
    if (!s.estimated) {
      rows.back().insert(rows.back().end(), {"-", "-", "-", "-"});
    } else {
      rows.back().insert(rows.back().end(),
                         {HumanSeconds(e.median_error), HumanSeconds(e.p90_error),
                          Fixed(100 * e.within_25, 1) + "%",
                          Fixed(made ? 100.0 * double(e.unknown) / double(made) : 0.0, 1) + "%"});
    }
  }
  std::vector<size_t> width(header.size(), 0);
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      line += (c ? "  " : "") + Pad(r[c], width[c], c == 0);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

nlohmann::ordered_json SummaryJson(const std::vector<Summary>& summaries) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const Summary& s : summaries) {
    out[s.policy] = {{"avg_jct", s.avg_jct},
                     {"p95_jct", s.p95_jct},
                     {"avg_wait", s.avg_wait},
                     {"p95_wait", s.p95_wait},
                     {"makespan", s.makespan},
                     {"gpu_allocation", s.gpu_allocation},
                     {"preemptions", s.preemptions},
                     {"gpu_allocation_queued", s.gpu_allocation_queued},
                     {"fragmentation", s.fragmentation},
                     {"jobs", s.jobs},
                     {"finished", s.finished},
                     {"deadline_exceeded", s.deadline_exceeded},
                     {"wall_seconds", s.wall_seconds}};
    if (s.resizes) out[s.policy]["resizes"] = s.resizes;
    if (!s.estimated) continue;
    auto figures = [](const EstimateAccuracy& a) {
      return nlohmann::ordered_json{
          {"count", a.count},         {"unknown", a.unknown},     {"median_error", a.median_error},
          {"p90_error", a.p90_error}, {"within_25", a.within_25}, {"median_bias", a.median_bias}};
    };
    out[s.policy]["estimates"] = {{"all", figures(s.estimates)},
                                  {"at_submission", figures(s.at_submission)},
                                  {"jobs", s.estimated_jobs},
                                  {"runs", s.estimate_runs},
                                  {"wall_seconds", s.estimate_wall_seconds}};
  }
  return out;
}

std::string EstimatesOutCsv(const Trace& trace, const std::vector<SimResult>& results) {
  std::string out = "policy,name,submit_time,made_at,estimate,basis,start_time,error\n";
  auto opt = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : ""; };
  for (const SimResult& r : results) {
    for (size_t i = 0; i < trace.jobs.size() && i < r.estimates.size(); ++i) {
      const std::optional<int64_t> start = r.jobs[i].first_start;
      for (const EstimateRecord& e : r.estimates[i]) {
        std::optional<int64_t> error;
        if (e.time && start) error = *e.time - *start;
        out += r.policy + "," + trace.jobs[i].name + "," +
               std::to_string(trace.jobs[i].submit_time) + "," + std::to_string(e.made_at) + "," +
               opt(e.time) + "," + std::string(EstimateBasisName(e.basis)) + "," + opt(start) +
               "," + opt(error) + "\n";
      }
    }
  }
  return out;
}

std::string JobsOutCsv(const Trace& trace, const std::vector<SimResult>& results) {
  std::string out =
      "policy,name,submit_time,start_time,finish_time,jct,wait,num_gpu,queue,priority,"
      "preemptions,deadline_exceeded\n";
  auto opt = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : ""; };
  for (const SimResult& r : results) {
    for (size_t i = 0; i < trace.jobs.size() && i < r.jobs.size(); ++i) {
      const TraceJob& j = trace.jobs[i];
      const JobOutcome& o = r.jobs[i];
      std::optional<int64_t> jct, wait;
      if (o.finish) {
        jct = *o.finish - j.submit_time;
        wait = *jct - o.held;
      }
      out += r.policy + "," + j.name + "," + std::to_string(j.submit_time) + "," +
             opt(o.first_start) + "," + opt(o.finish) + "," + opt(jct) + "," + opt(wait) + "," +
             std::to_string(j.num_gpu) + "," + j.queue + "," + std::to_string(j.priority) + "," +
             std::to_string(o.preemptions) + "," + (o.deadline_exceeded ? "true" : "false") + "\n";
    }
  }
  return out;
}

std::string EventsOutCsv(const Trace& trace, const std::vector<SimResult>& results) {
  std::string out = "policy,time,name,event,gpus,for_job\n";
  for (const SimResult& r : results) {
    for (const SimEvent& e : r.events) {
      out += r.policy + "," + std::to_string(e.time) + "," + trace.jobs[e.job].name + "," +
             std::string(SimEventName(e.kind)) + "," + std::to_string(e.gpus) + "," + e.for_job +
             "\n";
    }
  }
  return out;
}

std::string AllocationSvg(const std::vector<SimResult>& results, size_t points) {
  const double W = 960, H = 480, left = 70, right = 160, top = 40, bottom = 60;
  const double pw = W - left - right, ph = H - top - bottom;
  int64_t end = 1;
  for (const SimResult& r : results) {
    if (!r.allocation.empty()) end = std::max(end, r.allocation.back().time);
  }
  const double hours = double(end) / 3600.0;
  auto x = [&](double h) { return left + pw * h / hours; };
  auto y = [&](double pct) { return top + ph * (1 - pct / 100.0); };
  static const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                  "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(W) + "\" height=\"" +
                  Num(H) + "\" viewBox=\"0 0 " + Num(W) + " " + Num(H) +
                  "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + Num(left + pw / 2) +
       "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">GPU allocation over time</text>\n";
  // Axes, grid and ticks.
  const double xstep = TickStep(hours, 8);
  for (double h = 0; h <= hours + 1e-9; h += xstep) {
    s += "<line x1=\"" + Fixed(x(h), 1) + "\" y1=\"" + Num(top) + "\" x2=\"" + Fixed(x(h), 1) +
         "\" y2=\"" + Num(top + ph) + "\" stroke=\"#eee\"/>\n";
    s += "<text x=\"" + Fixed(x(h), 1) + "\" y=\"" + Num(top + ph + 18) +
         "\" text-anchor=\"middle\">" + Num(h) + "</text>\n";
  }
  for (int pct = 0; pct <= 100; pct += 20) {
    s += "<line x1=\"" + Num(left) + "\" y1=\"" + Fixed(y(pct), 1) + "\" x2=\"" + Num(left + pw) +
         "\" y2=\"" + Fixed(y(pct), 1) + "\" stroke=\"#eee\"/>\n";
    s += "<text x=\"" + Num(left - 8) + "\" y=\"" + Fixed(y(pct) + 4, 1) +
         "\" text-anchor=\"end\">" + std::to_string(pct) + "%</text>\n";
  }
  s += "<line x1=\"" + Num(left) + "\" y1=\"" + Num(top + ph) + "\" x2=\"" + Num(left + pw) +
       "\" y2=\"" + Num(top + ph) + "\" stroke=\"black\"/>\n";
  s += "<line x1=\"" + Num(left) + "\" y1=\"" + Num(top) + "\" x2=\"" + Num(left) + "\" y2=\"" +
       Num(top + ph) + "\" stroke=\"black\"/>\n";
  s += "<text x=\"" + Num(left + pw / 2) + "\" y=\"" + Num(H - 15) +
       "\" text-anchor=\"middle\">simulated time (hours)</text>\n";
  s += "<text transform=\"translate(18," + Num(top + ph / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">GPUs allocated (% of all)</text>\n";
  // One line per policy: the step function averaged over equal time buckets.
  const size_t buckets = std::max<size_t>(1, points);
  const double width = double(end) / double(buckets);
  for (size_t p = 0; p < results.size(); ++p) {
    const SimResult& r = results[p];
    const char* color = kColors[p % 8];
    std::string pts;
    size_t k = 0;
    for (size_t b = 0; b < buckets; ++b) {
      const double lo = b * width, hi = lo + width;
      double area = 0;
      while (k + 1 < r.allocation.size() && double(r.allocation[k + 1].time) <= lo) ++k;
      for (size_t j = k; j < r.allocation.size() && double(r.allocation[j].time) < hi; ++j) {
        const double a = std::max(lo, double(r.allocation[j].time));
        const double e =
            j + 1 < r.allocation.size() ? std::min(hi, double(r.allocation[j + 1].time)) : hi;
        if (e > a) area += (e - a) * double(r.allocation[j].gpus);
      }
      const double pct = r.total_gpus ? 100.0 * area / (width * double(r.total_gpus)) : 0;
      pts += Fixed(x((lo + width / 2) / 3600.0), 1) + "," + Fixed(y(pct), 1) + " ";
    }
    s += "<polyline fill=\"none\" stroke=\"" + std::string(color) +
         "\" stroke-width=\"1.5\" points=\"" + pts + "\"/>\n";
    const double ly = top + 10 + 20 * double(p);
    s += "<line x1=\"" + Num(left + pw + 15) + "\" y1=\"" + Num(ly) + "\" x2=\"" +
         Num(left + pw + 40) + "\" y2=\"" + Num(ly) + "\" stroke=\"" + color +
         "\" stroke-width=\"3\"/>\n";
    s += "<text x=\"" + Num(left + pw + 46) + "\" y=\"" + Num(ly + 4) + "\">" +
         XmlEscape(r.policy) + "</text>\n";
  }
  return s + "</svg>\n";
}

}  // namespace dljob::scheduler::sim
