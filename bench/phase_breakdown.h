// Where a job's time from submission to Running goes, from the operator's spans
// (kube/runtime/spans.h, dljob-operator --trace-spans) and the client's own times.
//
// Every instant of a job's window [submitted, running) counts in exactly one phase, the first
// that holds in this order:
//   to_operator   before the operator's jobs informer saw the job ("observe"): the API server's
//                 write and its watch fan-out;
//   to_client     after the end of the job's last reconcile pass that started in the window: the
//                 status write that said Running reaching the client (its watch);
//   api           inside an API call of one of the job's passes;
//   reconcile     inside a pass, outside its API calls: the operator's own work;
//   queue         the job's key waiting in the work queue for a worker;
//   cluster       none of those: waiting for the cluster — the scheduler (here, the operator's own
//                 binding), the kubelets starting pods, the informers reporting them.
// So the phases of a job add up to its submit→Running time. Spans without a key (informers'
// lists and watches, leader election) count in the API table only.
//
// Pure; thread-compatible.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kube/runtime/spans.h"

namespace dljob::bench {

// The value at quantile q (0..1) of ascending `sorted`, nearest rank; 0 when it is empty.
double Quantile(const std::vector<double>& sorted, double q);

struct JobWindow {
  std::string key;  // "namespace/name"
  WallTime submitted;
  WallTime running;
};

enum class Phase { kToOperator, kQueue, kReconcile, kApi, kCluster, kToClient };
inline constexpr int kPhaseCount = 6;
const char* PhaseName(Phase p);

// One job's phases in seconds (indexed by Phase), and what its passes did.
struct JobPhases {
  double seconds[kPhaseCount] = {};
  int passes = 0;     // reconcile passes that started in the window
  int api_calls = 0;  // API calls in them
  double total() const;
};

JobPhases PhasesOf(const JobWindow& window, const std::vector<kube::Span>& job_spans);

// Latency of one kind of API call ("create pods"), over every span of that detail.
struct ApiCallStats {
  int count = 0;
  double total_seconds = 0;
  double p50_ms = 0;
  double p99_ms = 0;
};

struct Breakdown {
  int jobs = 0;
  // Per phase over the jobs: mean, p50 and p99 seconds.
  double mean[kPhaseCount] = {};
  double p50[kPhaseCount] = {};
  double p99[kPhaseCount] = {};
  double mean_total = 0;
  double mean_passes = 0;
  double mean_api_calls = 0;
  std::map<std::string, ApiCallStats> api;  // by detail, every "api" span (with a key or not)
};

// Jobs without a window, and windows without spans, are left out of the per-job figures.
Breakdown Summarize(const std::vector<kube::Span>& spans, const std::vector<JobWindow>& windows);

// The phase table (mean, share of the mean total, p50, p99), passes and calls per job, and the
// API calls by kind, most total time first (at most `api_rows`).
std::string FormatBreakdown(const Breakdown& b, size_t api_rows = 12);

// One job's spans in time order, offsets from `origin` in ms: "  +12.3 ms  queue 4.1 ms
// (follow-up)".
std::string FormatTimeline(const std::vector<kube::Span>& spans, const std::string& key,
                           WallTime origin);

}  // namespace dljob::bench
