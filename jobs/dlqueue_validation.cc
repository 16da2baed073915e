// Validate(const DLQueue&): the rules of validation.h for a DLQueue. Paths come from the field
// tables (dlqueue_fields.h), as the DLJob's do.
#include <map>
#include <string>

#include "jobs/dlqueue_fields.h"
#include "jobs/field_checker.h"
#include "jobs/validation.h"

namespace dljob {
namespace {

using validation_internal::At;
using validation_internal::Checker;
using validation_internal::CheckStringMap;

void CheckQueueMetadata(Checker& c, const std::string& path, const ObjectMeta& m) {
  std::string name = At(path, &ObjectMeta::name);
  c.Check(name, m.name.empty() ? "required" : CheckDnsLabel(m.name));
  if (!m.namespace_.empty()) {
    c.Check(At(path, &ObjectMeta::namespace_),
            "must be empty: a DLQueue is cluster-scoped, got " + Quote(m.namespace_));
  }
  CheckStringMap(c, At(path, &ObjectMeta::labels), m.labels, /*values_are_labels=*/true);
  CheckStringMap(c, At(path, &ObjectMeta::annotations), m.annotations, /*values_are_labels=*/false);
}

std::string DescribeProduct(const std::string& product) {
  return product.empty() ? "any product (gpuProduct \"\")" : "gpuProduct " + Quote(product);
}

void CheckQuotas(Checker& c, const std::string& list, const std::vector<QueueQuota>& quotas) {
  if (quotas.empty()) {
    c.Check(list,
            "required: at least one quota, e.g. {gpuProduct: NVIDIA-A100-SXM4-80GB, "
            "nominal: 8}, or {nominal: 8} for GPUs of any product");
    return;
  }
  constexpr int64_t kMax = INT64_MAX;
  std::map<std::string, size_t> seen;  // gpuProduct -> first index
  for (size_t i = 0; i < quotas.size(); ++i) {
    const QueueQuota& q = quotas[i];
    std::string path = JoinIndex(list, i), product = At(path, &QueueQuota::gpu_product);
    if (!q.gpu_product.empty()) {
      // It is matched against the nvidia.com/gpu.product node label.
      c.Check(product, CheckLabelValue(q.gpu_product));
    }
    auto [first, inserted] = seen.emplace(q.gpu_product, i);
    if (!inserted) {
      c.Check(product, "duplicate quota for " + DescribeProduct(q.gpu_product) + " (also " +
                           JoinIndex(list, first->second) + "); merge them into one entry");
    }
    std::string nominal = At(path, &QueueQuota::nominal);
    if (!q.nominal) {
      c.Check(nominal, "required: the GPUs of this product the queue owns (0 to only borrow)");
    }
    c.Range(nominal, q.nominal, 0, kMax, "zero or more GPUs");
    c.Range(At(path, &QueueQuota::borrowing_limit), q.borrowing_limit, 0, kMax,
            "zero or more GPUs");
  }
}

}  // namespace

FieldErrors Validate(const DLQueue& queue) {
  FieldErrors errors;
  Checker c(errors);
  if (queue.api_version != kApiVersion) {
    c.Check(At("", &DLQueue::api_version),
            "must be " + std::string(kApiVersion) + ", got " + Quote(queue.api_version));
  }
  if (queue.kind != kQueueKind) {
    c.Check(At("", &DLQueue::kind), "must be DLQueue, got " + Quote(queue.kind));
  }
  CheckQueueMetadata(c, At("", &DLQueue::metadata), queue.metadata);
  std::string spec = At("", &DLQueue::spec);
  if (!queue.spec.cohort.empty()) {
    c.Check(At(spec, &DLQueueSpec::cohort), CheckDnsLabel(queue.spec.cohort));
  }
  CheckQuotas(c, At(spec, &DLQueueSpec::quotas), queue.spec.quotas);
  return errors;
}

}  // namespace dljob
