// See leader_election.h.
#include "kube/runtime/leader_election.h"

#include <algorithm>

#include "base/time_format.h"

namespace dljob::kube {

LeaseDecision DecideLease(const std::optional<LeaseRecord>& current,
                          const std::optional<LeaseObservation>& last_seen,
                          const std::string& identity, SteadyTime now,
                          const std::string& now_rfc3339, std::chrono::seconds lease_duration) {
  LeaseDecision d;
  auto fresh = [&](int64_t transitions) {
    LeaseRecord r;
    r.holder = identity;
    r.lease_duration_seconds = lease_duration.count();
    r.acquire_time = now_rfc3339;
    r.renew_time = now_rfc3339;
    r.transitions = transitions;
    return r;
  };
  if (!current) {
    d.action = LeaseDecision::Action::kAcquire;
    d.record = fresh(0);
    return d;
  }
  if (current->holder == identity) {
    d.action = LeaseDecision::Action::kRenew;
    d.record = *current;
    d.record.renew_time = now_rfc3339;
    d.record.lease_duration_seconds = lease_duration.count();
    return d;
  }
  if (current->holder.empty()) {  // released by its last holder: free to take now
    d.action = LeaseDecision::Action::kAcquire;
    d.record = fresh(current->transitions + 1);
    return d;
  }
  // Held by someone else: expired only if we have watched the same record, unchanged, for
  // longer than its duration. A record we have not seen before starts the clock now.
  bool unchanged = last_seen && last_seen->record.holder == current->holder &&
                   last_seen->record.renew_time == current->renew_time &&
                   last_seen->record.transitions == current->transitions;
  std::chrono::seconds duration(current->lease_duration_seconds > 0
                                    ? current->lease_duration_seconds
                                    : lease_duration.count());
  if (unchanged && now - last_seen->observed_at > duration) {
    d.action = LeaseDecision::Action::kAcquire;
    d.record = fresh(current->transitions + 1);
  }
  return d;
}

LeaseRecord ParseLease(const Json& lease) {
  LeaseRecord r;
  const Json spec = lease.value("spec", Json::object());
  r.holder = spec.value("holderIdentity", "");
  r.lease_duration_seconds = spec.value("leaseDurationSeconds", int64_t{0});
  r.acquire_time = spec.value("acquireTime", "");
  r.renew_time = spec.value("renewTime", "");
  r.transitions = spec.value("leaseTransitions", int64_t{0});
  return r;
}

Json LeaseSpec(const LeaseRecord& r) {
  Json spec = {{"holderIdentity", r.holder},
               {"leaseDurationSeconds", r.lease_duration_seconds},
               {"leaseTransitions", r.transitions}};
  if (!r.acquire_time.empty()) spec["acquireTime"] = r.acquire_time;
  if (!r.renew_time.empty()) spec["renewTime"] = r.renew_time;
  return spec;
}

LeaderElector::LeaderElector(kube::Api& api, LeaderElectionOptions options, Clock& clock)
    : api_(api), options_(std::move(options)), clock_(clock) {}

bool LeaderElector::TryAcquireOrRenew() {
  const kube::Resource& leases = resources::kLeases;
  const std::string lease_key = options_.lease_namespace + "/" + options_.lease_name;
  last_error_.clear();
  // While leading, the attempt must end with the window: a leader blocked in a renewal past it
  // could not step down in time.
  std::optional<SteadyTime> until = term_.ActUntil();
  std::unique_ptr<Api> bounded = until ? api_.WithDeadline(*until) : nullptr;
  Api& api = bounded ? *bounded : api_;
  ApiResult<Json> got = api.Get(leases, options_.lease_namespace, options_.lease_name);
  std::optional<LeaseRecord> current;
  Json object;
  if (got.ok()) {
    object = std::move(got).value();
    current = ParseLease(object);
  } else if (!got.error().IsNotFound()) {
    last_error_ = "cannot read lease " + lease_key + ": " + got.error().ToString();
    return false;
  }
  SteadyTime now = clock_.MonotonicNow();
  LeaseDecision d = DecideLease(current, observed_, options_.identity, now,
                                FormatRfc3339Micros(clock_.Now()), options_.lease_duration);
  bool changed = !observed_ || !current || observed_->record.holder != current->holder ||
                 observed_->record.renew_time != current->renew_time ||
                 observed_->record.transitions != current->transitions;
  if (current && changed) observed_ = LeaseObservation{*current, now};
  if (d.action == LeaseDecision::Action::kWait) {
    if (until) term_.End();  // another candidate holds the lease: we lead no more
    return false;
  }

  ApiResult<Json> written = kube::ApiError{};
  // Read before the write goes out: the window counts from the send (leader_term.h).
  const SteadyTime sent_at = clock_.MonotonicNow();
  if (!current) {
    Json lease = {
        {"apiVersion", leases.ApiVersion()},
        {"kind", leases.kind},
        {"metadata", {{"name", options_.lease_name}, {"namespace", options_.lease_namespace}}},
        {"spec", LeaseSpec(d.record)}};
    written = api.Create(leases, options_.lease_namespace, lease);
  } else {
    object["spec"] = LeaseSpec(d.record);  // metadata.resourceVersion kept: stale → 409
    written = api.Replace(leases, options_.lease_namespace, object);
  }
  if (!written.ok()) {
    const kube::ApiError& e = written.error();
    if (e.http != 409) {
      last_error_ = std::string(current ? "cannot update" : "cannot create") + " lease " +
                    lease_key + ": " + e.ToString();
      // Creating in a namespace that does not exist answers 404 for the namespace.
      if (!current && e.IsNotFound()) {
        last_error_ +=
            " (create namespace " + options_.lease_namespace + " or pass --lease-namespace)";
      }
    }
    return false;
  }
  observed_ = LeaseObservation{d.record, now};
  term_.Renewed(sent_at, options_.renew_deadline);
  return true;
}

void LeaderElector::Release(SteadyTime until) {
  std::unique_ptr<Api> api = api_.WithDeadline(until);
  ApiResult<Json> got = api->Get(resources::kLeases, options_.lease_namespace, options_.lease_name);
  if (!got.ok() || ParseLease(*got).holder != options_.identity) return;
  Json object = std::move(got).value();
  object["spec"]["holderIdentity"] = "";
  object["spec"]["leaseDurationSeconds"] = 1;
  api->Replace(resources::kLeases, options_.lease_namespace, object);
}

void LeaderElector::Run(std::stop_token stop, const LeaderCallbacks& callbacks) {
  // Waits until `until` in steps of at most 20 ms, so a stop request ends the wait promptly.
  auto sleep_until = [&](SteadyTime until) {
    for (SteadyTime now = clock_.MonotonicNow(); !stop.stop_requested() && now < until;
         now = clock_.MonotonicNow()) {
      clock_.SleepFor(std::min<Clock::Duration>(std::chrono::milliseconds(20), until - now));
    }
  };
  auto sleep = [&](Clock::Duration d) { sleep_until(clock_.MonotonicNow() + d); };
  std::string last_holder;
  auto note_holder = [&] {
    if (observed_ && observed_->record.holder != last_holder) {
      last_holder = observed_->record.holder;
      if (callbacks.on_new_leader) callbacks.on_new_leader(last_holder);
    }
  };
  std::string reported;  // the last attempt's error, passed to on_error when it changed
  auto note_error = [&] {
    if (last_error_ == reported) return;
    reported = last_error_;
    if (!reported.empty() && callbacks.on_error) callbacks.on_error(reported);
  };
  bool leading = false;
  while (!stop.stop_requested() && !(leading = TryAcquireOrRenew())) {
    note_holder();
    note_error();
    sleep(options_.retry_period);
  }
  note_holder();
  if (leading && callbacks.on_started_leading) callbacks.on_started_leading();
  // Renew every retry period; wake at the window's end if it comes first, and step down then.
  while (leading && !stop.stop_requested()) {
    std::optional<SteadyTime> until = term_.ActUntil();
    if (!until || clock_.MonotonicNow() >= *until) break;  // not renewed in time, or taken
    sleep_until(std::min<SteadyTime>(clock_.MonotonicNow() + options_.retry_period, *until));
    if (stop.stop_requested() || clock_.MonotonicNow() >= *until) continue;
    TryAcquireOrRenew();
    note_error();
  }
  if (!leading) return;
  // Stop acting before anything else: no fenced call starts from here on, and the ones in flight
  // end with the window at the latest.
  std::optional<SteadyTime> until = term_.ActUntil();
  term_.End();
  if (callbacks.on_stopped_leading) callbacks.on_stopped_leading();
  if (stop.stop_requested() && until) Release(*until);
}

}  // namespace dljob::kube
