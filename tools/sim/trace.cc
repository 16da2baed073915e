#include "tools/sim/trace.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "base/env.h"
#include "scheduler/queue/quota.h"
#include "tools/sim/csv.h"

namespace dljob::scheduler::sim {
namespace {

constexpr int64_t kMaxSeconds = int64_t{1} << 40;  // ~35,000 years: no overflow in sums
constexpr int64_t kMaxCount = 1 << 20;

// A name: non-empty, no spaces or control characters.
Status CheckName(const CsvTable& t, const CsvRow& row, const std::string& column,
                 const std::string& name) {
  if (name.empty()) return t.Error(row, column, "missing");
  for (unsigned char c : name) {
    if (c <= ' ' || c == 0x7f) {
      return t.Error(row, column, "must have no spaces or control characters, got " + Quote(name));
    }
  }
  return Status::Ok();
}

Result<std::map<std::string, std::string>> ParseLabels(const CsvTable& t, const CsvRow& row,
                                                       const std::string& text) {
  std::map<std::string, std::string> labels;
  std::stringstream s(text);
  std::string pair;
  while (std::getline(s, pair, ';')) {
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) {
      return t.Error(row, "labels",
                     "expected key=value pairs separated by ';', got " + Quote(pair));
    }
    labels[pair.substr(0, eq)] = pair.substr(eq + 1);
  }
  return labels;
}

Result<int64_t> QuotaField(const CsvTable& t, const CsvRow& row, const std::string& column,
                           int64_t fallback) {
  std::string text = t.Text(row, column);
  if (text == "unlimited" || text == "inf") return kUnlimited;
  return t.Int(row, column, 0, kUnlimited, fallback);
}

}  // namespace

Result<std::vector<Node>> ParseNodes(std::string_view file, std::string_view text) {
  Result<CsvTable> t = CsvTable::Parse(file, text, {"name", "num_gpu"});
  if (!t.ok()) return t.status();
  std::vector<Node> nodes;
  std::map<std::string, int> seen;
  for (const CsvRow& row : t->rows()) {
    Node n;
    n.name = t->Text(row, "name");
    if (Status s = CheckName(*t, row, "name", n.name); !s.ok()) return s;
    if (auto [it, fresh] = seen.emplace(n.name, row.line); !fresh) {
      return t->Error(row, "name",
                      Quote(n.name) + " already named on line " + std::to_string(it->second));
    }
    Result<int64_t> gpus = t->Int(row, "num_gpu", 0, kMaxCount);
    Result<int64_t> cpu = t->Int(row, "cpu_milli", 0, kMaxSeconds, 0);
    Result<int64_t> mem = t->Int(row, "memory_mib", 0, kMaxSeconds, 0);
    for (const auto* r : {&gpus, &cpu, &mem}) {
      if (!r->ok()) return r->status();
    }
    n.allocatable = Resources{*gpus, *cpu, *mem, 0};
    Result<std::map<std::string, std::string>> labels =
        ParseLabels(*t, row, t->Text(row, "labels"));
    if (!labels.ok()) return labels.status();
    n.labels = std::move(*labels);
    const std::string model = t->Text(row, "gpu_model");
    if (!model.empty()) n.labels[kGpuProductLabel] = model;
    nodes.push_back(std::move(n));
  }
  if (nodes.empty()) {
    return Status::InvalidArgument(std::string(file) + ": no nodes (only a header)");
  }
  return nodes;
}

