#include "cli/advise/advisor.h"

#include <algorithm>
#include <cmath>

#include "base/human_format.h"

namespace dljob::advise {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

class Driver {
 public:
  Driver(const DLJob& job, const AdvisePlan& plan, const AdviseOptions& options,
         TrialRunner& runner, JobObserver& observer, const AdviceProgress& progress)
      : job_(job),
        plan_(plan),
        options_(options),
        runner_(runner),
        observer_(observer),
        progress_(progress) {
    planned_ = options.repeats *
               static_cast<int>(plan.threads.size() + plan.loader_threads.size() +
                                (plan.data_paths.size() > 1 ? plan.data_paths.size() : 0) +
                                plan.memory_fractions.size());
  }

  AdviceRun Run() {
    TrialSetting current;
    current.threads_per_rank = plan_.threads.front();
    if (!plan_.data_paths.empty()) current.data_path = plan_.data_paths.front();

    NumericAxis(kAxisThreads, current, plan_.threads,
                [](TrialSetting& s, double v) { s.threads_per_rank = static_cast<int>(v); });
    if (!plan_.loader_threads.empty()) {
      NumericAxis(kAxisLoader, current, plan_.loader_threads,
                  [](TrialSetting& s, double v) { s.loader_threads = static_cast<int>(v); });
    }
    if (plan_.data_paths.size() > 1) DataAxis(current);
    MemoryAxis(current);
    run_.chosen = current;
    return std::move(run_);
  }

 private:
  // Runs `setting` options_.repeats times; the point is the median of the ok runs.
  AxisPoint RunSetting(const std::string& axis, const TrialSetting& setting, AxisResult& result) {
    std::vector<double> values;
    double noise = 0;
    for (int r = 0; r < options_.repeats && !Stopped(); ++r) {
      TrialRecord t{static_cast<int>(run_.trials.size()) + 1, axis, setting, {}};
      progress_.started(t, planned_);
      DLJob trial = TrialJob(job_, plan_, options_, setting, t.index);
      t.measurement = runner_.Run(trial, setting.memory_limit_bytes, observer_);
      if (t.measurement.ok) {
        values.push_back(t.measurement.throughput);
        noise = std::max(noise, t.measurement.noise);
        run_.unit = t.measurement.unit;
      }
      run_.trials.push_back(t);
      result.trials.push_back(t.index);
      progress_.finished(run_.trials.back());
    }
    AxisPoint p;
    p.ok = !values.empty() && values.size() * 2 >= static_cast<size_t>(options_.repeats);
    if (!values.empty()) {
      p.value = Median(values);
      if (values.size() >= 2) {  // the spread of the repeats, as a standard error
        const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
        noise = std::max(noise, (*hi - *lo) / p.value / 2 / std::sqrt(double(values.size())));
      }
    }
    p.noise = noise;
    return p;
  }

  template <typename Values, typename Set>
  void NumericAxis(const char* axis, TrialSetting& current, const Values& values, Set set) {
    AxisResult result{axis, {}, std::nullopt, "", ""};
    std::vector<AxisPoint> points;
    for (auto v : values) {
      if (Stopped()) break;
      TrialSetting s = current;
      set(s, static_cast<double>(v));
      AxisPoint p = RunSetting(axis, s, result);
      p.setting = static_cast<double>(v);
      points.push_back(p);
    }
    result.saturation = FindSaturation(points, options_.tolerance);
    auto format = [](double v) { return std::to_string(static_cast<int>(v)); };
    if (result.saturation) {
      set(current, result.saturation->chosen);
      result.choice = format(result.saturation->chosen);
      result.explanation = ExplainSaturation(*result.saturation, format);
    } else {
      result.explanation = "no trial succeeded";
    }
    run_.axes.push_back(result);
  }

