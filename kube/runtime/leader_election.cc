// See leader_election.h.
#include "kube/runtime/leader_election.h"

#include <algorithm>
#include <cstdio>

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

namespace {

// MicroTime: RFC 3339 with six fractional digits, as the API server stores Lease times.
std::string MicroTime(WallTime now) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(now);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now - seconds);
  std::string base = FormatRfc3339(seconds);
  // micros is in [0, 999999] (six digits), but the compiler cannot prove it: room for any value.
  char frac[24];
  std::snprintf(frac, sizeof frac, ".%06lld", static_cast<long long>(micros.count()));
  return base.substr(0, base.size() - 1) + frac + "Z";  // base ends in 'Z'
}

}  // namespace

LeaderElector::LeaderElector(kube::Api& api, LeaderElectionOptions options, Clock& clock)
    : api_(api), options_(std::move(options)), clock_(clock) {}

bool LeaderElector::TryAcquireOrRenew() {
  const kube::Resource& leases = resources::kLeases;
  const std::string lease_key = options_.lease_namespace + "/" + options_.lease_name;
  last_error_.clear();
  ApiResult<Json> got = api_.Get(leases, options_.lease_namespace, options_.lease_name);
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
  LeaseDecision d = DecideLease(current, observed_, options_.identity, now, MicroTime(clock_.Now()),
                                options_.lease_duration);
  bool changed = !observed_ || !current || observed_->record.holder != current->holder ||
                 observed_->record.renew_time != current->renew_time ||
                 observed_->record.transitions != current->transitions;
  if (current && changed) observed_ = LeaseObservation{*current, now};
  if (d.action == LeaseDecision::Action::kWait) return false;

  ApiResult<Json> written = kube::ApiError{};
  if (!current) {
    Json lease = {
        {"apiVersion", leases.ApiVersion()},
        {"kind", leases.kind},
        {"metadata", {{"name", options_.lease_name}, {"namespace", options_.lease_namespace}}},
        {"spec", LeaseSpec(d.record)}};
    written = api_.Create(leases, options_.lease_namespace, lease);
  } else {
    object["spec"] = LeaseSpec(d.record);  // metadata.resourceVersion kept: stale → 409
    written = api_.Replace(leases, options_.lease_namespace, object);
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
  return true;
}

void LeaderElector::Release() {
  ApiResult<Json> got = api_.Get(resources::kLeases, options_.lease_namespace, options_.lease_name);
  if (!got.ok() || ParseLease(*got).holder != options_.identity) return;
  Json object = std::move(got).value();
  object["spec"]["holderIdentity"] = "";
  object["spec"]["leaseDurationSeconds"] = 1;
  api_.Replace(resources::kLeases, options_.lease_namespace, object);
}

void LeaderElector::Run(std::stop_token stop, const LeaderCallbacks& callbacks) {
  // Waits in steps of at most 20 ms, so a stop request ends the wait promptly.
  auto sleep = [&](std::chrono::milliseconds d) {
    const SteadyTime until = clock_.MonotonicNow() + d;
    for (SteadyTime now = clock_.MonotonicNow(); !stop.stop_requested() && now < until;
         now = clock_.MonotonicNow()) {
      clock_.SleepFor(std::min<Clock::Duration>(std::chrono::milliseconds(20), until - now));
    }
  };
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
  while (!stop.stop_requested() && !TryAcquireOrRenew()) {
    note_holder();
    note_error();
    sleep(options_.retry_period);
  }
  if (stop.stop_requested()) return;
  note_holder();
  if (callbacks.on_started_leading) callbacks.on_started_leading();
  SteadyTime last_renew = clock_.MonotonicNow();
  while (!stop.stop_requested()) {
    sleep(options_.retry_period);
    if (stop.stop_requested()) break;
    bool renewed = TryAcquireOrRenew();
    note_error();
    if (renewed) {
      last_renew = clock_.MonotonicNow();
    } else if (clock_.MonotonicNow() - last_renew > options_.renew_deadline) {
      break;  // could not renew in time: step down before others see the lease expire
    }
  }
  if (stop.stop_requested()) Release();
  if (callbacks.on_stopped_leading) callbacks.on_stopped_leading();
}

}  // namespace dljob::kube
