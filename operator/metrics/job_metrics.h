// The per-job metric families the operator exports on /metrics, computed from the DLJobs in its
// cache (their status is the truth: throughput, restarts and phase are what the controller and
// the log collector wrote there) and from the log collectors' line counts.
//
//   dljob_jobs{phase}                                  jobs per phase (every phase, zeros included)
//   dljob_job_phase{namespace,job,phase}               1 for the job's current phase
//   dljob_job_gpus{namespace,job}                      spec.gpus
//   dljob_job_restarts_total{namespace,job}            status.restarts
//   dljob_job_images_per_second{namespace,job}         status.throughput.imagesPerSec
//   dljob_job_step{namespace,job}                      status.throughput.step
//   dljob_job_loss{namespace,job}                      status.throughput.loss
//   dljob_job_log_lines_total{namespace,job}           launcher log lines archived
//   dljob_job_metric_lines_total{namespace,job}        metric lines among them
// Jobs without a value for a family are left out of it (no fake zeros). Pure; thread-safe.
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

}  // namespace dljob::metrics
