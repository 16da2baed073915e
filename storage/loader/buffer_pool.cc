#include "storage/loader/buffer_pool.h"

namespace dljob::storage::loader {

std::vector<float> FloatBufferPool::Take(size_t n) {
  std::vector<float> buffer;
  {
    MutexLock lock(mu_);
    // Prefer one large enough, so that resizing does not reallocate.
    for (size_t i = spare_.size(); i-- > 0;) {
      if (spare_[i].capacity() >= n) {
        buffer = std::move(spare_[i]);
        spare_.erase(spare_.begin() + std::ptrdiff_t(i));
        break;
      }
    }
  }
  buffer.resize(n);  // no reallocation and no writes when a spare of this size was found
  return buffer;
}

void FloatBufferPool::Give(std::vector<float>&& buffer) {
  if (buffer.capacity() == 0) return;
  std::vector<float> dropped;  // freed outside the lock
  MutexLock lock(mu_);
  if (spare_.size() < max_spare_) {
    spare_.push_back(std::move(buffer));
  } else {
    dropped = std::move(buffer);
  }
}

size_t FloatBufferPool::spare() const {
  MutexLock lock(mu_);
  return spare_.size();
}

}  // namespace dljob::storage::loader