Result<std::vector<TraceJob>> ParseJobs(std::string_view file, std::string_view text) {
  Result<CsvTable> t = CsvTable::Parse(file, text, {"name", "submit_time", "duration", "num_gpu"});
  if (!t.ok()) return t.status();
  std::vector<TraceJob> jobs;
  std::map<std::string, int> seen;
  for (const CsvRow& row : t->rows()) {
    TraceJob j;
    j.name = t->Text(row, "name");
    if (Status s = CheckName(*t, row, "name", j.name); !s.ok()) return s;
    if (auto [it, fresh] = seen.emplace(j.name, row.line); !fresh) {
      return t->Error(row, "name",
                      Quote(j.name) + " already named on line " + std::to_string(it->second));
    }
    Result<int64_t> submit = t->Int(row, "submit_time", 0, kMaxSeconds);
    Result<int64_t> duration = t->Int(row, "duration", 0, kMaxSeconds);
    Result<int64_t> gpus = t->Int(row, "num_gpu", 1, kMaxCount);
    Result<int64_t> priority = t->Int(row, "priority", -1'000'000, 1'000'000, 0);
    for (const auto* r : {&submit, &duration, &gpus, &priority}) {
      if (!r->ok()) return r->status();
    }
    Result<int64_t> per_worker =
        t->Int(row, "gpus_per_worker", 1, kMaxCount, std::min<int64_t>(*gpus, 8));
    if (!per_worker.ok()) return per_worker.status();
    if (*gpus % *per_worker != 0) {
      return t->Error(row, "gpus_per_worker",
                      "num_gpu " + std::to_string(*gpus) + " is not a multiple of " +
                          std::to_string(*per_worker));
    }
    if (!t->Text(row, "min_gpu").empty()) {
      Result<int64_t> min = t->Int(row, "min_gpu", 1, *gpus);
      if (!min.ok()) return min.status();
      if (*min % *per_worker != 0) {
        return t->Error(row, "min_gpu",
                        "must be a multiple of gpus_per_worker (" + std::to_string(*per_worker) +
                            "), got " + std::to_string(*min));
      }
      j.min_gpu = *min;
    }
    if (!t->Text(row, "max_gpu").empty()) {
      Result<int64_t> max = t->Int(row, "max_gpu", 1, kMaxCount);
      if (!max.ok()) return max.status();
      if (*max != *gpus) {
        return t->Error(row, "max_gpu",
                        "must equal num_gpu (" + std::to_string(*gpus) + "), got " +
                            std::to_string(*max) + "; or leave it empty");
      }
      if (!j.min_gpu) return t->Error(row, "max_gpu", "needs min_gpu (an elastic job's range)");
    }
    if (!t->Text(row, "time_limit").empty()) {
      Result<int64_t> limit = t->Int(row, "time_limit", 1, kMaxSeconds);
      if (!limit.ok()) return limit.status();
      j.time_limit = *limit;
    }
    j.submit_time = *submit;
    j.duration = *duration;
    j.num_gpu = *gpus;
    j.gpus_per_worker = *per_worker;
    j.priority = *priority;
    const std::string queue = t->Text(row, "queue");
    if (!queue.empty()) {
      if (Status s = CheckName(*t, row, "queue", queue); !s.ok()) return s;
      j.queue = queue;
    }
    j.gpu_model = t->Text(row, "gpu_model");
    jobs.push_back(std::move(j));
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const TraceJob& a, const TraceJob& b) {
    return std::tie(a.submit_time, a.name) < std::tie(b.submit_time, b.name);
  });
  return jobs;
}

Result<std::vector<QueueSpec>> ParseQueues(std::string_view file, std::string_view text) {
  Result<CsvTable> t = CsvTable::Parse(file, text, {"name"});
  if (!t.ok()) return t.status();
  std::map<std::string, QueueSpec> queues;
  std::map<std::string, int> first_line;  // queue -> its first row's line
  for (const CsvRow& row : t->rows()) {
    const std::string name = t->Text(row, "name");
    if (Status s = CheckName(*t, row, "name", name); !s.ok()) return s;
    const std::string cohort = t->Text(row, "cohort");
    if (!cohort.empty()) {
      if (Status s = CheckName(*t, row, "cohort", cohort); !s.ok()) return s;
    }
    const std::string model = t->Text(row, "gpu_model");
    Result<int64_t> nominal = QuotaField(*t, row, "nominal", kUnlimited);
    Result<int64_t> borrowing = QuotaField(*t, row, "borrowing_limit", 0);
    if (!nominal.ok()) return nominal.status();
    if (!borrowing.ok()) return borrowing.status();
    auto [first, fresh] = first_line.emplace(name, row.line);
    QueueSpec& q = queues[name];
    if (fresh) {
      q.name = name;
      q.cohort = cohort;
    } else if (q.cohort != cohort) {
      return t->Error(row, "cohort",
                      "queue " + name + " is in " +
                          (q.cohort.empty() ? "the default cohort" : "cohort " + Quote(q.cohort)) +
                          " on line " + std::to_string(first->second) +
                          "; every row of a queue names the same cohort");
    }
    if (!q.quotas.emplace(model, QueueQuota{*nominal, *borrowing}).second) {
      return t->Error(row, "gpu_model",
                      "queue " + name + " already has a quota for " +
                          (model.empty() ? std::string("any model") : Quote(model)));
    }
  }
  std::vector<QueueSpec> out;
  for (auto& [name, q] : queues) out.push_back(std::move(q));
  if (out.empty())
    return Status::InvalidArgument(std::string(file) + ": no queues (only a header)");
  return out;
}

