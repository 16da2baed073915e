#include "cli/queue_report.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "base/time_format.h"
#include "cli/start_estimate_view.h"
#include "jobs/codec.h"
#include "jobs/defaults.h"
#include "jobs/dlqueue_codec.h"

namespace dljob {
namespace {

using SysClock = std::chrono::system_clock;
using Rows = std::vector<std::vector<std::string>>;

std::string Age(const std::string& since, SysClock::time_point now) {
  std::optional<SysClock::time_point> t = ParseRfc3339(since);
  if (!t) return "-";
  return HumanDuration(std::chrono::duration_cast<std::chrono::seconds>(now - *t));
}

template <typename T>
std::string Integer(const std::optional<T>& v) {
  return v.has_value() ? std::to_string(v.value()) : "-";
}

std::string ProductName(const std::string& product) { return product.empty() ? "(any)" : product; }
std::string CohortName(const std::string& cohort) { return cohort.empty() ? "(default)" : cohort; }

// The operator has written the queue's status (any of it).
bool HasStatus(const DLQueueStatus& s) {
  return !s.used.empty() || !s.borrowed.empty() || s.pending_jobs || s.running_jobs;
}

// One row per product: the quotas in spec order, then products with use but no quota.
struct ProductLine {
  std::string product;
  const QueueQuota* quota = nullptr;
};

std::vector<ProductLine> ProductLines(const DLQueue& q) {
  std::vector<ProductLine> lines;
  for (const QueueQuota& quota : q.spec.quotas) lines.push_back({quota.gpu_product, &quota});
  for (const auto* list : {&q.status.used, &q.status.borrowed}) {
    for (const QueueUsage& u : *list) {
      bool known = std::any_of(lines.begin(), lines.end(),
                               [&](const ProductLine& l) { return l.product == u.gpu_product; });
      if (!known) lines.push_back({u.gpu_product, nullptr});
    }
  }
  if (lines.empty()) lines.push_back({"", nullptr});
  return lines;
}

std::string Usage(const DLQueue& q, const std::vector<QueueUsage>& list,
                  const std::string& product) {
  if (!HasStatus(q.status)) return "-";
  for (const QueueUsage& u : list) {
    if (u.gpu_product == product) return std::to_string(u.gpus);
  }
  return "0";
}

// Rows of the quota table: PRODUCT NOMINAL BORROWING-LIMIT USED BORROWED.
std::vector<std::vector<std::string>> QuotaCells(const DLQueue& q) {
  std::vector<std::vector<std::string>> rows;
  for (const ProductLine& l : ProductLines(q)) {
    std::string nominal = "-", limit = "-";
    if (l.quota != nullptr) {
      nominal = Integer(l.quota->nominal);
      limit = l.quota->borrowing_limit ? std::to_string(*l.quota->borrowing_limit) : "unlimited";
    }
    rows.push_back({ProductName(l.product), nominal, limit, Usage(q, q.status.used, l.product),
                    Usage(q, q.status.borrowed, l.product)});
  }
  return rows;
}

std::string QueueList(const std::vector<DLQueue>& queues, OutputFormat format) {
  nlohmann::json list = {
      {"apiVersion", kApiVersion}, {"kind", "DLQueueList"}, {"items", nlohmann::json::array()}};
  for (const DLQueue& q : queues) list["items"].push_back(EncodeQueueTree(q));
  return format == OutputFormat::kJson ? list.dump(2) + "\n" : JsonToYaml(list);
}

std::string GpuProductOf(const DLJob& job) {
  const auto& selector = job.spec.scheduling.node_selector;
  auto it = selector.find("nvidia.com/gpu.product");
  return it == selector.end() ? "" : it->second;
}

const Condition* QueuedCondition(const DLJob& job) {
  for (const Condition& c : job.status.conditions) {
    if (c.type == "Queued") return &c;
  }
  return nullptr;
}

std::string JobTable(const std::vector<DLJob>& jobs, bool wide, SysClock::time_point now) {
  Rows rows;
  rows.push_back({"NAMESPACE", "NAME", "PHASE", "GPUS", "PRIORITY"});
  if (wide) {
    for (const char* c : {"GPU PRODUCT", "WAITING", "AGE"}) rows[0].push_back(c);
  }
  rows[0].push_back("ESTIMATED START");
  rows[0].push_back("REASON");
  for (const DLJob& job : jobs) {
    std::vector<std::string> row = {
        job.metadata.namespace_.empty() ? "-" : job.metadata.namespace_, job.metadata.name,
        job.status.phase == JobPhase::kUnset ? "Unknown" : PhaseName(job.status.phase),
        Integer(job.spec.gpus), std::to_string(job.spec.scheduling.priority.value_or(0))};
    if (wide) {
      const Condition* queued = QueuedCondition(job);
      row.push_back(GpuProductOf(job).empty() ? "(any)" : GpuProductOf(job));
      row.push_back(IsWaiting(job) && queued != nullptr ? Age(queued->last_transition_time, now)
                                                        : "-");
      row.push_back(Age(job.metadata.creation_timestamp, now));
    }
    row.push_back(EstimatedStart(job, now));
    std::string reason = WaitingReason(job);
    row.push_back(reason.empty() ? "-" : reason);
    rows.push_back(std::move(row));
  }
  return RenderTable(rows);
}

}  // namespace

std::string FormatQueues(const std::vector<DLQueue>& queues, OutputFormat format,
                         SysClock::time_point now) {
  if (format == OutputFormat::kJson || format == OutputFormat::kYaml)
    return QueueList(queues, format);
  bool wide = format == OutputFormat::kWide;
  Rows rows;
  rows.push_back({"NAME", "GPU PRODUCT", "NOMINAL", "BORROWING LIMIT", "USED", "BORROWED",
                  "PENDING", "RUNNING"});
  if (wide) {
    for (const char* c : {"COHORT", "AGE"}) rows[0].push_back(c);
  }
  for (const DLQueue& q : queues) {
    for (std::vector<std::string>& cells : QuotaCells(q)) {
      cells.insert(cells.begin(), q.metadata.name);
      cells.push_back(Integer(q.status.pending_jobs));
      cells.push_back(Integer(q.status.running_jobs));
      if (wide) {
        cells.push_back(CohortName(q.spec.cohort));
        cells.push_back(Age(q.metadata.creation_timestamp, now));
      }
      rows.push_back(std::move(cells));
    }
  }
  return RenderTable(rows);
}

std::string QueueOf(const DLJob& job) {
  const std::optional<std::string>& q = job.spec.scheduling.queue;
  return q && !q->empty() ? *q : kDefaultQueue;
}

std::string WaitingReason(const DLJob& job) {
  if (!IsWaiting(job)) return "";
  const Condition* queued = QueuedCondition(job);
  return queued == nullptr ? "" : queued->message;
}

std::vector<DLJob> JobsOfQueue(const std::vector<DLJob>& jobs, const std::string& queue,
                               bool with_finished) {
  std::vector<DLJob> out;
  for (const DLJob& job : jobs) {
    if (QueueOf(job) != queue) continue;
    if (!with_finished && IsFinished(job.status.phase)) continue;
    out.push_back(job);
  }
  auto key = [](const DLJob& j) {
    // Waiting jobs after admitted ones; higher priority first; older first (RFC 3339 UTC times
    // order as strings).
    return std::make_tuple(IsWaiting(j), IsWaiting(j) ? -j.spec.scheduling.priority.value_or(0) : 0,
                           j.metadata.creation_timestamp, j.metadata.namespace_, j.metadata.name);
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const DLJob& a, const DLJob& b) { return key(a) < key(b); });
  return out;
}

std::string FormatQueue(const DLQueue& queue, const std::vector<DLJob>& jobs, OutputFormat format,
                        SysClock::time_point now) {
  if (format == OutputFormat::kJson) return EncodeQueueJson(queue) + "\n";
  if (format == OutputFormat::kYaml) return EncodeQueueYaml(queue);
  std::string out = "Name:      " + queue.metadata.name + "\n";
  out += "Cohort:    " + CohortName(queue.spec.cohort) + "\n";
  out += "Age:       " + Age(queue.metadata.creation_timestamp, now) + "\n";
  out += "Pending:   " + Integer(queue.status.pending_jobs) + "\n";
  out += "Running:   " + Integer(queue.status.running_jobs) + "\n\n";
  Rows quota = {{"GPU PRODUCT", "NOMINAL", "BORROWING LIMIT", "USED", "BORROWED"}};
  for (std::vector<std::string>& cells : QuotaCells(queue)) quota.push_back(std::move(cells));
  out += RenderTable(quota) + "\n";
  if (jobs.empty()) return out + "No jobs in queue \"" + queue.metadata.name + "\".\n";
  return out + JobTable(jobs, format == OutputFormat::kWide, now);
}

}  // namespace dljob
