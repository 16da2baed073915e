// See prometheus.h.
#include "operator/metrics/prometheus.h"

#include <charconv>
#include <cmath>
#include <set>

namespace dljob::metrics {
namespace {

std::string EscapeHelp(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

const char* TypeName(MetricType type) { return type == MetricType::kCounter ? "counter" : "gauge"; }

}  // namespace

bool ValidMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool ValidLabelName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

std::string ReservedLabelReason(std::string_view name) {
  if (name == "job" || name == "instance") {
    return "is reserved by Prometheus for the scrape target (a scraped \"" + std::string(name) +
           "\" label arrives renamed \"exported_" + std::string(name) +
           "\", and queries on it find nothing); name the label after what it identifies, "
           "e.g. \"dljob\" for a DLJob";
  }
  if (name.rfind("__", 0) == 0) {
    return "starts with \"__\", which Prometheus reserves for its own labels (dropped after "
           "relabelling)";
  }
  return "";
}

Status CheckFamily(const Family& f) {
  auto refuse = [&f](const std::string& why) {
    return Status::InvalidArgument("metric " + f.name + ": " + why);
  };
  if (!ValidMetricName(f.name)) {
    return Status::InvalidArgument("metric \"" + f.name +
                                   "\": not a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)");
  }
  const bool total = f.name.size() > 6 && f.name.compare(f.name.size() - 6, 6, "_total") == 0;
  if (f.type == MetricType::kCounter && !total) {
    return refuse("a counter's name must end in _total");
  }
  if (f.type == MetricType::kGauge && total) {
    return refuse("a gauge's name must not end in _total (that suffix says counter)");
  }
  for (const Sample& s : f.samples) {
    std::set<std::string_view> seen;
    for (const auto& [label, value] : s.labels) {
      if (!ValidLabelName(label)) {
        return refuse("label \"" + label + "\" is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)");
      }
      if (std::string why = ReservedLabelReason(label); !why.empty()) {
        return refuse("label \"" + label + "\" " + why);
      }
      if (!seen.insert(label).second) return refuse("label \"" + label + "\" given twice");
    }
  }
  return Status::Ok();
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, end) : "NaN";
}

Result<std::string> RenderText(const std::vector<Family>& families) {
  for (const Family& f : families) {
    if (Status s = CheckFamily(f); !s.ok()) return s;
  }
  std::string out;
  for (const Family& f : families) {
    out += "# HELP " + f.name + " " + EscapeHelp(f.help) + "\n";
    out += "# TYPE " + f.name + " " + TypeName(f.type) + "\n";
    for (const Sample& s : f.samples) {
      out += f.name;
      if (!s.labels.empty()) {
        out += '{';
        for (size_t i = 0; i < s.labels.size(); ++i) {
          if (i > 0) out += ',';
          out += s.labels[i].first + "=\"" + EscapeLabelValue(s.labels[i].second) + "\"";
        }
        out += '}';
      }
      out += ' ' + FormatValue(s.value) + '\n';
    }
  }
  return out;
}

}  // namespace dljob::metrics