  void DataAxis(TrialSetting& current) {
    AxisResult result{kAxisData, {}, std::nullopt, "", ""};
    struct Option {
      std::string path;
      AxisPoint point;
      double startup = 0;
    };
    std::vector<Option> options;
    for (const std::string& path : plan_.data_paths) {
      if (Stopped()) break;
      TrialSetting s = current;
      s.data_path = path;
      AxisPoint p = RunSetting(kAxisData, s, result);
      std::vector<double> startups;
      for (int i : result.trials) {
        const TrialRecord& t = run_.trials[i - 1];
        if (t.setting == s && t.measurement.ok) startups.push_back(t.measurement.startup_seconds);
      }
      options.push_back({path, p, startups.empty() ? 0 : Median(startups)});
    }
    const Option* best = nullptr;
    double max_noise = 0;
    for (const Option& o : options) {
      if (!o.point.ok) continue;
      max_noise = std::max(max_noise, o.point.noise);
      if (best == nullptr || o.point.value > best->point.value) best = &o;
    }
    if (best == nullptr) {
      result.explanation = "no trial succeeded";
      run_.axes.push_back(result);
      return;
    }
    const double band = std::max(options_.tolerance, 2 * max_noise);
    // Ties: faster start (>= 1 s and 10%), then reading in place.
    const Option* chosen = best;
    for (const Option& o : options) {
      if (!o.point.ok || o.point.value < best->point.value * (1 - band) || &o == chosen) continue;
      const bool starts_faster =
          o.startup <= chosen->startup - 1.0 && o.startup <= chosen->startup * 0.9;
      const bool starts_slower =
          chosen->startup <= o.startup - 1.0 && chosen->startup <= o.startup * 0.9;
      if (starts_faster || (!starts_slower && o.path != kDataCache && chosen->path == kDataCache)) {
        chosen = &o;
      }
    }
    current.data_path = chosen->path;
    result.choice = chosen->path;
    char text[200];
    std::snprintf(text, sizeof text, "%s: %.1f %s, first step after %.1f s", chosen->path.c_str(),
                  chosen->point.value, run_.unit.c_str(), chosen->startup);
    result.explanation = text;
    for (const Option& o : options) {
      if (&o == chosen) continue;
      if (!o.point.ok) {
        result.explanation += "; " + o.path + " failed";
      } else {
        std::snprintf(text, sizeof text, "; %s: %.1f, after %.1f s", o.path.c_str(), o.point.value,
                      o.startup);
        result.explanation += text;
      }
    }
    run_.axes.push_back(result);
  }

  void MemoryAxis(TrialSetting& current) {
    std::string why_not;
    if (!runner_.CanLimitMemory(&why_not) || Stopped()) return;
    AxisResult result{kAxisMemory, {}, std::nullopt, "", ""};
    // The reference: the chosen setting uncapped, from an earlier axis if it ran there.
    const TrialRecord* reference = nullptr;
    for (const TrialRecord& t : run_.trials) {
      if (t.setting == current && t.measurement.ok && t.measurement.peak_memory_bytes) {
        reference = &t;
      }
    }
    std::vector<AxisPoint> points;
    if (reference == nullptr) {
      AxisPoint p = RunSetting(kAxisMemory, current, result);
      for (const TrialRecord& t : run_.trials) {
        if (t.setting == current && t.measurement.ok && t.measurement.peak_memory_bytes) {
          reference = &t;
        }
      }
      if (reference == nullptr) {
        result.explanation = "the uncapped trial measured no peak";
        run_.axes.push_back(result);
        return;
      }
      p.setting = static_cast<double>(*reference->measurement.peak_memory_bytes);
      points.push_back(p);
    } else {
      AxisPoint p{static_cast<double>(*reference->measurement.peak_memory_bytes),
                  reference->measurement.throughput, reference->measurement.noise, true};
      points.push_back(p);
      result.trials.push_back(reference->index);
    }
    const int64_t peak = *reference->measurement.peak_memory_bytes;
    run_.reference_peak_bytes = peak;
    for (double f : plan_.memory_fractions) {
      if (Stopped()) break;
      TrialSetting s = current;
      const int64_t cap =
          std::max<int64_t>(16 * kMiB, static_cast<int64_t>(peak * f) / kMiB * kMiB);
      s.memory_limit_bytes = cap;
      AxisPoint p = RunSetting(kAxisMemory, s, result);
      p.setting = static_cast<double>(cap);
      points.push_back(p);
      if (!p.ok) break;  // smaller caps would not be trusted (saturation.h)
    }
    result.saturation = FindSaturation(points, options_.tolerance);
    auto format = [](double v) { return HumanBytes(static_cast<uint64_t>(v)); };
    if (result.saturation) {
      run_.memory_cap_bytes = static_cast<int64_t>(result.saturation->chosen);
      result.choice = format(result.saturation->chosen);
      result.explanation = ExplainSaturation(*result.saturation, format);
    } else {
      result.explanation = "no trial succeeded";
    }
    run_.axes.push_back(result);
  }

  bool Stopped() {
    if (runner_.Interrupted()) run_.interrupted = true;
    return run_.interrupted;
  }

  const DLJob& job_;
  const AdvisePlan& plan_;
  const AdviseOptions& options_;
  TrialRunner& runner_;
  JobObserver& observer_;
  const AdviceProgress& progress_;
  int planned_ = 0;
  AdviceRun run_;
};

}  // namespace

AdviceRun RunAdvice(const DLJob& job, const AdvisePlan& plan, const AdviseOptions& options,
                    TrialRunner& runner, JobObserver& observer, const AdviceProgress& progress) {
  return Driver(job, plan, options, runner, observer, progress).Run();
}

std::string MemoryQuantity(int64_t bytes) {
  constexpr int64_t kStep = 64 * kMiB, kGiB = 1024 * kMiB;
  const int64_t rounded = std::max<int64_t>(1, (bytes + kStep - 1) / kStep) * kStep;
  if (rounded % kGiB == 0) return std::to_string(rounded / kGiB) + "Gi";
  return std::to_string(rounded / kMiB) + "Mi";
}

}  // namespace dljob::advise
