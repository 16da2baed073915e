// AdmissionBook: what a pass's decision leaves for each job, and what a reconciler reports back.
#include "operator/controller/admission.h"

#include <gtest/gtest.h>

namespace dljob::controller {
namespace {

using scheduler::Decision;
using scheduler::WaitCause;
using Strings = std::vector<std::string>;

const WallTime kT0 = WallTime(std::chrono::seconds(1'000'000));

Decision Start(const std::string& job, std::vector<std::string> nodes) {
  Decision d;
  d.start.push_back({job, scheduler::Placement{std::move(nodes)}, false});
  return d;
}

TEST(AdmissionBookTest, AStartedJobIsAdmittedAtItsPlacementAndStaysSoWhileRunning) {
  AdmissionBook book;
  EXPECT_EQ(book.Get("ns/a").verdict, Verdict::kUnknown);
  EXPECT_EQ(book.Record(Start("ns/a", {"n1", "n2"}), {}, {}, kT0), Strings{"ns/a"});
  Admission a = book.Get("ns/a");
  EXPECT_EQ(a.verdict, Verdict::kAdmitted);
  EXPECT_EQ(a.placement.worker_nodes, (Strings{"n1", "n2"}));
  EXPECT_EQ(a.since, kT0);
  // Running in the next pass: nothing changes, the admission keeps its time.
  EXPECT_EQ(book.Record({}, {"ns/a"}, {}, kT0 + std::chrono::seconds(5)), Strings{});
  EXPECT_EQ(book.Get("ns/a").since, kT0);
  // A job found running that the book never admitted (the operator restarted) is admitted.
  EXPECT_EQ(book.Record({}, {"ns/a", "ns/b"}, {}, kT0), Strings{"ns/b"});
  EXPECT_EQ(book.Get("ns/b").verdict, Verdict::kAdmitted);
}

TEST(AdmissionBookTest, AWaitingJobCarriesTheReasonOfItsCause) {
  const std::vector<std::pair<WaitCause, std::string>> cases = {
      {WaitCause::kNoQueue, "Inadmissible"},  {WaitCause::kQuota, "QuotaExceeded"},
      {WaitCause::kRoom, "Unschedulable"},    {WaitCause::kNeverFits, "Unschedulable"},
      {WaitCause::kBehind, "WaitingInQueue"}, {WaitCause::kNotConsidered, "WaitingInQueue"},
      {WaitCause::kPreempted, "Preempted"},
  };
  for (const auto& [cause, reason] : cases) EXPECT_EQ(WaitReason(cause), reason);

  AdmissionBook book;
  Decision d;
  d.waiting.push_back({"ns/a", "needs 8 GPUs; waits for quota", WaitCause::kQuota});
  EXPECT_EQ(book.Record(d, {}, {}, kT0), Strings{"ns/a"});
  EXPECT_EQ(book.Get("ns/a").reason, "QuotaExceeded");
  EXPECT_EQ(book.Record(d, {}, {}, kT0), Strings{});  // the same: nobody to wake
  d.waiting[0].cause = WaitCause::kRoom;              // a new reason wakes it at once
  EXPECT_EQ(book.Record(d, {}, {}, kT0), Strings{"ns/a"});
  EXPECT_EQ(book.Get("ns/a").reason, "Unschedulable");
}

TEST(AdmissionBookTest, ANewMessageAloneWakesAJobAtMostOncePerRestatePeriod) {
  using std::chrono::seconds;
  AdmissionBook book(std::chrono::minutes(5), seconds(10));
  Decision d;
  d.waiting.push_back({"ns/a", "quota 20, used 20; 649 free", WaitCause::kQuota});
  EXPECT_EQ(book.Record(d, {}, {}, kT0), Strings{"ns/a"});
  EXPECT_EQ(book.RestateDue(), std::nullopt);
  // The figures change with every pass: held back (a pass that runs for another reason shows
  // the message it was woken for), and the book says when the new one falls due.
  d.waiting[0].reason = "quota 20, used 20; 630 free";
  EXPECT_EQ(book.Record(d, {}, {}, kT0 + seconds(1)), Strings{});
  EXPECT_EQ(book.Get("ns/a").message, "quota 20, used 20; 649 free");
  EXPECT_EQ(book.RestateDue(), kT0 + seconds(10));
  d.waiting[0].reason = "quota 20, used 20; 611 free";
  EXPECT_EQ(book.Record(d, {}, {}, kT0 + seconds(9)), Strings{});
  EXPECT_EQ(book.RestateDue(), kT0 + seconds(10));
  // Due: woken with the message of that pass; then held back again for a period.
  EXPECT_EQ(book.Record(d, {}, {}, kT0 + seconds(10)), Strings{"ns/a"});
  EXPECT_EQ(book.Get("ns/a").message, "quota 20, used 20; 611 free");
  EXPECT_EQ(book.RestateDue(), std::nullopt);
  d.waiting[0].reason = "quota 20, used 20; 600 free";
  EXPECT_EQ(book.Record(d, {}, {}, kT0 + seconds(11)), Strings{});
  EXPECT_EQ(book.RestateDue(), kT0 + seconds(20));
  // Back to the message it was last woken for: nothing is owed any more.
  d.waiting[0].reason = "quota 20, used 20; 611 free";
  EXPECT_EQ(book.Record(d, {}, {}, kT0 + seconds(12)), Strings{});
  EXPECT_EQ(book.RestateDue(), std::nullopt);
  // Its verdict changing is never held back.
  EXPECT_EQ(book.Record(Start("ns/a", {"n1"}), {}, {}, kT0 + seconds(13)), Strings{"ns/a"});
}

TEST(AdmissionBookTest, ManyWaitingJobsAreRestatedAtAMostTheSetRateInAll) {
  using std::chrono::seconds;
  AdmissionBook book(std::chrono::minutes(5), seconds(10), /*restates_per_second=*/20);
  Decision d;
  for (int i = 0; i < 1000; ++i) {
    d.waiting.push_back({"ns/j" + std::to_string(i), "0 free", WaitCause::kQuota});
  }
  EXPECT_EQ(book.Record(d, {}, {}, kT0).size(), 1000u);
  for (auto& w : d.waiting) w.reason = "1 free";
  // 1,000 waiting at 20 a second: each message waits 50 s, not 10.
  EXPECT_EQ(book.Record(d, {}, {}, kT0 + seconds(10)).size(), 0u);
  EXPECT_EQ(book.RestateDue(), kT0 + seconds(50));
  EXPECT_EQ(book.Record(d, {}, {}, kT0 + seconds(50)).size(), 1000u);
}

TEST(AdmissionBookTest, APreemptionHoldsUntilTheReconcilerHasSuspendedTheJob) {
  AdmissionBook book;
  book.Record(Start("ns/low", {"n1"}), {}, {}, kT0);
  Decision d = Start("ns/high", {"n1"});
  d.preempt.push_back({"ns/low", "ns/high", "suspended for ns/high (priority 10 > 0)"});
  d.waiting.push_back({"ns/low", "suspended for ns/high", WaitCause::kPreempted});
  EXPECT_EQ(book.Record(d, {}, {}, kT0), (Strings{"ns/high", "ns/low"}));
  EXPECT_EQ(book.Get("ns/low").verdict, Verdict::kPreempt);
  EXPECT_EQ(book.Get("ns/low").message, "suspended for ns/high (priority 10 > 0)");

  // Passes before the reconciler acts: leaving, or waiting in the queue, or even seen running
  // again — the preemption stands.
  book.Record({}, {"ns/high"}, {"ns/low"}, kT0);
  EXPECT_EQ(book.Get("ns/low").verdict, Verdict::kPreempt);
  Decision waits;
  waits.waiting.push_back({"ns/low", "waits for room", WaitCause::kRoom});
  book.Record(waits, {"ns/high"}, {}, kT0);
  EXPECT_EQ(book.Get("ns/low").verdict, Verdict::kPreempt);
  book.Record({}, {"ns/high", "ns/low"}, {}, kT0);
  EXPECT_EQ(book.Get("ns/low").verdict, Verdict::kPreempt);

  book.Preempted("ns/low", "suspended; it starts over");
  Admission low = book.Get("ns/low");
  EXPECT_EQ(low.verdict, Verdict::kWaiting);
  EXPECT_EQ(low.reason, "Preempted");
  EXPECT_EQ(low.message, "suspended; it starts over");
  book.Preempted("ns/high", "x");  // not asked to: ignored
  EXPECT_EQ(book.Get("ns/high").verdict, Verdict::kAdmitted);
}

TEST(AdmissionBookTest, JobsNoPassMentionsAreForgottenAndWoken) {
  AdmissionBook book;
  book.Record(Start("ns/a", {"n1"}), {}, {}, kT0);
  EXPECT_EQ(book.Record({}, {}, {}, kT0), Strings{"ns/a"});
  EXPECT_EQ(book.Get("ns/a").verdict, Verdict::kUnknown);
  EXPECT_TRUE(book.All().empty());
}

TEST(AdmissionBookTest, AnAdmissionLapsesAfterItsTtl) {
  AdmissionBook book(std::chrono::minutes(5));
  book.Record(Start("ns/a", {"n1"}), {}, {}, kT0);
  Admission a = book.Get("ns/a");
  EXPECT_FALSE(book.Lapsed(a, kT0 + std::chrono::minutes(5)));
  EXPECT_TRUE(book.Lapsed(a, kT0 + std::chrono::minutes(5) + std::chrono::seconds(1)));
  Decision d;
  d.waiting.push_back({"ns/b", "w", WaitCause::kRoom});
  book.Record(d, {}, {}, kT0);
  EXPECT_FALSE(book.Lapsed(book.Get("ns/b"), kT0 + std::chrono::hours(1)));  // only admissions
}

}  // namespace
}  // namespace dljob::controller
