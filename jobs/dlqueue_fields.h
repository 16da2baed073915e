// The DLQueue API's field tables (field_table.h), as dljob_fields.h is the DLJob API's: each
// field's JSON name and what the CRD says about it. The DLQueue codec (decode, encode,
// unknown-field check) and its CRD schema are generated from these rows, in this order, and
// validation names its paths from them. metadata is ObjectMeta's table in dljob_fields.h.
//
// To add a field: add the member to dlqueue_types.h and one row here (the build fails until the
// row exists), then a value for it in dlqueue_test.cc's every-field queue.
//
// Constant tables; thread-safe.
#pragma once

#include <tuple>

#include "jobs/dljob_fields.h"
#include "jobs/dlqueue_types.h"
#include "jobs/field_table.h"

namespace dljob {

template <>
struct FieldTable<QueueQuota> {
  using T = QueueQuota;
  static constexpr std::tuple kFields{
      Field("gpuProduct", &T::gpu_product,
            Info().Describe("GPU product (the nvidia.com/gpu.product node label) this quota is "
                            "for; empty or omitted: GPUs of any product.")),
      Field("nominal", &T::nominal,
            Info().Describe("GPUs of this product the queue owns.").Minimum(0).Required()),
      Field("borrowingLimit", &T::borrowing_limit,
            Info()
                .Describe("GPUs the queue may borrow from the idle nominal quota of other "
                          "queues of its cohort, beyond its own nominal; unset: no limit.")
                .Minimum(0)),
  };
};

template <>
struct FieldTable<QueueUsage> {
  using T = QueueUsage;
  static constexpr std::tuple kFields{Field("gpuProduct", &T::gpu_product),
                                      Field("gpus", &T::gpus, Info().Minimum(0))};
};

template <>
struct FieldTable<DLQueueSpec> {
  using T = DLQueueSpec;
  static constexpr std::tuple kFields{
      Field("cohort", &T::cohort,
            Info().Describe("Which queues may lend each other idle quota: those with the same "
                            "cohort (a DNS-1123 label). Empty or omitted: the default cohort, of "
                            "every queue that names none.")),
      Field("quotas", &T::quotas,
            Info().Describe("GPU quota per product; at most one entry per gpuProduct.").Required()),
  };
};

template <>
struct FieldTable<DLQueueStatus> {
  using T = DLQueueStatus;
  static constexpr std::tuple kFields{
      Field("used", &T::used, Info().Describe("GPUs held by the queue's admitted jobs.")),
      Field("borrowed", &T::borrowed,
            Info().Describe("The part of `used` beyond nominal, borrowed from other queues of "
                            "the cohort.")),
      Field("pendingJobs", &T::pending_jobs),
      Field("runningJobs", &T::running_jobs),
  };
};

template <>
struct FieldTable<DLQueue> {
  using T = DLQueue;
  static constexpr std::tuple kFields{
      Field("apiVersion", &T::api_version),
      Field("kind", &T::kind),
      Field("metadata", &T::metadata),
      Field("spec", &T::spec, Info().Describe("The queue's GPU quota and cohort.")),
      Field("status", &T::status),
  };
};

}  // namespace dljob