Result<Trace> LoadTrace(const std::string& nodes_path, const std::string& jobs_path,
                        const std::string& queues_path) {
  Trace trace;
  Result<std::string> nodes_text = DefaultEnv().ReadFile(nodes_path);
  if (!nodes_text.ok()) return nodes_text.status();
  Result<std::vector<Node>> nodes = ParseNodes(nodes_path, *nodes_text);
  if (!nodes.ok()) return nodes.status();
  trace.nodes = std::move(*nodes);
  Result<std::string> jobs_text = DefaultEnv().ReadFile(jobs_path);
  if (!jobs_text.ok()) return jobs_text.status();
  Result<std::vector<TraceJob>> jobs = ParseJobs(jobs_path, *jobs_text);
  if (!jobs.ok()) return jobs.status();
  trace.jobs = std::move(*jobs);
  if (!queues_path.empty()) {
    Result<std::string> queues_text = DefaultEnv().ReadFile(queues_path);
    if (!queues_text.ok()) return queues_text.status();
    Result<std::vector<QueueSpec>> queues = ParseQueues(queues_path, *queues_text);
    if (!queues.ok()) return queues.status();
    trace.queues = std::move(*queues);
  }
  return trace;
}

std::vector<QueueSpec> QueuesFor(const Trace& trace) {
  if (!trace.queues.empty()) return trace.queues;
  std::set<std::string> names = {kDefaultQueue};
  for (const TraceJob& j : trace.jobs) names.insert(j.queue);
  std::vector<QueueSpec> out;
  for (const std::string& n : names) out.push_back(UnlimitedQueue(n));
  return out;
}

JobRequest RequestOf(const TraceJob& job) {
  JobRequest r;
  r.name = job.name;
  r.queue = job.queue;
  r.priority = job.priority;
  r.submit_time = job.submit_time;
  r.time_limit = job.time_limit;
  r.duration = job.duration;
  r.gang.job = job.name;
  r.gang.workers = job.num_gpu / job.gpus_per_worker;
  r.gang.per_worker = Resources{job.gpus_per_worker, 0, 0, 1};
  if (job.min_gpu) r.elastic = ElasticRange{*job.min_gpu / job.gpus_per_worker, r.gang.workers};
  if (!job.gpu_model.empty()) {
    r.gang.node_selector[kGpuProductLabel] = job.gpu_model;
    r.gang.gpu_model = job.gpu_model;
  }
  return r;
}

std::string NodesCsv(const std::vector<Node>& nodes) {
  std::string out = "name,num_gpu,gpu_model,cpu_milli,memory_mib,labels\n";
  for (const Node& n : nodes) {
    std::string labels;
    std::string model;
    for (const auto& [k, v] : n.labels) {
      if (k == kGpuProductLabel) {
        model = v;
        continue;
      }
      labels += (labels.empty() ? "" : ";") + k + "=" + v;
    }
    out += n.name + "," + std::to_string(n.allocatable.gpus) + "," + model + "," +
           std::to_string(n.allocatable.cpu_milli) + "," +
           std::to_string(n.allocatable.memory_mib) + "," + labels + "\n";
  }
  return out;
}

std::string JobsCsv(const std::vector<TraceJob>& jobs) {
  // The elastic columns only when a job is elastic, so a rigid trace reads as before.
  const bool elastic =
      std::any_of(jobs.begin(), jobs.end(), [](const TraceJob& j) { return j.min_gpu; });
  std::string out =
      "name,submit_time,duration,num_gpu,gpus_per_worker,queue,priority,gpu_model,time_limit";
  out += elastic ? ",min_gpu,max_gpu\n" : "\n";
  for (const TraceJob& j : jobs) {
    out += j.name + "," + std::to_string(j.submit_time) + "," + std::to_string(j.duration) + "," +
           std::to_string(j.num_gpu) + "," + std::to_string(j.gpus_per_worker) + "," + j.queue +
           "," + std::to_string(j.priority) + "," + j.gpu_model + "," +
           (j.time_limit ? std::to_string(*j.time_limit) : "");
    if (elastic) {
      out += j.min_gpu ? "," + std::to_string(*j.min_gpu) + "," + std::to_string(j.num_gpu) : ",,";
    }
    out += "\n";
  }
  return out;
}

std::string QueuesCsv(const std::vector<QueueSpec>& queues) {
  // The cohort column only when a queue names one, so a trace without cohorts reads as before.
  const bool cohorts = std::any_of(queues.begin(), queues.end(),
                                   [](const QueueSpec& q) { return !q.cohort.empty(); });
  std::string out = "name,gpu_model,nominal,borrowing_limit";
  out += cohorts ? ",cohort\n" : "\n";
  for (const QueueSpec& q : queues) {
    for (const auto& [model, quota] : q.quotas) {
      out += q.name + "," + model + "," + QuotaString(quota.nominal) + "," +
             QuotaString(quota.borrowing_limit) + (cohorts ? "," + q.cohort : "") + "\n";
    }
  }
  return out;
}

}  // namespace dljob::scheduler::sim
