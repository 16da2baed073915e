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

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kGauge:
      break;
  }
  return "gauge";
}

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() > suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

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
  const bool total = EndsWith(f.name, "_total");
  if (f.type == MetricType::kCounter && !total) {
    return refuse("a counter's name must end in _total");
  }
  if (f.type == MetricType::kGauge && total) {
    return refuse("a gauge's name must not end in _total (that suffix says counter)");
  }
  const bool histogram = f.type == MetricType::kHistogram;
  if (histogram) {
    for (const char* suffix : {"_total", "_bucket", "_sum", "_count"}) {
      if (EndsWith(f.name, suffix)) {
        return refuse(std::string("a histogram's name must not end in ") + suffix +
                      " (its series add _bucket, _sum and _count)");
      }
    }
  }
  for (const Sample& s : f.samples) {
    const bool bucket = histogram && s.suffix == "_bucket";
    if (histogram ? !bucket && s.suffix != "_sum" && s.suffix != "_count" : !s.suffix.empty()) {
      return refuse("a sample with suffix \"" + s.suffix + "\"" +
                    (histogram ? " (a histogram's are _bucket, _sum and _count)"
                               : " (only a histogram's samples have one)"));
    }
    bool has_le = false;
    for (const auto& label : s.labels) has_le = has_le || label.first == "le";
    if (has_le != bucket) {
      return refuse(bucket ? "a _bucket sample needs an \"le\" label"
                           : "label \"le\" is reserved for a histogram's _bucket series");
    }
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
      out += f.name + s.suffix;
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

Histogram::Histogram(std::string name, std::string help, std::vector<double> upper_bounds,
                     std::vector<std::string> label_names)
    : name_(std::move(name)),
      help_(std::move(help)),
      bounds_(std::move(upper_bounds)),
      label_names_(std::move(label_names)) {}

void Histogram::Observe(const std::vector<std::string>& label_values, double value) {
  MutexLock lock(mu_);
  Counts& c = series_[label_values];
  c.buckets.resize(bounds_.size());
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (value <= bounds_[i]) {
      ++c.buckets[i];
      break;
    }
  }
  c.sum += value;
  ++c.count;
}

Family Histogram::Collect() const {
  Family f{name_, help_, MetricType::kHistogram, {}};
  MutexLock lock(mu_);
  for (const auto& [values, c] : series_) {
    Labels labels;
    for (size_t i = 0; i < label_names_.size(); ++i)
      labels.emplace_back(label_names_[i], values[i]);
    uint64_t cumulative = 0;
    for (size_t i = 0; i < bounds_.size(); ++i) {
      cumulative += c.buckets[i];
      Labels with_le = labels;
      with_le.emplace_back("le", FormatValue(bounds_[i]));
      f.samples.push_back({with_le, static_cast<double>(cumulative), "_bucket"});
    }
    Labels with_inf = labels;
    with_inf.emplace_back("le", "+Inf");
    f.samples.push_back({with_inf, static_cast<double>(c.count), "_bucket"});
    f.samples.push_back({labels, c.sum, "_sum"});
    f.samples.push_back({labels, static_cast<double>(c.count), "_count"});
  }
  return f;
}

}  // namespace dljob::metrics
