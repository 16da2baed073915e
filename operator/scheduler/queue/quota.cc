#include "operator/scheduler/queue/quota.h"

#include <algorithm>

namespace dljob::scheduler {
namespace {

int64_t SatAdd(int64_t a, int64_t b) { return std::min(kUnlimited, a + b); }

}  // namespace

QueueSpec UnlimitedQueue(std::string name) {
  QueueSpec q;
  q.name = std::move(name);
  q.quotas[""] = QueueQuota{kUnlimited, 0};
  return q;
}

std::string QuotaString(int64_t quota) {
  return quota >= kUnlimited ? "unlimited" : std::to_string(quota);
}

QuotaLedger::QuotaLedger(const std::vector<QueueSpec>& queues) {
  for (const QueueSpec& q : queues) {
    queues_[q.name].spec = q;
    for (const auto& [key, quota] : q.quotas) {
      CohortState& c = cohort_[key];
      c.nominal = SatAdd(c.nominal, std::min(kUnlimited, std::max<int64_t>(0, quota.nominal)));
    }
  }
}

const QuotaLedger::QueueState* QuotaLedger::Find(std::string_view queue) const {
  auto it = queues_.find(queue);
  return it == queues_.end() ? nullptr : &it->second;
}

bool QuotaLedger::HasQueue(std::string_view queue) const { return Find(queue) != nullptr; }

std::string QuotaLedger::QueueNames() const {
  std::string out;
  for (const auto& [name, q] : queues_) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::optional<std::string> QuotaLedger::KeyFor(std::string_view queue,
                                               std::string_view product) const {
  const QueueState* q = Find(queue);
  if (!q) return std::nullopt;
  if (!product.empty() && q->spec.quotas.count(std::string(product))) return std::string(product);
  if (q->spec.quotas.count("")) return std::string();
  return std::nullopt;
}

void QuotaLedger::Charge(std::string_view queue, const std::string& key, int64_t gpus) {
  auto it = queues_.find(queue);
  if (it == queues_.end()) return;
  it->second.used[key] += gpus;
  cohort_[key].used += gpus;
}

void QuotaLedger::Release(std::string_view queue, const std::string& key, int64_t gpus) {
  Charge(queue, key, -gpus);
}

int64_t QuotaLedger::Used(std::string_view queue, const std::string& key) const {
  const QueueState* q = Find(queue);
  if (!q) return 0;
  auto it = q->used.find(key);
  return it == q->used.end() ? 0 : it->second;
}

int64_t QuotaLedger::Nominal(std::string_view queue, const std::string& key) const {
  const QueueState* q = Find(queue);
  if (!q) return 0;
  auto it = q->spec.quotas.find(key);
  return it == q->spec.quotas.end() ? 0 : std::min(kUnlimited, it->second.nominal);
}

std::string QuotaLedger::Describe(std::string_view queue, const std::string& key) const {
  const QueueState* q = Find(queue);
  if (!q) return "";
  auto it = q->spec.quotas.find(key);
  if (it == q->spec.quotas.end() || it->second.nominal >= kUnlimited) return "";
  std::string s = "quota " + std::to_string(it->second.nominal);
  if (it->second.borrowing_limit > 0)
    s += " + borrowing " + QuotaString(it->second.borrowing_limit);
  return s + ", used " + std::to_string(Used(queue, key));
}

bool QuotaLedger::Borrowing(std::string_view queue, const std::string& key) const {
  return Used(queue, key) > Nominal(queue, key);
}

std::optional<std::string> QuotaLedger::Check(std::string_view queue, const std::string& key,
                                              int64_t gpus,
                                              const std::vector<FreedQuota>& freed) const {
  const QueueState* q = Find(queue);
  if (!q) return "queue \"" + std::string(queue) + "\" does not exist";
  auto quota_it = q->spec.quotas.find(key);
  if (quota_it == q->spec.quotas.end()) return "no quota for this GPU model";
  const QueueQuota& quota = quota_it->second;
  int64_t freed_here = 0, freed_all = 0;
  for (const FreedQuota& f : freed) {
    freed_all += f.gpus;
    if (f.queue == queue) freed_here += f.gpus;
  }
  const int64_t nominal = std::min(kUnlimited, quota.nominal);
  const int64_t limit = SatAdd(nominal, std::min(kUnlimited, quota.borrowing_limit));
  const int64_t used = Used(queue, key) - freed_here;
  if (limit < kUnlimited && used + gpus > limit) return std::string();
  if (nominal >= kUnlimited || used + gpus <= nominal) return std::nullopt;
  auto c = cohort_.find(key);
  const int64_t cohort_nominal = c == cohort_.end() ? 0 : c->second.nominal;
  const int64_t cohort_used = (c == cohort_.end() ? 0 : c->second.used) - freed_all;
  if (cohort_nominal >= kUnlimited || cohort_used + gpus <= cohort_nominal) return std::nullopt;
  const int64_t own_idle = std::max<int64_t>(0, nominal - used);
  const int64_t others_idle = std::max<int64_t>(0, cohort_nominal - cohort_used - own_idle);
  return "borrowing " + std::to_string(gpus - own_idle) +
         " needs idle quota of other queues, which have " + std::to_string(others_idle);
}

}  // namespace dljob::scheduler
