#include "scheduler/queue/quota.h"

#include <algorithm>

namespace dljob::scheduler {
namespace {

int64_t SatAdd(int64_t a, int64_t b) { return std::min(kUnlimited, a + b); }
int64_t Clamp(int64_t q) { return std::clamp<int64_t>(q, 0, kUnlimited); }

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
  std::map<std::pair<std::string, std::string>, size_t> pools;  // (cohort, product)
  for (const QueueSpec& q : queues) {
    auto named = std::find(queue_names_.begin(), queue_names_.end(), q.name);
    const size_t queue = named - queue_names_.begin();
    if (named == queue_names_.end()) queue_names_.push_back(q.name);
    auto known = std::find(cohort_names_.begin(), cohort_names_.end(), q.cohort);
    const size_t cohort = known - cohort_names_.begin();
    if (known == cohort_names_.end()) cohort_names_.push_back(q.cohort);
    for (const auto& [product, quota] : q.quotas) {
      if (!index_.emplace(std::pair{q.name, product}, accounts_.size()).second) continue;
      auto [pool, fresh] = pools.emplace(std::pair{q.cohort, product}, pools_.size());
      if (fresh) pools_.push_back({cohort, 0, 0});
      Account a{queue, pool->second, {Clamp(quota.nominal), Clamp(quota.borrowing_limit)}, 0};
      pools_[a.pool].nominal = SatAdd(pools_[a.pool].nominal, a.quota.nominal);
      accounts_.push_back(a);
    }
  }
}

bool QuotaLedger::HasQueue(std::string_view queue) const {
  return std::find(queue_names_.begin(), queue_names_.end(), queue) != queue_names_.end();
}

std::string QuotaLedger::QueueNames() const {
  std::vector<std::string> names = queue_names_;
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::optional<size_t> QuotaLedger::AccountFor(std::string_view queue,
                                              std::string_view product) const {
  if (!product.empty()) {
    auto it = index_.find(std::pair{std::string(queue), std::string(product)});
    if (it != index_.end()) return it->second;
  }
  auto it = index_.find(std::pair{std::string(queue), std::string()});
  if (it != index_.end()) return it->second;
  return std::nullopt;
}

void QuotaLedger::Add(size_t account, int64_t gpus) {
  accounts_[account].used += gpus;
  pools_[accounts_[account].pool].used += gpus;
}

std::string QuotaLedger::Describe(size_t account) const {
  const Account& a = accounts_[account];
  if (a.quota.nominal >= kUnlimited) return "";
  std::string s = "quota " + std::to_string(a.quota.nominal);
  if (a.quota.borrowing_limit > 0) s += " + borrowing " + QuotaString(a.quota.borrowing_limit);
  return s + ", used " + std::to_string(a.used);
}

std::optional<std::string> QuotaLedger::Check(size_t account, int64_t gpus,
                                              const std::vector<FreedQuota>& freed) const {
  const Account& a = accounts_[account];
  int64_t freed_here = 0, freed_pool = 0;
  for (const FreedQuota& f : freed) {
    if (f.account == account) freed_here += f.gpus;
    if (accounts_[f.account].pool == a.pool) freed_pool += f.gpus;
  }
  const int64_t nominal = a.quota.nominal;
  const int64_t limit = SatAdd(nominal, a.quota.borrowing_limit);
  const int64_t used = a.used - freed_here;
  if (limit < kUnlimited && used + gpus > limit) return std::string();
  if (nominal >= kUnlimited || used + gpus <= nominal) return std::nullopt;
  const Pool& pool = pools_[a.pool];
  const int64_t pool_used = pool.used - freed_pool;
  if (pool.nominal >= kUnlimited || pool_used + gpus <= pool.nominal) return std::nullopt;
  const int64_t own_idle = std::max<int64_t>(0, nominal - used);
  const int64_t others_idle = std::max<int64_t>(0, pool.nominal - pool_used - own_idle);
  const std::string& cohort = cohort_names_[pool.cohort];
  return "borrowing " + std::to_string(gpus - own_idle) + " needs idle quota of other queues" +
         (cohort.empty() ? "" : " in cohort " + cohort) + ", which have " +
         std::to_string(others_idle);
}

}  // namespace dljob::scheduler
