// The DLQueue API (dljob.io/v1alpha1, kind DLQueue, cluster-scoped): plain C++ value types.
//
// A DLQueue holds GPU quota for the jobs that name it in spec.scheduling.queue, after Kueue's
// ClusterQueue but smaller. Each quota is per GPU product (the node label
// nvidia.com/gpu.product; "" = any product): `nominal` GPUs are the queue's own, and a queue may
// also borrow the idle nominal quota of the same product from the other queues of its cohort, up
// to `borrowingLimit` GPUs more than its nominal (unset: no limit). A cohort is the queues with
// the same `spec.cohort`; the queues that name none form the default cohort. The status is the
// operator's account of the queue: GPUs in use and borrowed per product, and its jobs.
//
// Like the DLJob types (dljob_types.h) these are the truth for the API: one field table per
// struct (dlqueue_fields.h) drives the codec (dlqueue_codec.h), the CRD (crd.h) and validation
// (dlqueue_validation.h). Plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jobs/dljob_types.h"

namespace dljob {

inline constexpr char kQueueKind[] = "DLQueue";

// The quota of one GPU product.
struct QueueQuota {
  std::string gpu_product;                 // "" (or omitted): GPUs of any product
  std::optional<int64_t> nominal;          // GPUs this queue owns; required
  std::optional<int64_t> borrowing_limit;  // GPUs it may borrow beyond nominal; unset: no limit
  bool operator==(const QueueQuota&) const = default;
};

// GPUs of one product, in the status.
struct QueueUsage {
  std::string gpu_product;  // "" for the any-product quota
  int64_t gpus = 0;
  bool operator==(const QueueUsage&) const = default;
};

struct DLQueueSpec {
  // The queues that lend each other idle quota: those with the same cohort (a DNS-1123 label).
  // "" (or omitted): the default cohort, of every queue that names none.
  std::string cohort;
  std::vector<QueueQuota> quotas;
  bool operator==(const DLQueueSpec&) const = default;
};

// Written by the operator only.
struct DLQueueStatus {
  std::vector<QueueUsage> used;      // GPUs held by this queue's admitted jobs, per product
  std::vector<QueueUsage> borrowed;  // the part of `used` beyond nominal, per product
  std::optional<int64_t> pending_jobs;
  std::optional<int64_t> running_jobs;
  bool operator==(const DLQueueStatus&) const = default;
};

// metadata.namespace stays empty: the kind is cluster-scoped.
struct DLQueue {
  std::string api_version = kApiVersion;
  std::string kind = kQueueKind;
  ObjectMeta metadata;
  DLQueueSpec spec;
  DLQueueStatus status;
  bool operator==(const DLQueue&) const = default;
};

}  // namespace dljob
