// Arithmetic on Kubernetes resource quantities ("8", "500m", "60Gi"), as pods need it: a job's
// per-GPU request times a worker's GPU count, and a quantity as a number (millicores, bytes) for
// the scheduler's accounting.
//
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace dljob {

// `quantity` × `factor`, in the same unit when the product is whole ("60Gi" × 8 = "480Gi",
// "500m" × 8 = "4000m"), else in the next smaller unit that makes it whole ("1.5" × 3 = "4500m",
// "1.5Gi" × 3 = "4608Mi"). Errors: not a quantity, exponent forms ("1e3"), factor < 0, or no
// exact result within milli / byte precision.
Result<std::string> MultiplyQuantity(const std::string& quantity, int64_t factor);

// The quantity in thousandths of its base unit, rounded up as Kubernetes rounds requests ("500m"
// = 500, "2" = 2000, "1Ki" = 1024000, "0.1m" = 1). CPU in millicores; for memory divide by 1000
// for bytes. Errors: not a quantity (as MultiplyQuantity), or past int64 ("8Ei" and up).
Result<int64_t> QuantityMilli(const std::string& quantity);

}  // namespace dljob
