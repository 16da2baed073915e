#include "scheduler/queue/quota.h"

#include <gtest/gtest.h>

namespace dljob::scheduler {
namespace {

TEST(QuotaLedger, ChargesTheProductEntryElseTheAnyEntry) {
  QuotaLedger q({{"b", {{"V100", {8, 0}}}}, {"a", {{"A100", {8, 0}}, {"", {4, 0}}}}});
  const auto a_a100 = q.AccountFor("a", "A100");
  const auto a_any = q.AccountFor("a", "");
  ASSERT_TRUE(a_a100 && a_any);
  EXPECT_NE(*a_a100, *a_any);
  EXPECT_EQ(q.AccountFor("a", "T4"), a_any);
  EXPECT_EQ(q.Nominal(*a_a100), 8);
  EXPECT_EQ(q.Nominal(*a_any), 4);
  EXPECT_TRUE(q.SameQueue(*a_a100, *a_any));
  EXPECT_FALSE(q.SamePool(*a_a100, *a_any));
  EXPECT_TRUE(q.SamePool(*a_a100, *q.AccountFor("b", "V100")) == false);
  EXPECT_EQ(q.AccountFor("b", "A100"), std::nullopt);
  EXPECT_EQ(q.AccountFor("nope", "A100"), std::nullopt);
  EXPECT_FALSE(q.HasQueue("nope"));
  EXPECT_TRUE(q.HasQueue("b"));
  EXPECT_EQ(q.QueueNames(), "a, b");
}

// The table of Check: a's nominal 8 with borrowing limit 4, b's nominal 8; a's use, b's use,
// a's request, and the answer.
TEST(QuotaLedger, NominalThenIdleQuotaWithinTheBorrowingLimit) {
  struct Case {
    int64_t a_used, b_used, gpus;
    std::optional<std::string> want;
  };
  const Case cases[] = {
      {0, 0, 8, std::nullopt},  // within nominal
      {0, 8, 8, std::nullopt},  // within nominal whatever b does
      {8, 0, 4, std::nullopt},  // borrows 4 of b's idle 8
      {8, 0, 5, ""},            // beyond the borrowing limit
      {8, 6, 4, "borrowing 4 needs idle quota of other queues, which have 2"},
      {8, 4, 4, std::nullopt},  // exactly b's idle 4
      {4, 8, 8, "borrowing 4 needs idle quota of other queues, which have 0"},
      {12, 0, 1, ""},
  };
  for (const Case& c : cases) {
    QuotaLedger q({{"a", {{"", {8, 4}}}}, {"b", {{"", {8, 0}}}}});
    const size_t a = *q.AccountFor("a", ""), b = *q.AccountFor("b", "");
    q.Charge(a, c.a_used);
    q.Charge(b, c.b_used);
    EXPECT_EQ(q.Check(a, c.gpus), c.want)
        << "a used " << c.a_used << ", b used " << c.b_used << ", asks " << c.gpus;
  }
}

TEST(QuotaLedger, FreedQuotaCountsAsReleased) {
  QuotaLedger q({{"a", {{"", {8, 8}}}}, {"b", {{"", {8, 0}}}}, {"c", {{"", {0, 8}}}}});
  const size_t a = *q.AccountFor("a", ""), b = *q.AccountFor("b", ""), c = *q.AccountFor("c", "");
  q.Charge(a, 16);
  EXPECT_TRUE(q.Borrowing(a));
  // b's nominal is its own whatever others borrow (the queue reclaims it by preemption).
  EXPECT_EQ(q.Check(b, 8), std::nullopt);
  // c only borrows, and a took all there was; it fits once a gives 8 back.
  EXPECT_EQ(q.Check(c, 8), "borrowing 8 needs idle quota of other queues, which have 0");
  EXPECT_EQ(q.Check(c, 8, {{a, 8}}), std::nullopt);
  q.Release(a, 8);
  EXPECT_FALSE(q.Borrowing(a));
  EXPECT_EQ(q.Used(a), 8);
}

// Cohort ml: a (nominal 8, borrows up to 8) and b (8). The default cohort: c (8) and d (only
// borrows, up to 8). Each borrows only idle quota of its own cohort, of the same product.
TEST(QuotaLedger, QueuesBorrowOnlyWithinTheirCohort) {
  QuotaLedger q({{"a", {{"", {8, 8}}}, "ml"},
                 {"b", {{"", {8, 0}}}, "ml"},
                 {"c", {{"", {8, 0}}}},
                 {"d", {{"", {0, 8}}}}});
  const size_t a = *q.AccountFor("a", ""), b = *q.AccountFor("b", ""), c = *q.AccountFor("c", ""),
               d = *q.AccountFor("d", "");
  EXPECT_TRUE(q.SamePool(a, b));
  EXPECT_TRUE(q.SamePool(c, d));
  EXPECT_FALSE(q.SamePool(a, c));
  EXPECT_FALSE(q.SamePool(b, d));
  EXPECT_EQ(q.CohortOf(a), q.CohortOf(b));
  EXPECT_NE(q.CohortOf(a), q.CohortOf(c));

  q.Charge(a, 8);
  q.Charge(b, 8);
  // c's 8 are idle, but in another cohort: a cannot borrow them.
  EXPECT_EQ(q.Check(a, 4),
            "borrowing 4 needs idle quota of other queues in cohort ml, which have 0");
  // d can, though ml's queues are full; its message names no cohort (the default one).
  EXPECT_EQ(q.Check(d, 8), std::nullopt);
  q.Charge(c, 4);
  EXPECT_EQ(q.Check(d, 8), "borrowing 8 needs idle quota of other queues, which have 4");
  // Once b gives its 8 back, a borrows them.
  q.Release(b, 8);
  EXPECT_EQ(q.Check(a, 8), std::nullopt);
  EXPECT_EQ(q.Check(a, 9), "");  // beyond a's borrowing limit
  // What a queue of another cohort frees does not count for a.
  q.Charge(b, 8);
  EXPECT_EQ(q.Check(a, 4, {{c, 4}}),
            "borrowing 4 needs idle quota of other queues in cohort ml, which have 0");
  EXPECT_EQ(q.Check(a, 4, {{b, 4}}), std::nullopt);
}

// A product's quota is pooled per cohort: ml's A100s and the default cohort's are apart.
TEST(QuotaLedger, OneProductPooledPerCohort) {
  QuotaLedger q({{"a", {{"A100", {0, 16}}}, "ml"},
                 {"b", {{"A100", {8, 0}}, {"", {8, 0}}}, "ml"},
                 {"c", {{"A100", {16, 0}}}}});
  const size_t a = *q.AccountFor("a", "A100");
  EXPECT_FALSE(q.SamePool(a, *q.AccountFor("c", "A100")));
  EXPECT_FALSE(q.SamePool(a, *q.AccountFor("b", "")));  // another product
  EXPECT_EQ(q.Check(a, 8), std::nullopt);               // b's idle A100s
  EXPECT_EQ(q.Check(a, 9),
            "borrowing 9 needs idle quota of other queues in cohort ml, which have 8");
}

TEST(QuotaLedger, UnlimitedQueuesNeverWait) {
  QuotaLedger q({UnlimitedQueue("x"), UnlimitedQueue("y"), UnlimitedQueue()});
  const size_t x = *q.AccountFor("x", "A100");
  q.Charge(x, 1'000'000);
  EXPECT_EQ(q.Check(x, 1'000'000), std::nullopt);
  EXPECT_FALSE(q.Borrowing(x));
  EXPECT_EQ(q.Describe(x), "");
  EXPECT_EQ(QuotaString(kUnlimited), "unlimited");
}

TEST(QuotaLedger, DescribeNamesQuotaBorrowingAndUse) {
  QuotaLedger q({{"a", {{"A100", {32, 8}}}}});
  q.Charge(*q.AccountFor("a", "A100"), 24);
  EXPECT_EQ(q.Describe(*q.AccountFor("a", "A100")), "quota 32 + borrowing 8, used 24");
}

}  // namespace
}  // namespace dljob::scheduler
