// Leadership cannot overlap, shown where only the test server can show it: two dljob-operator
// replicas with short lease settings run a job; then every API request of the leader is made
// slower than the time left on its lease (a latency aimed at its User-Agent), so it cannot renew.
// The standby takes over, and the server's log of applied writes (/_test/writes) must show no
// write of the old leader after the new leader's first: every call the leader makes is bounded
// by its lease's acting window and carries the time left as the server's `timeout`, so the slow
// writes are dropped by the server (504) instead of landing late. Without that fence the old
// leader's delayed status writes would be applied kLatency after it sent them, seconds after the
// takeover; so the log is read only kLatency after the old leader has exited, when every request
// it sent has been served or dropped. Leadership moves kTakeovers times per run, a fresh standby
// started after each.
#include <algorithm>
#include <map>
#include <thread>

#include <gtest/gtest.h>

#include "tests/operator/e2e_fixture.h"

namespace dljob::testing {
namespace {

using kube::resources::kDLJobs;

constexpr int kTakeovers = 2;
// Longer than the acting window (--renew-deadline=3), short enough to wait out.
constexpr std::chrono::seconds kLatency{8};

std::string UserAgentOf(const std::string& identity) { return "dljob-operator/" + identity; }

// Whether `w` is a throughput update of the job (the log collector's merge patch of its status):
// a leader that made one follows the launcher's log and keeps writing as lines arrive.
bool IsThroughputWrite(const AppliedWrite& w) {
  return w.method == "PATCH" && w.target.find("/dljobs/steady/status") != std::string::npos;
}

TEST_F(OperatorE2eTest, ALeaderTooSlowToRenewWritesNothingAfterTheNewLeadersFirstWrite) {
  StartCluster({.nodes = 1, .kubelet_delay_ms = 0});
  std::map<std::string, OperatorProcess*> replicas;  // by identity
  int started = 0;
  auto start_replica = [&] {
    std::string id = "replica-" + std::to_string(++started);
    replicas[id] = &StartOperator({"--leader-elect=true", "--identity=" + id, "--lease-duration=4",
                                   "--renew-deadline=3", "--retry-period=1"});
    return id;
  };
  start_replica();
  start_replica();
  std::string leader;
  ASSERT_TRUE(WaitFor([&] { return replicas.count(leader = LeaseHolder(api())) > 0; }, kWait));
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("steady", 2, 1)).ok());
  ASSERT_TRUE(WaitForPhase(api(), "steady", "Running", kWait)) << Describe(api(), "steady");

  // Progress lines all along, so that whoever leads keeps writing the job's throughput.
  int step = 0;
  Repeating talker(
      [&] {
        ++step;
        (void)cluster_->Say("steady", 0, MetricReport(0, step, 1000 + step, 2));
      },
      std::chrono::milliseconds(150));

  for (int round = 1; round <= kTakeovers; ++round) {
    SCOPED_TRACE("takeover " + std::to_string(round) + ", from " + leader);
    // The leader is writing: a throughput update of its since it took over.
    ASSERT_TRUE(WaitFor(
        [&] {
          Result<std::vector<AppliedWrite>> writes = control().Writes();
          if (!writes.ok()) return false;
          return std::any_of(writes->begin(), writes->end(), [&](const AppliedWrite& w) {
            return w.user_agent == UserAgentOf(leader) && IsThroughputWrite(w);
          });
        },
        kWait))
        << replicas[leader]->Log();

    // From now on the leader's requests wait kLatency before the server serves them.
    const int latency_ms = static_cast<int>(std::chrono::milliseconds(kLatency).count());
    ASSERT_TRUE(control().SetLatency({latency_ms, UserAgentOf(leader), "", ""}).ok());
    std::string next;
    ASSERT_TRUE(WaitFor(
        [&] {
          next = LeaseHolder(api());
          return !next.empty() && next != leader;
        },
        kWait))
        << replicas[leader]->Log();
    ASSERT_EQ(replicas.count(next), 1u) << next;
    // It stepped down by itself, and exits so that a fresh process takes its place.
    ASSERT_EQ(replicas[leader]->Wait(kWait), 1) << replicas[leader]->Log();
    const auto exited_at = std::chrono::steady_clock::now();
    EXPECT_NE(replicas[leader]->Log().find("lost the lease"), std::string::npos)
        << replicas[leader]->Log();

    // The new leader writes (the job's throughput, at least)...
    Result<std::vector<AppliedWrite>> writes = std::vector<AppliedWrite>{};
    std::this_thread::sleep_until(exited_at + kLatency + std::chrono::seconds(1));
    ASSERT_TRUE(WaitFor(
        [&] {
          writes = control().Writes();
          return writes.ok() &&
                 std::any_of(writes->begin(), writes->end(), [&](const AppliedWrite& w) {
                   return w.user_agent == UserAgentOf(next) && IsThroughputWrite(w);
                 });
        },
        kWait));
    // ...and nothing of the old leader's landed after its first write (the lease taken over).
    auto first_new = std::find_if(writes->begin(), writes->end(), [&](const AppliedWrite& w) {
      return w.user_agent == UserAgentOf(next);
    });
    ASSERT_NE(first_new, writes->end());
    for (auto w = first_new; w != writes->end(); ++w) {
      EXPECT_NE(w->user_agent, UserAgentOf(leader))
          << "#" << w->seq << " " << w->method << " " << w->target << " at " << w->applied_at
          << ", after the new leader's first write #" << first_new->seq << " at "
          << first_new->applied_at;
    }
    if (HasFailure()) return;
    leader = next;
    start_replica();  // the next standby
  }
}

}  // namespace
}  // namespace dljob::testing
