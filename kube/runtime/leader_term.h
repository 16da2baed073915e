// LeaderTerm: until when this replica may act as the leader — what the elector
// (leader_election.h) knows of its lease, as the rest of the operator needs it (fenced_api.h).
//
// The acting window: a standby takes the lease over lease_duration after it OBSERVES the last
// renewal, and it can observe a renewal only after the renewal was SENT. So after a renewal (or
// the acquisition) whose write was sent at monotonic time T succeeded, this replica may act until
// T + renew_deadline (ActingWindowEnd). T is read before the write goes out, never after it
// returns: a write that took long to answer does not stretch the window. renew_deadline is
// shorter than lease_duration (the operator's flags insist); the difference is the margin for
// what the window cannot see: the two clocks' rates, and the time a request spends in flight
// before the server applies it (a request carries the time left as the server's `timeout`, which
// the server counts from when it receives it).
//
// Thread-safety: every method may be called from many threads at once (the elector writes,
// every API call of the leader reads).
#pragma once

#include <optional>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"

namespace dljob::kube {

// Pure: the end of the acting window after a renewal whose write was sent at `sent_at`.
Clock::MonotonicTime ActingWindowEnd(Clock::MonotonicTime sent_at, Clock::Duration renew_deadline);

class LeaderTerm {
 public:
  // Until when this replica may act; nullopt while it is not leading (never led, stepped down, or
  // saw another holder): it must not act at all.
  std::optional<Clock::MonotonicTime> ActUntil() const;
  // Whether this replica may act at `now`: leading, and `now` before ActUntil().
  bool MayAct(Clock::MonotonicTime now) const;

  // A write of the lease (acquisition or renewal), sent at `sent_at`, succeeded: the window now
  // ends at ActingWindowEnd(sent_at, renew_deadline), or later if it already did (an older
  // renewal that answered late never shortens it).
  void Renewed(Clock::MonotonicTime sent_at, Clock::Duration renew_deadline);
  // Leadership is over: ActUntil() is nullopt until the next Renewed().
  void End();

  // Why a call at `now` may not be made ("" when it may): "not the leader: the lease was last
  // renewed 3.412 s ago and may be taken over" or "not the leader: the lease is not held".
  std::string Refusal(Clock::MonotonicTime now) const;

 private:
  mutable Mutex mu_;
  std::optional<Clock::MonotonicTime> act_until_ GUARDED_BY(mu_);
  std::optional<Clock::MonotonicTime> last_sent_ GUARDED_BY(mu_);  // of the last renewal
};

}  // namespace dljob::kube
