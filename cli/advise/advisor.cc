#include "cli/advise/advisor.h"

#include <algorithm>
#include <cmath>

#include "base/human_format.h"
#include "cli/advise/metrics.h"

namespace dljob::advise {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

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
  // The trials so far with exactly `setting`, run by `axis` ("": by any axis).
  std::vector<const TrialRecord*> TrialsWith(const TrialSetting& setting,
                                             const std::string& axis = "") const {
    std::vector<const TrialRecord*> out;
    for (const TrialRecord& t : run_.trials) {
      if (t.setting == setting && (axis.empty() || t.axis == axis)) out.push_back(&t);
    }
    return out;
  }

  void RunTrial(const std::string& axis, const TrialSetting& setting, AxisResult& result) {
    TrialRecord t{static_cast<int>(run_.trials.size()) + 1, axis, setting, {}};
    progress_.started(t, planned_);
    DLJob trial = TrialJob(job_, plan_, options_, setting, t.index);
    t.measurement = runner_.Run(trial, setting.memory_limit_bytes, observer_);
    if (t.measurement.ok) run_.unit = t.measurement.unit;
    run_.trials.push_back(t);
    result.trials.push_back(t.index);
    progress_.finished(run_.trials.back());
  }

  // Brings every setting to options_.repeats trials, in rounds (each setting once, then each
  // again), so a load that drifts while the trials run touches every setting alike. Trials an
  // earlier axis ran with the same setting count, and join this axis's list — unless `fresh`,
  // where settings that are compared with each other must have been measured side by side. A cap
  // that ran out of memory is not run again.
  void RunRounds(const std::string& axis, const std::vector<TrialSetting>& settings,
                 AxisResult& result, bool fresh = false) {
    const std::string only = fresh ? axis : "";
    for (const TrialSetting& s : settings) {
      for (const TrialRecord* t : TrialsWith(s, only)) result.trials.push_back(t->index);
    }
    for (int round = 0; round < options_.repeats; ++round) {
      for (const TrialSetting& s : settings) {
        if (Stopped()) return;
        const std::vector<const TrialRecord*> done = TrialsWith(s, only);
        // Running out of memory under a cap is an answer, not noise: not repeated.
        const bool out_of_memory = std::any_of(done.begin(), done.end(), [](const TrialRecord* t) {
          return t->measurement.out_of_memory;
        });
        if (static_cast<int>(done.size()) <= round && !out_of_memory) RunTrial(axis, s, result);
      }
    }
  }

  // The median of the setting's ok trials; ok when at least half of them are. Noise: the largest
  // of the trials' own, and the spread of the repeats as a standard error.
  AxisPoint PointOf(const TrialSetting& setting, double value_of_setting,
                    const std::string& only_axis = "") const {
    std::vector<double> values;
    double noise = 0;
    size_t count = 0;
    for (const TrialRecord* t : TrialsWith(setting, only_axis)) {
      ++count;
      if (!t->measurement.ok) continue;
      values.push_back(t->measurement.throughput);
      noise = std::max(noise, t->measurement.noise);
    }
    AxisPoint p;
    p.setting = value_of_setting;
    p.ok = !values.empty() && values.size() * 2 >= count;
    if (!values.empty()) {
      p.value = Median(values);
      if (values.size() >= 2 && p.value > 0) {
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
    std::vector<TrialSetting> settings;
    for (auto v : values) {
      TrialSetting s = current;
      set(s, static_cast<double>(v));
      settings.push_back(s);
    }
    RunRounds(axis, settings, result);
    std::vector<AxisPoint> points;
    for (size_t i = 0; i < settings.size(); ++i) {
      if (!TrialsWith(settings[i]).empty()) {
        points.push_back(PointOf(settings[i], static_cast<double>(values[i])));
      }
    }
    result.saturation = FindSaturation(points, options_.tolerance);
    auto format = [](double v) { return std::to_string(static_cast<int>(v)); };
    if (result.saturation) {
      set(current, result.saturation->chosen);
      result.choice = format(result.saturation->chosen);
      result.explanation = ExplainSaturation(*result.saturation, format);
      if (axis == std::string(kAxisThreads) &&
          result.saturation->shape == CurveShape::kStillRising &&
          result.saturation->chosen * plan_.ranks >= plan_.cpus) {
        result.explanation += " — but the ranks use all " + std::to_string(plan_.cpus) +
                              " cores of this machine already";
      }
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
    std::vector<TrialSetting> settings;
    for (const std::string& path : plan_.data_paths) {
      TrialSetting s = current;
      s.data_path = path;
      settings.push_back(s);
    }
    // Fresh and interleaved: the data path's trials are compared with each other only, and a load
    // that drifted since the threads axis must not decide between them.
    RunRounds(kAxisData, settings, result, /*fresh=*/true);
    std::vector<Option> options;
    for (const TrialSetting& s : settings) {
      if (TrialsWith(s, kAxisData).empty()) continue;
      std::vector<double> startups;
      for (const TrialRecord* t : TrialsWith(s, kAxisData)) {
        if (t->measurement.ok) startups.push_back(t->measurement.startup_seconds);
      }
      options.push_back(
          {s.data_path, PointOf(s, 0, kAxisData), startups.empty() ? 0 : Median(startups)});
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
    // The reference: the chosen setting uncapped (run now unless an earlier axis ran it), at the
    // largest peak its trials measured.
    RunRounds(kAxisMemory, {current}, result);
    std::optional<int64_t> reference;
    for (const TrialRecord* t : TrialsWith(current)) {
      if (t->measurement.ok && t->measurement.peak_memory_bytes) {
        reference = std::max(reference.value_or(0), *t->measurement.peak_memory_bytes);
      }
    }
    if (!reference) {
      result.explanation = "the uncapped trial measured no peak";
      run_.axes.push_back(result);
      return;
    }
    std::vector<AxisPoint> points = {PointOf(current, static_cast<double>(*reference))};
    const int64_t peak = *reference;
    run_.reference_peak_bytes = peak;
    for (double f : plan_.memory_fractions) {
      if (Stopped()) break;
      TrialSetting s = current;
      const int64_t cap =
          std::max<int64_t>(16 * kMiB, static_cast<int64_t>(peak * f) / kMiB * kMiB);
      s.memory_limit_bytes = cap;
      RunRounds(kAxisMemory, {s}, result);
      if (TrialsWith(s).empty()) break;
      AxisPoint p = PointOf(s, static_cast<double>(cap));
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
