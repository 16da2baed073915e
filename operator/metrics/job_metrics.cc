// See job_metrics.h.
#include "operator/metrics/job_metrics.h"

#include "base/json_fields.h"
#include "base/time_format.h"
#include "jobs/dljob_types.h"
#include "kube/object_fields.h"

namespace dljob::metrics {
namespace {

using Json = nlohmann::json;

// The label naming a job's series (see job_metrics.h for why not `job`).
constexpr char kJobLabel[] = "dljob";

constexpr JobPhase kPhases[] = {JobPhase::kQueued,     JobPhase::kScheduled,  JobPhase::kRunning,
                                JobPhase::kRestarting, JobPhase::kSucceeded,  JobPhase::kFailed,
                                JobPhase::kSuspended,  JobPhase::kInterrupted};

// The value at a path of objects, when it is a number.
const Json* Number(const Json& object, std::initializer_list<const char*> path) {
  const Json* at = &object;
  for (const char* key : path) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at->is_number() ? at : nullptr;
}

Family Make(std::string name, std::string help, MetricType type = MetricType::kGauge) {
  return Family{std::move(name), std::move(help), type, {}};
}

}  // namespace

std::vector<Family> JobFamilies(const std::vector<Json>& jobs,
                                const std::map<std::string, LogCounts>& logs) {
  Family per_phase = Make("dljob_jobs", "DLJobs by phase.");
  Family phase = Make("dljob_job_phase", "1 for the phase the DLJob is in.");
  Family gpus = Make("dljob_job_gpus", "GPUs the DLJob asks for (spec.gpus).");
  Family restarts = Make("dljob_job_restarts_total", "Times the whole DLJob was restarted.",
                         MetricType::kCounter);
  Family ips = Make("dljob_job_images_per_second", "Training throughput of the whole DLJob.");
  Family step = Make("dljob_job_step", "Latest training step the DLJob reported.");
  Family loss = Make("dljob_job_loss", "Latest training loss the DLJob reported.");
  Family lines =
      Make("dljob_job_log_lines_total", "Launcher log lines archived.", MetricType::kCounter);
  Family metric_lines =
      Make("dljob_job_metric_lines_total", "DLJOB_METRIC lines among the archived log lines.",
           MetricType::kCounter);
  Family estimated_start = Make("dljob_job_estimated_start_time_seconds",
                                "When a waiting DLJob is estimated to start, in Unix seconds "
                                "(status.startEstimate; an estimate, not a promise).");

  std::map<std::string, int64_t> counts;
  for (JobPhase p : kPhases) counts[PhaseName(p)] = 0;
  for (const Json& job : jobs) {
    const std::string ns = kube::NamespaceOf(job);
    const std::string name = kube::NameOf(job);
    const Labels id = {{"namespace", ns}, {kJobLabel, name}};
    std::string current = StringAt(FieldOf(job, "status"), "phase");
    if (current.empty()) current = PhaseName(JobPhase::kQueued);
    ++counts[current];
    Labels with_phase = id;
    with_phase.emplace_back("phase", current);
    phase.samples.push_back({with_phase, 1});
    if (const Json* v = Number(job, {"spec", "gpus"}))
      gpus.samples.push_back({id, v->get<double>()});
    const Json* r = Number(job, {"status", "restarts"});
    restarts.samples.push_back({id, r ? r->get<double>() : 0});
    if (const Json* v = Number(job, {"status", "throughput", "imagesPerSec"})) {
      ips.samples.push_back({id, v->get<double>()});
    }
    if (const Json* v = Number(job, {"status", "throughput", "step"})) {
      step.samples.push_back({id, v->get<double>()});
    }
    if (const Json* v = Number(job, {"status", "throughput", "loss"})) {
      loss.samples.push_back({id, v->get<double>()});
    }
    if (std::optional<WallTime> t =
            ParseRfc3339(StringAt(FieldOf(FieldOf(job, "status"), "startEstimate"), "time"))) {
      estimated_start.samples.push_back({id, static_cast<double>(UnixSeconds(*t))});
    }
    if (auto it = logs.find(ns + "/" + name); it != logs.end()) {
      lines.samples.push_back({id, static_cast<double>(it->second.lines)});
      metric_lines.samples.push_back({id, static_cast<double>(it->second.metric_lines)});
    }
  }
  for (const auto& [name, count] : counts) {
    per_phase.samples.push_back({{{"phase", name}}, static_cast<double>(count)});
  }
  return {per_phase, phase, gpus, restarts, ips, step, loss, lines, metric_lines, estimated_start};
}

namespace {

// From a second to a day: a job starts in seconds on an idle cluster and waits hours on a busy one.
const std::vector<double> kWaitBuckets = {1,   5,    10,   30,   60,    120,   300,
                                          600, 1800, 3600, 7200, 14400, 43200, 86400};

}  // namespace

JobTimingHistograms::JobTimingHistograms()
    : start_("dljob_job_start_duration_seconds",
             "Seconds from a DLJob's creation to its first Running phase.", kWaitBuckets,
             {"namespace"}),
      queue_wait_("dljob_job_queue_wait_seconds",
                  "Seconds a DLJob waited in its queue before it was admitted.", kWaitBuckets,
                  {"namespace", "queue"}) {}

void JobTimingHistograms::ObserveStart(const std::string& ns, double seconds) {
  start_.Observe({ns}, seconds);
}

void JobTimingHistograms::ObserveQueueWait(const std::string& ns, const std::string& queue,
                                           double seconds) {
  queue_wait_.Observe({ns, queue}, seconds);
}

std::vector<Family> JobTimingHistograms::Families() const {
  return {start_.Collect(), queue_wait_.Collect()};
}

}  // namespace dljob::metrics
