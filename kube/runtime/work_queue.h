// WorkQueue: the keys ("namespace/name") of jobs waiting to be reconciled.
//
// The contract the controller relies on (as client-go's rate-limited work queue):
//   - a key is never handed to two workers at once: Get() marks it processing until Done();
//   - duplicates collapse: adding a key that is already waiting is a no-op, and a key added while
//     it is being processed is handed out again after Done(), so no change is ever lost;
//   - rate limiting only on failure: AddRateLimited() delays a key by a per-key exponential
//     backoff (base × 2^failures, capped), and Forget() resets it after a success;
//   - AddAfter() for timed requeues (deadlines, TTL); the earliest pending time wins;
//   - ShutDown() wakes every blocked Get(), which then returns nullopt;
//   - two lanes: follow-ups (Add(key, Lane::kFollowUp): a job already under way whose child
//     changed, and failed keys after their backoff) are handed out before the normal lane, at
//     most kFollowUpStreak in a row while normal keys wait, so a burst of new jobs cannot hold
//     back the next step of a job that has started, and the burst is not starved either. The
//     normal lane is FIFO; the follow-up lane hands out the key that first became a follow-up
//     earliest, so the job admitted first takes its next steps first, and a thousand admitted
//     jobs do not advance in lock step (each behind all the others at every step). ForgetOrder()
//     drops a key's place when its object is gone.
// Time comes from the injected Clock. Get() blocks; with a FakeClock, tests use TryGet() after
// advancing the clock. Every method is thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "kube/runtime/duration.h"

namespace dljob::kube {

struct WorkQueueOptions {
  Duration base_delay{5};
  Duration max_delay{std::chrono::minutes(5)};
  // How long a blocked Get() sleeps at most before looking at the clock again; it bounds how
  // late a delayed key is when the Clock is not the system clock.
  Duration poll{200};
};

enum class Lane { kNormal, kFollowUp };

// Called by Get()/TryGet(), outside the queue's lock, for every key handed out: when the key
// became ready (added, or due after a delay; for a key added while it was being processed, when
// it was added) and the lane it was handed out from. For spans of the time keys wait.
using HandoutObserver = std::function<void(const std::string& key, WallTime ready, Lane lane)>;

class WorkQueue {
 public:
  static constexpr int kFollowUpStreak = 4;

  explicit WorkQueue(const Clock& clock, WorkQueueOptions options = {},
                     HandoutObserver on_handout = nullptr);
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // A key waiting in the normal lane moves to the follow-up lane when added as a follow-up.
  void Add(const std::string& key, Lane lane = Lane::kNormal);
  void AddAfter(const std::string& key, Duration delay);
  // Adds the key after its backoff and counts one more failure for it.
  void AddRateLimited(const std::string& key);
  // Resets the key's failure count (call after a successful reconcile).
  void Forget(const std::string& key);
  // Drops the key's place in the follow-up lane (call once its object is gone, so that places
  // are kept only for live objects); a later follow-up of the key queues behind every other.
  void ForgetOrder(const std::string& key);
  int Failures(const std::string& key) const;

  // Blocks until a key is ready or the queue shuts down (nullopt). REQUIRES: Done(key) after.
  std::optional<std::string> Get();
  // Like Get() but never blocks: nullopt when no key is ready now.
  std::optional<std::string> TryGet();
  void Done(const std::string& key);

  void ShutDown();
  bool ShuttingDown() const;
  // Keys ready to be handed out now (not counting delayed or processing ones).
  size_t Len() const;
  // Keys that hold a place in the follow-up lane (ForgetOrder drops one).
  size_t Ordered() const;

 private:
  struct Handout {
    std::string key;
    WallTime ready;
    Lane lane;
  };
  // `ready`: since when the key is ready (a delayed key's due time); now when not given.
  void AddLocked(const std::string& key, Lane lane, std::optional<WallTime> ready = std::nullopt)
      REQUIRES(mu_);
  void PushLocked(const std::string& key) REQUIRES(mu_);
  // Whether an entry of `key` in a lane (the follow-up lane or not) is still to be handed out.
  bool LiveLocked(const std::string& key, bool follow_up) const REQUIRES(mu_);
  // Drops entries of keys handed out, moved or processing from the front of each lane.
  void TrimLocked() REQUIRES(mu_);
  void PromoteDueLocked() REQUIRES(mu_);
  void EraseWaitingLocked(const std::string& key) REQUIRES(mu_);
  std::optional<Handout> PopLocked() REQUIRES(mu_);
  std::optional<Handout> GetLocked() REQUIRES(mu_);
  // Tells the observer (outside the lock) and returns the key.
  std::optional<std::string> HandOut(std::optional<Handout> handout);

  const Clock& clock_;
  const WorkQueueOptions options_;
  const HandoutObserver on_handout_;
  mutable Mutex mu_;
  std::condition_variable_any cv_;
  // Ready keys in order, per lane; an entry whose key was handed out or moved lanes since is
  // skipped (dirty_ and follow_up_ say which entries count).
  std::deque<std::string> queue_ GUARDED_BY(mu_);
  // The follow-up lane by rank: when each key first became a follow-up (follow_up_rank_).
  std::set<std::pair<uint64_t, std::string>> follow_ups_ GUARDED_BY(mu_);
  std::map<std::string, uint64_t> follow_up_rank_ GUARDED_BY(mu_);
  uint64_t next_rank_ GUARDED_BY(mu_) = 0;
  std::set<std::string> dirty_ GUARDED_BY(mu_);      // needs processing
  std::set<std::string> follow_up_ GUARDED_BY(mu_);  // dirty keys in the follow-up lane
  std::set<std::string> retrying_ GUARDED_BY(mu_);   // waiting keys that failed
  int streak_ GUARDED_BY(mu_) = 0;                   // follow-ups handed out in a row
  std::set<std::string> processing_ GUARDED_BY(mu_);
  // Delayed keys: key → when it is due, and the same in due order, so that a Get() looks only at
  // the keys due (thousands of waiting jobs each have a timed requeue).
  std::map<std::string, WallTime> waiting_ GUARDED_BY(mu_);
  std::set<std::pair<WallTime, std::string>> due_order_ GUARDED_BY(mu_);
  std::map<std::string, int> failures_ GUARDED_BY(mu_);
  std::map<std::string, WallTime> ready_since_ GUARDED_BY(mu_);  // dirty keys: since when
  bool shutting_down_ GUARDED_BY(mu_) = false;
};

}  // namespace dljob::kube
