#include "images/trainer/comm/timeline.h"

#include <algorithm>
#include <cassert>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/env.h"

namespace dljob::trainer {

Timeline::Timeline(size_t capacity) : origin_(Clock::now()), ring_(capacity) {
  assert(capacity >= 1);
}

void Timeline::Record(const char* name, const char* category, Clock::time_point start,
                      Clock::time_point end, int thread, int64_t step, int64_t bucket) {
  using std::chrono::duration_cast;
  using std::chrono::microseconds;
  TraceEvent event{name,
                   category,
                   duration_cast<microseconds>(start - origin_).count(),
                   duration_cast<microseconds>(end - start).count(),
                   thread,
                   step,
                   bucket};
  MutexLock lock(mutex_);
  ring_[next_] = event;
  next_ = (next_ + 1) % ring_.size();
  ++recorded_;
}

std::vector<TraceEvent> Timeline::Events() const {
  MutexLock lock(mutex_);
  std::vector<TraceEvent> events;
  const size_t kept = std::min<size_t>(static_cast<size_t>(recorded_), ring_.size());
  events.reserve(kept);
  // With a full ring the oldest event sits where the next one goes.
  const size_t first = kept < ring_.size() ? 0 : next_;
  for (size_t i = 0; i < kept; ++i) events.push_back(ring_[(first + i) % ring_.size()]);
  return events;
}

int64_t Timeline::dropped() const {
  MutexLock lock(mutex_);
  return recorded_ - static_cast<int64_t>(std::min<size_t>(recorded_, ring_.size()));
}

std::string FormatChromeTrace(const std::vector<TraceEvent>& events, int rank, int64_t dropped) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [tid, name] : {std::pair{kMainThread, "main"}, std::pair{kCommThread, "comm"}}) {
    list.push_back({{"name", "thread_name"},
                    {"ph", "M"},
                    {"pid", rank},
                    {"tid", tid},
                    {"args", {{"name", name}}}});
  }
  for (const TraceEvent& e : events) {
    nlohmann::json args = {{"step", e.step}};
    if (e.bucket >= 0) args["bucket"] = e.bucket;
    list.push_back({{"name", e.name},
                    {"cat", e.category},
                    {"ph", "X"},
                    {"ts", e.start_us},
                    {"dur", e.duration_us},
                    {"pid", rank},
                    {"tid", e.thread},
                    {"args", std::move(args)}});
  }
  if (dropped > 0) {
    const int64_t at = events.empty() ? 0 : events.front().start_us;
    list.push_back({{"name", "DROPPED"},
                    {"cat", "timeline"},
                    {"ph", "i"},
                    {"s", "p"},
                    {"ts", at},
                    {"pid", rank},
                    {"tid", kMainThread},
                    {"args", {{"older_events_dropped", dropped}}}});
  }
  nlohmann::json trace = {{"traceEvents", std::move(list)}, {"displayTimeUnit", "ms"}};
  return trace.dump();
}

std::string TimelinePath(const std::string& path, int rank, int size) {
  if (size <= 1) return path;
  constexpr std::string_view kJson = ".json";
  std::string stem = path;
  if (stem.size() > kJson.size() && stem.ends_with(kJson)) stem.resize(stem.size() - kJson.size());
  return stem + ".rank" + std::to_string(rank) + ".json";
}

Status WriteTimeline(const Timeline& timeline, int rank, const std::string& path) {
  const std::string text = FormatChromeTrace(timeline.Events(), rank, timeline.dropped());
  return DefaultEnv().WriteFileAtomically(path, text).WithContext("--timeline");
}

}  // namespace dljob::trainer
