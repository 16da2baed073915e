// See leader_term.h.
#include "kube/runtime/leader_term.h"

#include <algorithm>
#include <cstdio>

namespace dljob::kube {

Clock::MonotonicTime ActingWindowEnd(Clock::MonotonicTime sent_at, Clock::Duration renew_deadline) {
  return sent_at + renew_deadline;
}

std::optional<Clock::MonotonicTime> LeaderTerm::ActUntil() const {
  MutexLock lock(mu_);
  return act_until_;
}

bool LeaderTerm::MayAct(Clock::MonotonicTime now) const {
  MutexLock lock(mu_);
  return act_until_ && now < *act_until_;
}

void LeaderTerm::Renewed(Clock::MonotonicTime sent_at, Clock::Duration renew_deadline) {
  MutexLock lock(mu_);
  Clock::MonotonicTime end = ActingWindowEnd(sent_at, renew_deadline);
  act_until_ = act_until_ ? std::max(*act_until_, end) : end;
  last_sent_ = last_sent_ ? std::max(*last_sent_, sent_at) : sent_at;
}

void LeaderTerm::End() {
  MutexLock lock(mu_);
  act_until_.reset();
}

std::string LeaderTerm::Refusal(Clock::MonotonicTime now) const {
  MutexLock lock(mu_);
  if (act_until_ && now < *act_until_) return "";
  if (!act_until_ || !last_sent_) return "not the leader: the lease is not held";
  char ago[32];
  std::snprintf(ago, sizeof ago, "%.3f", std::chrono::duration<double>(now - *last_sent_).count());
  return std::string("not the leader: the lease was last renewed ") + ago +
         " s ago and may be taken over";
}

}  // namespace dljob::kube
