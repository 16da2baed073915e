// What `dljob advise` prints: the table of trials, the recommendation, and the same as JSON (which
// -o yaml prints through jobs/codec.h's JsonToYaml).
//
//   #  AXIS     THREADS  LOADER  DATA   MEM CAP  IMAGES/SEC  NOISE  START  FETCH  PEAK MEM  RESULT
//   1  threads  1        -       local  -        1480.2      0.8%   2.1s   -      612 MiB   ok
//
// NOISE is the relative standard error of the trial's throughput (metrics.h).
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/advise/advisor.h"
#include "cli/advise/recommendation.h"

namespace dljob::advise {

struct AdviceContext {
  std::string job_name;
  std::string job_file;
  int ranks = 1;
  int cpus = 1;
  std::string device = "cpu";  // where the ranks ran
  std::vector<std::string> notices;
};

std::string FormatTrialTable(const AdviceRun& run);
// The recommendation block, the axis notes and the carry-over notes, as text.
std::string FormatRecommendation(const AdviceContext& context, const AdviceRun& run,
                                 const Recommendation& rec, const std::vector<std::string>& notes);
nlohmann::ordered_json AdviceJson(const AdviceContext& context, const AdviceRun& run,
                                  const Recommendation& rec, const std::vector<std::string>& notes);

}  // namespace dljob::advise
