// The per-job metric families the operator exports on /metrics, computed from the DLJobs in its
// cache (their status is the truth: throughput, restarts and phase are what the controller and
// the log collector wrote there) and from the log collectors' line counts.
//
//   dljob_jobs{phase}                                    jobs per phase (every phase, zeros
//   included) dljob_job_phase{namespace,dljob,phase}               1 for the job's current phase
//   dljob_job_gpus{namespace,dljob}                      spec.gpus
//   dljob_job_restarts_total{namespace,dljob}            status.restarts
//   dljob_job_images_per_second{namespace,dljob}         status.throughput.imagesPerSec
//   dljob_job_step{namespace,dljob}                      status.throughput.step
//   dljob_job_loss{namespace,dljob}                      status.throughput.loss
//   dljob_job_log_lines_total{namespace,dljob}           launcher log lines archived
//   dljob_job_metric_lines_total{namespace,dljob}        metric lines among them
// (and the histograms of JobTimingHistograms below).
// The job's name is in `dljob`, not `job`: Prometheus keeps `job` for the scrape target and would
// rename ours `exported_job` (prometheus.h refuses it). Jobs without a value for a family are left
// out of it (no fake zeros). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "operator/metrics/prometheus.h"

namespace dljob::metrics {

struct LogCounts {
  int64_t lines = 0;
  int64_t metric_lines = 0;
};

// `logs` is keyed by "namespace/name".
std::vector<Family> JobFamilies(const std::vector<nlohmann::json>& jobs,
                                const std::map<std::string, LogCounts>& logs = {});

// How long jobs waited, as histograms (seconds; buckets from 1 s to a day):
//
//   dljob_job_start_duration_seconds{namespace}        creation → first Running
//   dljob_job_queue_wait_seconds{namespace,queue}      entering the queue → admitted (every
//                                                      admission, again after a preemption)
//
// Fed by the reconciler as its status writes land (controller::JobTimings), so only the leader
// observes and each transition is counted once: the write that records it succeeds once. Per
// namespace, not per job: a job has one start, and a histogram per job would be a series per job
// for ever. Thread-safe.
class JobTimingHistograms {
 public:
  JobTimingHistograms();
  void ObserveStart(const std::string& ns, double seconds);
  void ObserveQueueWait(const std::string& ns, const std::string& queue, double seconds);
  std::vector<Family> Families() const;

 private:
  Histogram start_;
  Histogram queue_wait_;
};

}  // namespace dljob::metrics
