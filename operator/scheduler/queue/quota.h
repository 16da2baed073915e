// QuotaLedger: how many GPUs each queue uses of each product, and whether a job's GPUs fit its
// queue's quota, borrowing idle quota from the cohort (all queues) within its borrowing limit.
//
// A queue may always use its own nominal quota. Beyond it, it borrows: its use stays within
// nominal + borrowing limit, and the cohort's total use of that product within the sum of the
// nominal quotas (so a queue borrows only what other queues leave idle). Quotas count GPUs only.
// Not thread-safe; one scheduling pass at a time.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "operator/scheduler/queue/queue_types.h"

namespace dljob::scheduler {

// GPUs a set of running jobs would give back to one queue's quota key.
struct FreedQuota {
  std::string_view queue;
  int64_t gpus = 0;
};

class QuotaLedger {
 public:
  explicit QuotaLedger(const std::vector<QueueSpec>& queues);

  bool HasQueue(std::string_view queue) const;
  // "a, b, c": the queues, for "unknown queue" messages.
  std::string QueueNames() const;
  // The quota entry a job of `product` ("" any) is charged to in `queue`: the product's own
  // entry, else "" (any); nullopt when the queue has neither (or does not exist).
  std::optional<std::string> KeyFor(std::string_view queue, std::string_view product) const;

  void Charge(std::string_view queue, const std::string& key, int64_t gpus);
  void Release(std::string_view queue, const std::string& key, int64_t gpus);

  int64_t Used(std::string_view queue, const std::string& key) const;
  int64_t Nominal(std::string_view queue, const std::string& key) const;
  // Whether the queue uses more than its nominal quota of `key`.
  bool Borrowing(std::string_view queue, const std::string& key) const;

  // "quota 32 + borrowing 8, used 24"; "" when the nominal quota is unlimited.
  std::string Describe(std::string_view queue, const std::string& key) const;

  // Whether `gpus` more GPUs of `key` fit `queue`'s quota, counting `freed` (GPUs of `key` that
  // running jobs of these queues would give back) as released. nullopt: they fit; else why not:
  // "" when they would exceed nominal + borrowing limit, or "borrowing 8 needs idle quota of
  // other queues, which have 0" when the cohort has too little idle.
  std::optional<std::string> Check(std::string_view queue, const std::string& key, int64_t gpus,
                                   const std::vector<FreedQuota>& freed = {}) const;

 private:
  struct QueueState {
    QueueSpec spec;
    std::map<std::string, int64_t> used;  // by quota key
  };
  struct CohortState {
    int64_t nominal = 0;  // sum of the queues' nominal quotas of the key, at most kUnlimited
    int64_t used = 0;
  };
  const QueueState* Find(std::string_view queue) const;

  std::map<std::string, QueueState, std::less<>> queues_;
  std::map<std::string, CohortState, std::less<>> cohort_;
};

// "unlimited" for kUnlimited and beyond, else the number.
std::string QuotaString(int64_t quota);

}  // namespace dljob::scheduler
