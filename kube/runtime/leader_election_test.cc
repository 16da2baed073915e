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

}  // namespace
}  // namespace dljob::kube
