// LeaderTerm (the acting window) and FencedApi (the leader's calls bounded by it), over a FakeApi
// that records each call's deadline and a FakeClock.
#include "kube/runtime/fenced_api.h"

#include <gtest/gtest.h>

#include "base/testing/fake_clock.h"
#include "kube/runtime/leader_term.h"
#include "kube/testing/fake_api.h"

namespace dljob::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(ActingWindowEnd, IsTheRenewDeadlineAfterTheSend) {
  const Clock::MonotonicTime t0 = Clock::MonotonicTime() + std::chrono::hours(7);
  EXPECT_EQ(ActingWindowEnd(t0, seconds(10)), t0 + seconds(10));
  EXPECT_EQ(ActingWindowEnd(t0, milliseconds(2500)), t0 + milliseconds(2500));
}

TEST(LeaderTerm, RunsFromEachRenewalNeverBackwardsAndEnds) {
  dljob::testing::FakeClock clock;
  const Clock::MonotonicTime t0 = clock.MonotonicNow();
  LeaderTerm term;
  EXPECT_EQ(term.ActUntil(), std::nullopt);
  EXPECT_EQ(term.Refusal(t0), "not the leader: the lease is not held");

  EXPECT_FALSE(term.MayAct(t0));
  term.Renewed(t0, seconds(3));
  EXPECT_EQ(term.ActUntil(), t0 + seconds(3));
  EXPECT_EQ(term.Refusal(t0 + milliseconds(2999)), "");
  EXPECT_TRUE(term.MayAct(t0 + milliseconds(2999)));
  EXPECT_FALSE(term.MayAct(t0 + seconds(3)));
  term.Renewed(t0 + seconds(1), seconds(3));
  EXPECT_EQ(term.ActUntil(), t0 + seconds(4));
  // A renewal sent earlier that answered only now does not pull the window back.
  term.Renewed(t0 + milliseconds(500), seconds(3));
  EXPECT_EQ(term.ActUntil(), t0 + seconds(4));
  EXPECT_EQ(term.Refusal(t0 + milliseconds(4500)),
            "not the leader: the lease was last renewed 3.500 s ago and may be taken over");

  term.End();
  EXPECT_EQ(term.ActUntil(), std::nullopt);
  EXPECT_EQ(term.Refusal(t0 + seconds(1)), "not the leader: the lease is not held");
  term.Renewed(t0 + seconds(5), seconds(3));  // leading again: a fresh window
  EXPECT_EQ(term.ActUntil(), t0 + seconds(8));
}

class FencedApiTest : public ::testing::Test {
 protected:
  kube::testing::FakeApi fake_;
  dljob::testing::FakeClock clock_;
  LeaderTerm term_;
  FencedApi api_{fake_, term_, clock_};
};

TEST_F(FencedApiTest, NotLeadingSendsNothing) {
  ApiResult<Json> r = api_.Create(resources::kPods, "a", {{"metadata", {{"name", "p"}}}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http, 0);
  EXPECT_EQ(r.error().reason, kReasonDeadline);
  EXPECT_EQ(r.error().ToString(), "not the leader: the lease is not held");
  EXPECT_TRUE(fake_.Calls().empty());
}

// Every kind of call, while the window lasts, reaches the API bounded by the window's end; once it
// has ended, none does.
TEST_F(FencedApiTest, EveryCallCarriesTheWindowAndNoneStartsAfterIt) {
  const Clock::MonotonicTime sent = clock_.MonotonicNow();
  term_.Renewed(sent, seconds(3));
  Json pod = {{"metadata", {{"name", "p"}, {"namespace", "a"}}}};
  // Each call's error reason, "" when it succeeded (FakeApi keeps no logs: Logs is a 404).
  auto all_calls = [&] {
    std::vector<std::string> reasons;
    auto note = [&](const auto& result) {
      reasons.push_back(result.ok() ? "" : result.error().reason);
    };
    note(api_.Create(resources::kPods, "a", pod));
    note(api_.Get(resources::kPods, "a", "p"));
    note(api_.List(resources::kPods, "a", {}));
    note(api_.Replace(resources::kPods, "a", pod));
    note(api_.ReplaceStatus(resources::kPods, "a", pod));
    note(api_.MergePatch(resources::kPods, "a", "p", {{"spec", Json::object()}}));
    note(api_.Bind("a", "p", "node-1"));
    note(api_.Watch(resources::kPods, "a", {}));
    note(api_.Logs("a", "p", {}));
    note(api_.Delete(resources::kPods, "a", "p"));
    return reasons;
  };
  std::vector<std::string> reasons = all_calls();
  std::vector<std::string> want(10, "");
  want[8] = "NotFound";
  EXPECT_EQ(reasons, want);
  std::vector<kube::testing::Call> calls = fake_.Calls();
  ASSERT_EQ(calls.size(), 10u);
  for (const kube::testing::Call& c : calls) {
    EXPECT_EQ(c.deadline, sent + seconds(3)) << c.ToString();
  }

  fake_.ClearCalls();
  clock_.Advance(seconds(3));  // the window's end: nothing may start now
  EXPECT_EQ(all_calls(), std::vector<std::string>(10, kReasonDeadline));
  EXPECT_EQ(fake_.CallStrings(), std::vector<std::string>{});
  ApiResult<Json> late = api_.Get(resources::kPods, "a", "p");
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().reason, kReasonDeadline);
  EXPECT_EQ(late.error().message,
            "not the leader: the lease was last renewed 3.000 s ago and may be taken over");
}

TEST_F(FencedApiTest, ARenewalMovesTheNextCallsDeadline) {
  const Clock::MonotonicTime t0 = clock_.MonotonicNow();
  term_.Renewed(t0, seconds(3));
  ASSERT_TRUE(api_.List(resources::kPods, "", {}).ok());
  clock_.Advance(seconds(2));
  term_.Renewed(t0 + seconds(2), seconds(3));
  ASSERT_TRUE(api_.List(resources::kPods, "", {}).ok());
  std::vector<kube::testing::Call> calls = fake_.Calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].deadline, t0 + seconds(3));
  EXPECT_EQ(calls[1].deadline, t0 + seconds(5));
}

TEST_F(FencedApiTest, AViewKeepsTheEarlierOfItsDeadlineAndTheWindow) {
  const Clock::MonotonicTime t0 = clock_.MonotonicNow();
  term_.Renewed(t0, seconds(3));
  std::unique_ptr<Api> sooner = api_.WithDeadline(t0 + seconds(1));
  std::unique_ptr<Api> later = api_.WithDeadline(t0 + seconds(9));
  ASSERT_TRUE(sooner->List(resources::kPods, "", {}).ok());
  ASSERT_TRUE(later->List(resources::kPods, "", {}).ok());
  std::vector<kube::testing::Call> calls = fake_.Calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].deadline, t0 + seconds(1));
  EXPECT_EQ(calls[1].deadline, t0 + seconds(3));
  clock_.Advance(seconds(1));
  EXPECT_FALSE(sooner->List(resources::kPods, "", {}).ok());
  EXPECT_EQ(fake_.Calls().size(), 2u);
}

}  // namespace
}  // namespace dljob::kube
