// The plot of `dljob advise`: one panel per axis tried, throughput against the setting.
//
// Settings sit evenly spaced left to right in increasing order (threads 1, 2, 4 …; memory caps;
// data paths as bars). Each trial is a small grey dot, each setting's median a larger one joined
// by a line (a bar on the data axis). On numeric axes the band the saturation rule used is shaded
// under the best point, and the chosen setting is ringed; failed trials are a cross on the
// baseline. Self-
// contained SVG 1.1 (no scripts, no external fonts). Pure; thread-safe.
#pragma once

#include <string>

#include "cli/advise/advisor.h"

namespace dljob::advise {

std::string AdviceSvg(const std::string& job_name, const AdviceRun& run);

}  // namespace dljob::advise
