// Timeline: a per-rank Chrome trace of what a training step spends its time on.
//
// The Trainer and the gradient overlap (comm/gradient_overlap.h) record spans: FORWARD, BACKWARD,
// OPTIMIZER (main thread) and, per gradient bucket and step, NEGOTIATE (waiting for the bucket's
// gradients), FUSE (gathering them into the reduction buffers), ALLREDUCE (the fused allreduce,
// or for --variable_update=parameter_server the REDUCE/BROADCAST of the packed buffer) and UNFUSE
// (writing the averages back into param.grad()). At the end of the run the events are formatted
// as Chrome trace JSON ({"traceEvents":[{"name","cat","ph":"X","ts","dur","pid","tid","args"}]}),
// which chrome://tracing and ui.perfetto.dev open; pid is the rank, tid the recording thread.
//
// Cost: callers hold a `Timeline*` that is null when --timeline is not given, so a disabled
// timeline costs one null check per span (TimelineSpan does it). Enabled, a span is two clock
// reads and one mutex-guarded store of a fixed-size record (names are string literals, nothing is
// allocated after construction).
//
// Memory is bounded: the recorder keeps the newest `capacity` events in a ring (the oldest are
// overwritten and counted in dropped()); the default of 262,144 events of 48 bytes is ~12 MB: a
// step records 4 per gradient bucket and 3 more, so thousands of steps of a ResNet-50.
//
// Thread-safety: Record, Events and dropped are safe from any thread. FormatChromeTrace and
// TimelinePath are pure.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"

namespace dljob::trainer {

// Recording threads (Chrome trace "tid").
inline constexpr int kMainThread = 0;
inline constexpr int kCommThread = 1;

struct TraceEvent {
  const char* name = "";  // a string literal: "FORWARD", "ALLREDUCE", ...
  const char* category = "";
  int64_t start_us = 0;  // since the timeline was created
  int64_t duration_us = 0;
  int thread = kMainThread;
  int64_t step = 0;
  int64_t bucket = -1;  // -1: not about one bucket
};

class Timeline {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kDefaultCapacity = size_t{1} << 18;

  // REQUIRES: capacity >= 1.
  explicit Timeline(size_t capacity = kDefaultCapacity);

  // Records [start, end) as `name` (a string literal; so is `category`).
  void Record(const char* name, const char* category, Clock::time_point start,
              Clock::time_point end, int thread, int64_t step, int64_t bucket = -1);

  // The kept events, oldest first.
  std::vector<TraceEvent> Events() const;
  // Events overwritten because the ring was full.
  int64_t dropped() const;

 private:
  const Clock::time_point origin_;
  mutable Mutex mutex_;
  std::vector<TraceEvent> ring_ GUARDED_BY(mutex_);  // capacity fixed at construction
  size_t next_ GUARDED_BY(mutex_) = 0;               // slot of the next event
  int64_t recorded_ GUARDED_BY(mutex_) = 0;          // all events ever recorded
};

// Records a span from construction to destruction when `timeline` is not null.
class TimelineSpan {
 public:
  TimelineSpan(Timeline* timeline, const char* name, const char* category, int thread, int64_t step,
               int64_t bucket = -1)
      : timeline_(timeline),
        name_(name),
        category_(category),
        thread_(thread),
        step_(step),
        bucket_(bucket) {
    if (timeline_ != nullptr) start_ = Timeline::Clock::now();
  }
  ~TimelineSpan() {
    if (timeline_ != nullptr) {
      timeline_->Record(name_, category_, start_, Timeline::Clock::now(), thread_, step_, bucket_);
    }
  }
  TimelineSpan(const TimelineSpan&) = delete;
  TimelineSpan& operator=(const TimelineSpan&) = delete;

 private:
  Timeline* timeline_;
  const char* name_;
  const char* category_;
  int thread_;
  int64_t step_;
  int64_t bucket_;
  Timeline::Clock::time_point start_{};
};

// Chrome trace JSON of `events` for process `rank`: one complete ("X") event each, with
// args {"step", "bucket"} (bucket only when >= 0), thread-name metadata for the main and
// communication threads, and, if `dropped` > 0, an instant event saying how many were dropped.
std::string FormatChromeTrace(const std::vector<TraceEvent>& events, int rank, int64_t dropped);

// Where rank `rank` of `size` writes --timeline=PATH: PATH itself with one rank; otherwise PATH
// without a trailing ".json", then ".rank<N>.json" (trace.json -> trace.rank1.json).
std::string TimelinePath(const std::string& path, int rank, int size);

// Writes FormatChromeTrace(...) of `timeline` to `path`. Errors name the path.
Status WriteTimeline(const Timeline& timeline, int rank, const std::string& path);

}  // namespace dljob::trainer
