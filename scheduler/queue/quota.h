// QuotaLedger: how many GPUs each queue uses of each quota entry, and whether a job's GPUs fit
// its queue's quota, borrowing idle quota from its cohort within its borrowing limit.
//
// A queue may always use its own nominal quota. Beyond it, it borrows: its use stays within
// nominal + borrowing limit, and its cohort's total use of that entry's product within the sum of
// the cohort's nominal quotas of it (so a queue borrows only what other queues of its cohort
// leave idle). A cohort is the queues with the same QueueSpec::cohort; those naming none form the
// default cohort. Quotas count GPUs only. An account is one queue's entry for one product ("" any);
// accounts of one cohort and product share a pool. Jobs hold the account they are charged to
// (AccountFor), so a pass never looks names up. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scheduler/queue/queue_types.h"

namespace dljob::scheduler {

// GPUs a running job would give back to its account.
struct FreedQuota {
  size_t account = 0;
  int64_t gpus = 0;
};

class QuotaLedger {
 public:
  explicit QuotaLedger(const std::vector<QueueSpec>& queues);

  bool HasQueue(std::string_view queue) const;
  // "a, b, c": the queues, for "unknown queue" messages.
  std::string QueueNames() const;
  // The account a job of `product` ("" any) is charged to in `queue`: the queue's entry for the
  // product, else its entry "" (any); nullopt when it has neither (or does not exist).
  std::optional<size_t> AccountFor(std::string_view queue, std::string_view product) const;

  void Charge(size_t account, int64_t gpus) { Add(account, gpus); }
  void Release(size_t account, int64_t gpus) { Add(account, -gpus); }

  int64_t Used(size_t account) const { return accounts_[account].used; }
  int64_t Nominal(size_t account) const { return accounts_[account].quota.nominal; }
  // Whether the queue uses more than its nominal quota of the account's product.
  bool Borrowing(size_t account) const { return Used(account) > Nominal(account); }
  // Accounts of the same queue, and of the same cohort and product (one pool: its queues lend
  // each other idle quota).
  bool SameQueue(size_t a, size_t b) const { return accounts_[a].queue == accounts_[b].queue; }
  bool SamePool(size_t a, size_t b) const { return accounts_[a].pool == accounts_[b].pool; }
  // The index of the account's cohort (0, 1, ... in order of first appearance), for keying
  // per-cohort state.
  size_t CohortOf(size_t account) const { return pools_[accounts_[account].pool].cohort; }

  // "quota 32 + borrowing 8, used 24"; "" when the nominal quota is unlimited.
  std::string Describe(size_t account) const;

  // Whether `gpus` more fit the account's quota, counting `freed` as given back. nullopt: they
  // fit; else why not: "" when they would exceed nominal + borrowing limit, or "borrowing 8
  // needs idle quota of other queues, which have 0" when the cohort has too little idle ("of
  // other queues in cohort ml" when the cohort is named).
  std::optional<std::string> Check(size_t account, int64_t gpus,
                                   const std::vector<FreedQuota>& freed = {}) const;

 private:
  struct Account {
    size_t queue = 0;  // index into queue_names_
    size_t pool = 0;   // index into pools_: the cohort and product
    QueueQuota quota;  // clamped to kUnlimited
    int64_t used = 0;
  };
  struct Pool {
    size_t cohort = 0;    // index into cohort_names_
    int64_t nominal = 0;  // sum of the accounts' nominal quotas, at most kUnlimited
    int64_t used = 0;
  };
  void Add(size_t account, int64_t gpus);

  std::vector<std::string> queue_names_;
  std::vector<std::string> cohort_names_;  // "" the default cohort
  std::vector<Account> accounts_;
  std::vector<Pool> pools_;
  std::map<std::pair<std::string, std::string>, size_t, std::less<>> index_;  // (queue, product)
};

// "unlimited" for kUnlimited and beyond, else the number.
std::string QuotaString(int64_t quota);

}  // namespace dljob::scheduler
