// Leader election over a coordination.k8s.io/v1 Lease, so that of several dljob-operator
// replicas exactly one reconciles at a time and a standby takes over when the leader dies.
//
// The protocol is client-go's: the leader renews spec.renewTime every retry period; a candidate
// takes the Lease over only when the holder has not renewed it for leaseDurationSeconds. Expiry
// is judged by the candidate's own clock — the local time at which it last saw the record change
// — never by comparing renewTime with its clock, so clock skew between nodes cannot make two
// leaders. Writes go through Replace with the resourceVersion read, so of two candidates racing
// for an expired Lease the API server lets exactly one win (409 for the other).
//
// Leadership cannot overlap. Each successful write of the lease moves the elector's LeaderTerm
// (leader_term.h) to the end of the acting window: renew_deadline after the write was SENT (the
// time is read before the call), which is before any standby can have seen it, let alone waited
// lease_duration after. While leading, every lease call of the elector is bounded by that window
// (Api::WithDeadline), and so is every call of the leader's work when it goes through a
// FencedApi on term() (fenced_api.h). A leader that has not renewed when the window ends, or that
// reads the lease and finds another holder, steps down at once: the term ends (fenced calls are
// refused from then on), on_stopped_leading is called, and the operator exits and is restarted
// fresh.
//
// The decision is a pure function (DecideLease) tested on its own; LeaderElector adds the API
// calls and the loop; it reads the time from, and waits on, the injected Clock. Thread-safety:
// one thread at a time, except term(), which any thread may read.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>

#include "base/clock.h"
#include "kube/api.h"
#include "kube/runtime/leader_term.h"

namespace dljob::kube {

using SteadyTime = Clock::MonotonicTime;

struct LeaseRecord {
  std::string holder;
  int64_t lease_duration_seconds = 0;
  std::string acquire_time;  // RFC 3339 with microseconds (MicroTime)
  std::string renew_time;
  int64_t transitions = 0;
};

// What a candidate last saw of the Lease, and when (by its own clock).
struct LeaseObservation {
  LeaseRecord record;
  SteadyTime observed_at{};
};

struct LeaseDecision {
  enum class Action { kWait, kAcquire, kRenew };
  Action action = Action::kWait;
  LeaseRecord record;  // the record to write for kAcquire / kRenew
};

// Pure: given the Lease as read now (nullopt: none exists), what this candidate last observed,
// its identity and the times, decide whether to take, renew, or wait.
LeaseDecision DecideLease(const std::optional<LeaseRecord>& current,
                          const std::optional<LeaseObservation>& last_seen,
                          const std::string& identity, SteadyTime now,
                          const std::string& now_rfc3339, std::chrono::seconds lease_duration);

// Lease JSON <-> record.
LeaseRecord ParseLease(const Json& lease);
Json LeaseSpec(const LeaseRecord& record);

struct LeaderElectionOptions {
  std::string lease_namespace = "dljob-system";
  std::string lease_name = "dljob-operator";
  std::string identity;  // unique per replica: pod name, or hostname + pid
  std::chrono::seconds lease_duration{15};
  std::chrono::seconds renew_deadline{10};
  std::chrono::milliseconds retry_period{2000};
};

struct LeaderCallbacks {
  std::function<void()> on_started_leading;  // called once, on the Run() thread
  // Called when leadership is lost or Run() ends, after the term has ended. It returns once the
  // leader's work has stopped: only then may the lease be released to a standby.
  std::function<void()> on_stopped_leading;
  std::function<void(const std::string&)> on_new_leader;  // the observed holder changed
  // An attempt failed for a reason other than losing a race to another candidate (a 409): what
  // failed and the server's answer (LeaderElector::last_error). Called when the message changes,
  // so a lease that cannot be written (its namespace missing, RBAC) is reported once, not at every
  // retry; again after an attempt has succeeded in between.
  std::function<void(const std::string&)> on_error;
};

class LeaderElector {
 public:
  // `api` and `clock` must outlive the elector.
  LeaderElector(kube::Api& api, LeaderElectionOptions options, Clock& clock);

  // One attempt: read the Lease, decide, write. Returns true when this candidate holds the lease
  // afterwards (and term() runs to the new window's end). While leading, the calls are bounded by
  // the acting window; a lease held by another ends the term. Never throws; API errors count as
  // "not renewed" and are kept in last_error().
  bool TryAcquireOrRenew();
  // Why the last attempt failed, "" when it did not or when it only lost a race (409).
  const std::string& last_error() const { return last_error_; }

  // Campaigns until it leads, then renews every retry period until `stop` is requested or the
  // acting window ends without a renewal. On stop while leading, the Lease is released (holder
  // cleared) so a standby takes over at once — after on_stopped_leading has returned, and only
  // while the window lasts.
  void Run(std::stop_token stop, const LeaderCallbacks& callbacks);

  // Until when this replica may act (thread-safe; FencedApi reads it).
  const LeaderTerm& term() const { return term_; }

 private:
  // Clears the holder, with calls bounded by `until` (the window of the term just ended).
  void Release(SteadyTime until);

  kube::Api& api_;
  LeaderElectionOptions options_;
  Clock& clock_;
  LeaderTerm term_;
  std::optional<LeaseObservation> observed_;
  std::string resource_version_;
  std::string last_error_;
};

}  // namespace dljob::kube
