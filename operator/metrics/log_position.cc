// See log_position.h.
#include "operator/metrics/log_position.h"

namespace dljob::metrics {

void LogPosition::StartRead() {
  index_ = 0;
  at_last_in_read_ = 0;
  gap_.reset();
}

bool LogPosition::Advance(std::optional<WallTime> time) {
  const int64_t index = index_++;
  if (skip_ > 0) {  // the first read: its first lines were handled before this collector
    --skip_;
    if (time) {
      if (!last_ || *time > *last_) last_ = time, at_last_ = 0, at_last_in_read_ = 0;
      if (*time == *last_) ++at_last_, ++at_last_in_read_;
    }
    return false;
  }
  if (!time) {
    if (index < handled_) return false;
    ++handled_;
    return true;
  }
  if (last_ && *time < *last_) return false;
  if (last_ && *time == *last_) {
    if (++at_last_in_read_ <= at_last_) return false;
    ++at_last_;
    ++handled_;
    return true;
  }
  if (index == 0 && last_) gap_ = LogGap{*last_, *time};
  last_ = time;
  at_last_ = 1;
  at_last_in_read_ = 1;
  ++handled_;
  return true;
}

std::optional<LogGap> LogPosition::TakeGap() {
  std::optional<LogGap> gap = gap_;
  gap_.reset();
  return gap;
}

}  // namespace dljob::metrics
