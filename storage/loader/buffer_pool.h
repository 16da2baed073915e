// FloatBufferPool: spare batch buffers, so the loader reuses the memory of batches the consumer
// is done with instead of allocating (and page-faulting in) ~20-40 MB per batch.
//
// A Loader's workers Take() a buffer for each batch they build; a Batch (loader.h) that owned a
// pooled buffer Give()s it back when it is destroyed — whenever and on whichever thread the
// consumer drops it, also after the Loader itself is gone (the pool is shared, not owned by the
// Loader). At most `max_spare` buffers are kept; more are freed, so the pool never holds more
// than max_spare buffers beyond those in use.
//
// Thread-safety: Take and Give may be called from any threads at once.
#pragma once

#include <cstddef>
#include <vector>

#include "base/mutex.h"

namespace dljob::storage::loader {

class FloatBufferPool {
 public:
  explicit FloatBufferPool(size_t max_spare) : max_spare_(max_spare) {}

  // A buffer of size n: a spare one if any (its contents are left over from an earlier batch:
  // the caller overwrites all n floats), else a new one.
  std::vector<float> Take(size_t n);
  // Keeps `buffer` for a later Take, or frees it when max_spare buffers are already kept.
  void Give(std::vector<float>&& buffer);

  size_t spare() const;

 private:
  const size_t max_spare_;
  mutable Mutex mu_;
  std::vector<std::vector<float>> spare_ GUARDED_BY(mu_);
};

}  // namespace dljob::storage::loader
