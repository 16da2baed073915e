#include "operator/controller/leader_election.h"

#include <gtest/gtest.h>

namespace dljob::controller {
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
  kube::Json lease = {{"spec", LeaseSpec(r)}};
  LeaseRecord back = ParseLease(lease);
  EXPECT_EQ(back.holder, r.holder);
  EXPECT_EQ(back.renew_time, r.renew_time);
  EXPECT_EQ(back.acquire_time, r.acquire_time);
  EXPECT_EQ(back.transitions, 7);
  EXPECT_EQ(back.lease_duration_seconds, 15);
  EXPECT_EQ(ParseLease(kube::Json::object()).holder, "");
}

}  // namespace
}  // namespace dljob::controller
