// operator_phases: where jobs' time went, from the spans `dljob-operator --trace-spans FILE`
// wrote (kube/runtime/spans.h), on any cluster — the breakdown operator_bench prints, without the
// bench.
//
//   operator_phases SPANS              every job's phases from when the operator saw it to the
//                                      end of its last pass (no client times here, so the way
//                                      to the operator and back to a client are not in it)
//   operator_phases SPANS --job NS/N   that job's spans in time order, and its phases
//
// Exit codes: 0, 1 (the file cannot be read or holds no such job), 2 (bad usage).
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "bench/phase_breakdown.h"

namespace dljob::bench {
namespace {

// Per job: from its first "observe" to the end of its last "reconcile".
std::vector<JobWindow> OperatorWindows(const std::vector<kube::Span>& spans) {
  std::map<std::string, JobWindow> windows;
  for (const kube::Span& s : spans) {
    if (s.key.empty()) continue;
    auto [it, fresh] = windows.try_emplace(s.key, JobWindow{s.key, s.start, s.start});
    JobWindow& w = it->second;
    if (s.name == "observe" && (fresh || s.start < w.submitted)) w.submitted = s.start;
    if (s.name == "reconcile" && s.end > w.running) w.running = s.end;
  }
  std::vector<JobWindow> out;
  for (auto& [key, w] : windows) out.push_back(w);
  return out;
}

int Main(int argc, char** argv) {
  std::string path;
  std::string job;
  CLI::App app("operator_phases: where jobs' time went, from dljob-operator --trace-spans",
               "operator_phases");
  app.add_option("spans", path, "the file dljob-operator --trace-spans wrote")->required();
  app.add_option("--job", job, "one job, namespace/name: its spans in time order");
  CLI11_PARSE(app, argc, argv);

  Result<std::vector<kube::Span>> spans = kube::ReadSpanFile(path);
  if (!spans.ok()) {
    std::fprintf(stderr, "operator_phases: %s\n", spans.status().message().c_str());
    return 1;
  }
  std::vector<JobWindow> windows = OperatorWindows(*spans);
  if (!job.empty()) {
    auto it = std::find_if(windows.begin(), windows.end(),
                           [&](const JobWindow& w) { return w.key == job; });
    if (it == windows.end()) {
      std::fprintf(stderr, "operator_phases: no span of job %s in %s (namespace/name)\n",
                   job.c_str(), path.c_str());
      return 1;
    }
    windows = {*it};
    std::printf("%s, from when the operator saw it:\n%s\n", job.c_str(),
                FormatTimeline(*spans, job, it->submitted).c_str());
  }
  std::printf("%s", FormatBreakdown(Summarize(*spans, windows)).c_str());
  std::printf(
      "(from the operator's first sight of each job to its last pass: the way to the "
      "operator and back to a client are not in these spans; operator_bench measures "
      "them)\n");
  return 0;
}

}  // namespace
}  // namespace dljob::bench

int main(int argc, char** argv) { return dljob::bench::Main(argc, argv); }
