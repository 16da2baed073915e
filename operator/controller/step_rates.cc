#include "operator/controller/step_rates.h"

#include <iterator>

namespace dljob::controller {

void StepRates::Observe(const std::string& key, int64_t step, int64_t at) {
  auto [it, fresh] = runs_.try_emplace(key, Run{step, at, step, at});
  Run& run = it->second;
  run.seen = true;
  if (fresh) return;
  if (step < run.last_step) {  // a new run, from a checkpoint or from the start
    run = Run{step, at, step, at};
    return;
  }
  if (at >= run.last_at) {
    run.last_step = step;
    run.last_at = at;
  }
}

std::optional<double> StepRates::Rate(const std::string& key) const {
  auto it = runs_.find(key);
  if (it == runs_.end()) return std::nullopt;
  const Run& run = it->second;
  if (run.last_step <= run.first_step || run.last_at <= run.first_at) return std::nullopt;
  return static_cast<double>(run.last_step - run.first_step) /
         static_cast<double>(run.last_at - run.first_at);
}

void StepRates::Sweep() {
  for (auto it = runs_.begin(); it != runs_.end();) {
    if (!it->second.seen) {
      it = runs_.erase(it);
      continue;
    }
    it->second.seen = false;
    ++it;
  }
}

}  // namespace dljob::controller
