#include "cli/advise/svg.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include "base/human_format.h"

namespace dljob::advise {
namespace {

constexpr double kWidth = 720, kPanelHeight = 230, kLeft = 80, kRight = 30, kTop = 50,
                 kPanelTop = 30, kPanelBottom = 45;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else {
      out += c;
    }
  }
  return out;
}

// The setting a trial varied on its axis, for ordering and labels.
std::pair<double, std::string> SettingOf(const TrialRecord& t, const std::string& axis,
                                         std::optional<int64_t> reference_peak) {
  if (axis == kAxisThreads) {
    return {t.setting.threads_per_rank, std::to_string(t.setting.threads_per_rank)};
  }
  if (axis == kAxisLoader) {
    const int v = t.setting.loader_threads.value_or(0);
    return {v, std::to_string(v)};
  }
  if (axis == kAxisMemory) {
    if (!t.setting.memory_limit_bytes) {  // the reference: at the peak the axis used
      const int64_t peak = reference_peak.value_or(t.measurement.peak_memory_bytes.value_or(0));
      return {static_cast<double>(peak), "uncapped (" + HumanBytes(peak) + ")"};
    }
    return {static_cast<double>(*t.setting.memory_limit_bytes),
            HumanBytes(*t.setting.memory_limit_bytes)};
  }
  const std::string& d = t.setting.data_path;
  return {d == kDataLocal ? 0 : d == kDataStore ? 1 : 2, d};
}

void Panel(std::ostringstream& s, const AxisResult& axis, const AdviceRun& run, double top) {
  // One column per distinct setting; several repeats stack in it.
  std::map<double, std::string> labels;
  double max_value = 1;
  for (int i : axis.trials) {
    const TrialRecord& t = run.trials[i - 1];
    auto [key, label] = SettingOf(t, axis.axis, run.reference_peak_bytes);
    labels[key] = label;
    if (t.measurement.ok) max_value = std::max(max_value, t.measurement.throughput);
  }
  std::map<double, int> column;
  for (const auto& [key, label] : labels) column.emplace(key, static_cast<int>(column.size()));
  const double plot_top = top + kPanelTop, plot_bottom = top + kPanelHeight - kPanelBottom;
  const double n = static_cast<double>(std::max<size_t>(1, labels.size()));
  auto x = [&](int c) { return kLeft + (kWidth - kLeft - kRight) * (c + 0.5) / n; };
  auto y = [&](double v) { return plot_bottom - (plot_bottom - plot_top) * v / (max_value * 1.1); };
  s << "<text x=\"" << kLeft << "\" y=\"" << top + 18 << "\" font-size=\"13\">" << axis.axis << ": "
    << Escape(axis.explanation) << "</text>\n";
  s << "<line x1=\"" << kLeft << "\" y1=\"" << plot_bottom << "\" x2=\"" << kWidth - kRight
    << "\" y2=\"" << plot_bottom << "\" stroke=\"black\"/>\n"
    << "<line x1=\"" << kLeft << "\" y1=\"" << plot_bottom << "\" x2=\"" << kLeft << "\" y2=\""
    << plot_top << "\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 2; ++i) {
    const double v = max_value * 1.1 * i / 2;
    s << "<text x=\"" << kLeft - 6 << "\" y=\"" << Num(y(v) + 4) << "\" text-anchor=\"end\">"
      << static_cast<int64_t>(v + 0.5) << "</text>\n";
  }
  s << "<text x=\"14\" y=\"" << Num((plot_top + plot_bottom) / 2) << "\" transform=\"rotate(-90 14 "
    << Num((plot_top + plot_bottom) / 2) << ")\" text-anchor=\"middle\">" << run.unit
    << "</text>\n";
  for (const auto& [key, label] : labels) {
    s << "<text x=\"" << Num(x(column[key])) << "\" y=\"" << plot_bottom + 16
      << "\" text-anchor=\"middle\">" << Escape(label) << "</text>\n";
  }
  if (axis.saturation) {
    const double hi = axis.saturation->best_value;
    const double lo = hi * (1 - axis.saturation->band);
    s << "<rect x=\"" << kLeft << "\" y=\"" << Num(y(hi)) << "\" width=\""
      << kWidth - kLeft - kRight << "\" height=\"" << Num(y(lo) - y(hi))
      << "\" fill=\"#2ca02c\" opacity=\"0.15\"/>\n";
  }
  // Each trial a small dot; each setting's median a larger one, joined by a line (bars on the data
  // axis); the chosen setting's median ringed.
  const bool bars = axis.axis == kAxisData;
  std::map<int, std::vector<double>> by_column;
  std::map<int, std::string> column_label;
  for (int i : axis.trials) {
    const TrialRecord& t = run.trials[i - 1];
    const auto [key, label] = SettingOf(t, axis.axis, run.reference_peak_bytes);
    const int c = column[key];
    column_label[c] = label;
    const double cx = x(c);
    if (!t.measurement.ok) {
      s << "<text x=\"" << Num(cx) << "\" y=\"" << plot_bottom - 4
        << "\" text-anchor=\"middle\" fill=\"#d62728\" font-size=\"16\">×</text>\n";
      continue;
    }
    by_column[c].push_back(t.measurement.throughput);
    s << "<circle cx=\"" << Num(cx + (bars ? 32 : 0)) << "\" cy=\""
      << Num(y(t.measurement.throughput)) << "\" r=\"2.5\" fill=\"#7f7f7f\"/>\n";
  }
  std::string polyline;
  for (auto& [c, values] : by_column) {
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    const double median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    const double cx = x(c), cy = y(median);
    if (bars) {
      s << "<rect x=\"" << Num(cx - 25) << "\" y=\"" << Num(cy) << "\" width=\"50\" height=\""
        << Num(plot_bottom - cy) << "\" fill=\"#1f77b4\"/>\n";
    } else {
      polyline += Num(cx) + "," + Num(cy) + " ";
      s << "<circle cx=\"" << Num(cx) << "\" cy=\"" << Num(cy)
        << "\" r=\"4.5\" fill=\"#1f77b4\"/>\n";
    }
    const std::string& label = column_label[c];
    if (!axis.choice.empty() &&
        (label == axis.choice || label.find("(" + axis.choice + ")") != std::string::npos)) {
      s << "<circle cx=\"" << Num(cx) << "\" cy=\"" << Num(cy)
        << "\" r=\"9\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\"/>\n";
    }
  }
  if (!polyline.empty()) {
    s << "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"" << polyline
      << "\"/>\n";
  }
}

}  // namespace

std::string AdviceSvg(const std::string& job_name, const AdviceRun& run) {
  std::vector<const AxisResult*> axes;
  for (const AxisResult& a : run.axes) {
    if (!a.trials.empty()) axes.push_back(&a);
  }
  const double height = kTop + kPanelHeight * static_cast<double>(std::max<size_t>(1, axes.size()));
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << kLeft << "\" y=\"28\" font-size=\"15\">dljob advise: " << Escape(job_name)
    << " (" << run.unit << "; ringed: chosen, shaded: the band)</text>\n";
  double top = kTop;
  for (const AxisResult* a : axes) {
    Panel(s, *a, run, top);
    top += kPanelHeight;
  }
  s << "</svg>\n";
  return s.str();
}

}  // namespace dljob::advise
