// LogPosition: where a collector is in one container's log, so that a log opened again (a followed
// stream that broke or was ended by a kubelet restart, read again from its start) goes on after
// the last line handled, handling none twice and noticing when lines may have been lost.
//
// Each read of the log (StartRead) offers its lines in order (Advance). With the kubelet's time
// stamps (kube/log_timestamp.h) the position is the time of the last line handled and how many
// handled lines carry exactly that time, so it holds when the log no longer starts where it did
// (the kubelet rotated the file while the stream was down). A line without a stamp is placed by
// its index in the read instead. The `skip` lines given at construction (already archived, by a
// previous leader or before a restart) are the first lines of the first read.
//
// A gap: a read of a log that is not new whose first line is later than the position — the log
// no longer holds the last line handled, so what was written between the two may be missing.
// Pure; one thread.
#pragma once

#include <cstdint>
#include <optional>

#include "base/time_format.h"

namespace dljob::metrics {

struct LogGap {
  WallTime after;   // the last line handled
  WallTime before;  // the first line of the read
};

class LogPosition {
 public:
  explicit LogPosition(int64_t skip = 0) : handled_(skip), skip_(skip) {}

  // A new read of the log, from its start.
  void StartRead();
  // Whether the next line of the read (stamped `time`, nullopt without a stamp) is new; a new
  // line moves the position past it.
  bool Advance(std::optional<WallTime> time);
  // The gap the current read found at its first line (nullopt: none); taken once.
  std::optional<LogGap> TakeGap();
  int64_t handled() const { return handled_; }  // lines counted as handled, the skipped included

 private:
  int64_t handled_;
  int64_t skip_;                  // lines of the first read that were handled before it
  int64_t index_ = 0;             // lines of the current read offered so far
  std::optional<WallTime> last_;  // the stamp of the last line handled
  int64_t at_last_ = 0;           // handled lines stamped exactly last_
  int64_t at_last_in_read_ = 0;   // lines of this read stamped exactly last_
  std::optional<LogGap> gap_;
};

}  // namespace dljob::metrics
