#include "kube/runtime/leader_election.h"

#include <stop_token>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/testing/fake_clock.h"
#include "kube/testing/fake_api.h"

namespace dljob::kube {
namespace {

using std::chrono::seconds;
using Action = LeaseDecision::Action;

const SteadyTime kT0 = SteadyTime() + std::chrono::hours(1);

LeaseRecord Held(const std::string& holder, const std::string& renew, int64_t transitions = 0) {
  return LeaseRecord{holder, 15, "2026-01-01T00:00:00.000000Z", renew, transitions};
}

TEST(DecideLease, NoLeaseIsCreated) {
  LeaseDecision d = DecideLease(std::nullopt, std::nullopt, "a", kT0, "now", seconds(15));
  EXPECT_EQ(d.action, Action::kAcquire);
  EXPECT_EQ(d.record.holder, "a");
  EXPECT_EQ(d.record.renew_time, "now");
  EXPECT_EQ(d.record.lease_duration_seconds, 15);
  EXPECT_EQ(d.record.transitions, 0);
}

TEST(DecideLease, HolderRenewsKeepingAcquireTime) {
  LeaseRecord mine = Held("a", "t1", 3);
  LeaseDecision d = DecideLease(mine, std::nullopt, "a", kT0, "t2", seconds(15));
  EXPECT_EQ(d.action, Action::kRenew);
  EXPECT_EQ(d.record.renew_time, "t2");
  EXPECT_EQ(d.record.acquire_time, mine.acquire_time);
  EXPECT_EQ(d.record.transitions, 3);
}

TEST(DecideLease, OthersLeaseFirstSeenIsNeverExpired) {
  // Even if its renewTime is ancient: expiry is judged by our own observation, not its clock.
  LeaseRecord other = Held("b", "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(DecideLease(other, std::nullopt, "a", kT0, "now", seconds(15)).action, Action::kWait);
}

TEST(DecideLease, OthersLeaseExpiresAfterItsDurationUnchanged) {
  LeaseRecord other = Held("b", "t1", 2);
  LeaseObservation seen{other, kT0};
  EXPECT_EQ(DecideLease(other, seen, "a", kT0 + seconds(15), "now", seconds(15)).action,
            Action::kWait);
  LeaseDecision d = DecideLease(other, seen, "a", kT0 + seconds(16), "now", seconds(15));
  EXPECT_EQ(d.action, Action::kAcquire);
  EXPECT_EQ(d.record.holder, "a");
  EXPECT_EQ(d.record.transitions, 3);
  EXPECT_EQ(d.record.acquire_time, "now");
}

TEST(DecideLease, ARenewalRestartsTheClock) {
  LeaseObservation seen{Held("b", "t1"), kT0};
  LeaseRecord renewed = Held("b", "t2");
  EXPECT_EQ(DecideLease(renewed, seen, "a", kT0 + seconds(60), "now", seconds(15)).action,
            Action::kWait);
}

TEST(DecideLease, TheLeaseHoldsItsOwnDuration) {
  LeaseRecord other = Held("b", "t1");
  other.lease_duration_seconds = 60;
  LeaseObservation seen{other, kT0};
  EXPECT_EQ(DecideLease(other, seen, "a", kT0 + seconds(30), "now", seconds(15)).action,
            Action::kWait);
  EXPECT_EQ(DecideLease(other, seen, "a", kT0 + seconds(61), "now", seconds(15)).action,
            Action::kAcquire);
}

TEST(DecideLease, AReleasedLeaseIsTakenAtOnce) {
  LeaseRecord released = Held("", "t1", 4);
  LeaseDecision d = DecideLease(released, std::nullopt, "a", kT0, "now", seconds(15));
  EXPECT_EQ(d.action, Action::kAcquire);
  EXPECT_EQ(d.record.transitions, 5);
}

TEST(LeaseJson, RoundTrips) {
  LeaseRecord r = Held("pod-1", "2026-11-22T10:00:00.123456Z", 7);
  Json lease = {{"spec", LeaseSpec(r)}};
  LeaseRecord back = ParseLease(lease);
  EXPECT_EQ(back.holder, r.holder);
  EXPECT_EQ(back.renew_time, r.renew_time);
  EXPECT_EQ(back.acquire_time, r.acquire_time);
  EXPECT_EQ(back.transitions, 7);
  EXPECT_EQ(back.lease_duration_seconds, 15);
  EXPECT_EQ(ParseLease(Json::object()).holder, "");
}

// The elector against an API that refuses its lease: the attempt fails with a message naming the
// lease and the server's answer (a missing namespace with what to do), reported once however
// often it retries, and not at all for a race lost to another candidate (409).
kube::ApiError NamespaceMissing() {
  return {404, "NotFound", "namespaces \"dljob-system\" not found"};
}

TEST(LeaderElector, ALeaseItCannotCreateSaysWhyAndWhatToDo) {
  kube::testing::FakeApi api;
  dljob::testing::FakeClock clock;
  LeaderElector elector(api, {.identity = "a"}, clock);
  api.FailNext("create", "leases", NamespaceMissing());
  EXPECT_FALSE(elector.TryAcquireOrRenew());
  EXPECT_EQ(elector.last_error(),
            "cannot create lease dljob-system/dljob-operator: 404 NotFound: namespaces "
            "\"dljob-system\" not found (create namespace dljob-system or pass --lease-namespace)");
  EXPECT_TRUE(elector.TryAcquireOrRenew());
  EXPECT_EQ(elector.last_error(), "");

  api.FailNext("get", "leases", {503, "ServiceUnavailable", "etcd is down"});
  EXPECT_FALSE(elector.TryAcquireOrRenew());
  EXPECT_EQ(elector.last_error(),
            "cannot read lease dljob-system/dljob-operator: 503 ServiceUnavailable: etcd is down");
  api.FailNext("update", "leases", {409, "Conflict", "the object has been modified"});
  EXPECT_FALSE(elector.TryAcquireOrRenew());
  EXPECT_EQ(elector.last_error(), "") << "a lost race is not an error";
}

TEST(LeaderElector, ReportsARepeatedFailureOnceThenLeadsWhenItClears) {
  kube::testing::FakeApi api;
  dljob::testing::FakeClock clock;
  LeaderElector elector(api, {.identity = "a"}, clock);
  for (int i = 0; i < 3; ++i) api.FailNext("create", "leases", NamespaceMissing());
  std::vector<std::string> errors;
  std::stop_source stop;
  bool led = false;
  elector.Run(stop.get_token(), LeaderCallbacks{
                                    .on_started_leading =
                                        [&] {
                                          led = true;
                                          stop.request_stop();
                                        },
                                    .on_stopped_leading = {},
                                    .on_new_leader = {},
                                    .on_error = [&](const std::string& e) { errors.push_back(e); },
                                });
  EXPECT_TRUE(led);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("cannot create lease dljob-system/dljob-operator: 404"),
            std::string::npos)
      << errors[0];
}

// --- The acting window: when a leader may act, and that it stops in time. ---

using kube::testing::Call;

LeaderElectionOptions Quick(const std::string& id) {
  return {.lease_namespace = "dljob-system",
          .lease_name = "dljob-operator",
          .identity = id,
          .lease_duration = seconds(15),
          .renew_deadline = seconds(10),
          .retry_period = std::chrono::milliseconds(2000)};
}

bool IsLeaseWrite(const Call& c) {
  return c.resource == "leases" && (c.verb == "create" || c.verb == "update");
}

TEST(LeaderElector, TheWindowCountsFromBeforeTheWriteWasSent) {
  kube::testing::FakeApi api;
  dljob::testing::FakeClock clock;
  // Every write of the lease takes 4 s to be answered.
  api.OnCall([&](const Call& c) {
    if (IsLeaseWrite(c)) clock.Advance(seconds(4));
  });
  LeaderElector elector(api, Quick("a"), clock);
  const SteadyTime t0 = clock.MonotonicNow();
  ASSERT_TRUE(elector.TryAcquireOrRenew());
  EXPECT_EQ(clock.MonotonicNow(), t0 + seconds(4));
  EXPECT_EQ(elector.term().ActUntil(), t0 + seconds(10)) << "counted from the answer, not the send";

  clock.Advance(seconds(1));
  ASSERT_TRUE(elector.TryAcquireOrRenew());  // renewal sent at t0 + 5 s
  EXPECT_EQ(elector.term().ActUntil(), t0 + seconds(15));
}

TEST(LeaderElector, WhileLeadingItsOwnLeaseCallsEndWithTheWindow) {
  kube::testing::FakeApi api;
  dljob::testing::FakeClock clock;
  LeaderElector elector(api, Quick("a"), clock);
  const SteadyTime t0 = clock.MonotonicNow();
  ASSERT_TRUE(elector.TryAcquireOrRenew());
  clock.Advance(seconds(2));
  ASSERT_TRUE(elector.TryAcquireOrRenew());
  std::vector<Call> calls = api.Calls();
  ASSERT_EQ(calls.size(), 4u) << ::testing::PrintToString(api.CallStrings());
  // Campaigning: no window, no deadline. Leading: the window of the last renewal.
  EXPECT_EQ(calls[0].ToString(), "get leases dljob-system/dljob-operator");
  EXPECT_EQ(calls[0].deadline, std::nullopt);
  EXPECT_EQ(calls[1].ToString(), "create leases dljob-system/dljob-operator");
  EXPECT_EQ(calls[1].deadline, std::nullopt);
  EXPECT_EQ(calls[2].ToString(), "get leases dljob-system/dljob-operator");
  EXPECT_EQ(calls[2].deadline, t0 + seconds(10));
  EXPECT_EQ(calls[3].ToString(), "update leases dljob-system/dljob-operator");
  EXPECT_EQ(calls[3].deadline, t0 + seconds(10));
  EXPECT_EQ(elector.term().ActUntil(), t0 + seconds(12));
}

// Renewals fail from the start: the leader tries every retry period, no call of its starts at or
// after the window's end, and it steps down exactly then, its term over before it says so.
TEST(LeaderElector, StepsDownWhenTheWindowEndsWithoutARenewal) {
  kube::testing::FakeApi api;
  dljob::testing::FakeClock clock;
  std::vector<SteadyTime> call_times;
  api.OnCall([&](const Call&) { call_times.push_back(clock.MonotonicNow()); });
  LeaderElector elector(api, Quick("a"), clock);
  const SteadyTime t0 = clock.MonotonicNow();
  std::optional<SteadyTime> stopped_at;
  std::optional<SteadyTime> term_when_stopped = t0;
  LeaderCallbacks callbacks{
      .on_started_leading =
          [&] {
            for (int i = 0; i < 20; ++i) {
              api.FailNext("update", "leases", {503, "ServiceUnavailable", "etcd is slow"});
            }
          },
      .on_stopped_leading =
          [&] {
            stopped_at = clock.MonotonicNow();
            term_when_stopped = elector.term().ActUntil();
          },
      .on_new_leader = {},
      .on_error = {},
  };
  std::stop_source stop;
  elector.Run(stop.get_token(), callbacks);
  ASSERT_TRUE(stopped_at);
  EXPECT_EQ(*stopped_at, t0 + seconds(10));
  EXPECT_EQ(term_when_stopped, std::nullopt);
  ASSERT_FALSE(call_times.empty());
  for (SteadyTime t : call_times) EXPECT_LT(t, t0 + seconds(10));
  // Campaign get + create, then a get and a refused update at +2, +4, +6 and +8 s.
  EXPECT_EQ(call_times.size(), 10u) << ::testing::PrintToString(api.CallStrings());
}

TEST(LeaderElector, StepsDownAtOnceWhenItFindsAnotherHolder) {
  kube::testing::FakeApi api;
  dljob::testing::FakeClock clock;
  LeaderElector elector(api, Quick("a"), clock);
  const SteadyTime t0 = clock.MonotonicNow();
  std::optional<SteadyTime> stopped_at;
  LeaderCallbacks callbacks{
      .on_started_leading =
          [&] {
            // Another replica wrote the lease (this one's clock or the server went astray).
            Json lease = *api.Object(resources::kLeases, "dljob-system", "dljob-operator");
            lease["spec"]["holderIdentity"] = "b";
            api.Put(resources::kLeases, lease);
          },
      .on_stopped_leading = [&] { stopped_at = clock.MonotonicNow(); },
      .on_new_leader = {},
      .on_error = {},
  };
  std::stop_source stop;
  elector.Run(stop.get_token(), callbacks);
  ASSERT_TRUE(stopped_at);
  EXPECT_EQ(*stopped_at, t0 + seconds(2)) << "at the first renewal, not at the window's end";
  EXPECT_EQ(elector.term().ActUntil(), std::nullopt);
}

// Stopping while leading: the term ends before the leader's work is told to stop, and the lease
// is released only after that work has stopped, within the window.
TEST(LeaderElector, OnStopTheWorkStopsFirstThenTheLeaseIsReleasedWithinTheWindow) {
  kube::testing::FakeApi api;
  dljob::testing::FakeClock clock;
  LeaderElector elector(api, Quick("a"), clock);
  const SteadyTime t0 = clock.MonotonicNow();
  std::stop_source stop;
  std::string holder_when_stopped;
  std::optional<SteadyTime> term_when_stopped = t0;
  LeaderCallbacks callbacks{
      .on_started_leading = [&] { stop.request_stop(); },
      .on_stopped_leading =
          [&] {
            term_when_stopped = elector.term().ActUntil();
            holder_when_stopped =
                ParseLease(*api.Object(resources::kLeases, "dljob-system", "dljob-operator"))
                    .holder;
          },
      .on_new_leader = {},
      .on_error = {},
  };
  elector.Run(stop.get_token(), callbacks);
  EXPECT_EQ(term_when_stopped, std::nullopt);
  EXPECT_EQ(holder_when_stopped, "a") << "released before the work stopped";
  EXPECT_EQ(ParseLease(*api.Object(resources::kLeases, "dljob-system", "dljob-operator")).holder,
            "");
  std::vector<Call> calls = api.Calls();
  ASSERT_EQ(calls.size(), 4u) << ::testing::PrintToString(api.CallStrings());
  EXPECT_EQ(calls[3].ToString(), "update leases dljob-system/dljob-operator");
  EXPECT_EQ(calls[3].deadline, t0 + seconds(10));
}

}  // namespace
}  // namespace dljob::kube
