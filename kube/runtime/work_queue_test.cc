#include "kube/runtime/work_queue.h"

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/mutex.h"
#include "base/testing/fake_clock.h"
#include "testing/wait.h"

namespace dljob::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class WorkQueueTest : public ::testing::Test {
 protected:
  dljob::testing::FakeClock clock_;
  WorkQueue queue_{clock_, WorkQueueOptions{milliseconds(5), seconds(1), milliseconds(200)}};
};

TEST_F(WorkQueueTest, CollapsesDuplicatesAndKeepsOrder) {
  queue_.Add("ns/a");
  queue_.Add("ns/b");
  queue_.Add("ns/a");
  EXPECT_EQ(queue_.Len(), 2u);
  EXPECT_EQ(queue_.TryGet(), "ns/a");
  EXPECT_EQ(queue_.TryGet(), "ns/b");
  EXPECT_EQ(queue_.TryGet(), std::nullopt);
}

TEST_F(WorkQueueTest, FollowUpsGoFirstButNeverStarveTheNormalLane) {
  for (const char* key : {"ns/n1", "ns/n2", "ns/f1"}) queue_.Add(key);
  queue_.Add("ns/f1", Lane::kFollowUp);  // moves ahead of n1 and n2
  for (int i = 2; i <= 6; ++i) queue_.Add("ns/f" + std::to_string(i), Lane::kFollowUp);
  queue_.Add("ns/f2");  // already a follow-up: stays one
  EXPECT_EQ(queue_.Len(), 8u);
  std::vector<std::string> order;
  while (std::optional<std::string> key = queue_.TryGet()) order.push_back(*key);
  EXPECT_EQ(order, (std::vector<std::string>{"ns/f1", "ns/f2", "ns/f3", "ns/f4", "ns/n1", "ns/f5",
                                             "ns/f6", "ns/n2"}));
}

// The follow-up lane hands out the key that first became a follow-up earliest: the job admitted
// first takes each next step first, rather than queueing behind every job admitted after it.
TEST_F(WorkQueueTest, FollowUpsGoOldestFirst) {
  for (const char* key : {"ns/a", "ns/b", "ns/c"}) queue_.Add(key, Lane::kFollowUp);
  ASSERT_EQ(queue_.TryGet(), "ns/a");
  queue_.Done("ns/a");
  ASSERT_EQ(queue_.TryGet(), "ns/b");
  queue_.Done("ns/b");
  queue_.Add("ns/d", Lane::kFollowUp);
  queue_.Add("ns/b", Lane::kFollowUp);  // b's next step: ahead of c and d, which came later
  queue_.Add("ns/a", Lane::kFollowUp);  // a's: ahead of all
  std::vector<std::string> order;
  while (std::optional<std::string> key = queue_.TryGet()) {
    order.push_back(*key);
    queue_.Done(*key);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"ns/a", "ns/b", "ns/c", "ns/d"}));
  EXPECT_EQ(queue_.Ordered(), 4u);
  queue_.ForgetOrder("ns/a");  // deleted; made again under the same name, it is the newest
  EXPECT_EQ(queue_.Ordered(), 3u);
  queue_.Add("ns/d", Lane::kFollowUp);
  queue_.Add("ns/a", Lane::kFollowUp);
  EXPECT_EQ(queue_.TryGet(), "ns/d");
  EXPECT_EQ(queue_.TryGet(), "ns/a");
}

TEST_F(WorkQueueTest, AFailedKeyComesBackAsAFollowUp) {
  queue_.Add("ns/a");
  ASSERT_EQ(queue_.TryGet(), "ns/a");
  queue_.AddRateLimited("ns/a");
  queue_.Done("ns/a");
  queue_.Add("ns/b");
  queue_.AddAfter("ns/c", milliseconds(5));  // a timed requeue is not: it joins the normal lane
  clock_.Advance(milliseconds(5));
  queue_.Add("ns/d");
  std::vector<std::string> order;
  while (std::optional<std::string> key = queue_.TryGet()) order.push_back(*key);
  EXPECT_EQ(order, (std::vector<std::string>{"ns/a", "ns/b", "ns/d", "ns/c"}));
}

TEST_F(WorkQueueTest, NeverHandsOutAKeyBeingProcessedButProcessesItAgainAfter) {
  queue_.Add("ns/a");
  ASSERT_EQ(queue_.TryGet(), "ns/a");
  queue_.Add("ns/a");  // changed while a worker holds it
  queue_.Add("ns/a");
  EXPECT_EQ(queue_.Len(), 0u);
  EXPECT_EQ(queue_.TryGet(), std::nullopt);
  queue_.Done("ns/a");
  EXPECT_EQ(queue_.TryGet(), "ns/a");  // once, not twice
  queue_.Done("ns/a");
  EXPECT_EQ(queue_.TryGet(), std::nullopt);
}

TEST_F(WorkQueueTest, BacksOffFailuresExponentiallyPerKeyUntilForgotten) {
  queue_.AddRateLimited("ns/a");  // 5ms
  EXPECT_EQ(queue_.TryGet(), std::nullopt);
  clock_.Advance(milliseconds(4));
  EXPECT_EQ(queue_.TryGet(), std::nullopt);
  clock_.Advance(milliseconds(1));
  ASSERT_EQ(queue_.TryGet(), "ns/a");
  queue_.Done("ns/a");
  queue_.AddRateLimited("ns/a");  // 10ms
  clock_.Advance(milliseconds(9));
  EXPECT_EQ(queue_.TryGet(), std::nullopt);
  queue_.Add("ns/b");  // other keys are not held back
  EXPECT_EQ(queue_.TryGet(), "ns/b");
  clock_.Advance(milliseconds(1));
  ASSERT_EQ(queue_.TryGet(), "ns/a");
  queue_.Done("ns/a");
  EXPECT_EQ(queue_.Failures("ns/a"), 2);
  queue_.Forget("ns/a");
  EXPECT_EQ(queue_.Failures("ns/a"), 0);
  queue_.AddRateLimited("ns/a");
  clock_.Advance(milliseconds(5));
  EXPECT_EQ(queue_.TryGet(), "ns/a");
}

TEST_F(WorkQueueTest, CapsTheBackoff) {
  for (int i = 0; i < 20; ++i) queue_.AddRateLimited("ns/a");
  clock_.Advance(seconds(1));  // 5ms × 2^19 would be 45 minutes; the cap is 1s
  EXPECT_EQ(queue_.TryGet(), "ns/a");
}

TEST_F(WorkQueueTest, AddAfterKeepsTheEarliestTimeAndAnAddMakesItReadyNow) {
  queue_.AddAfter("ns/a", seconds(10));
  queue_.AddAfter("ns/a", seconds(1));
  queue_.AddAfter("ns/a", seconds(5));
  clock_.Advance(seconds(1));
  ASSERT_EQ(queue_.TryGet(), "ns/a");
  queue_.Done("ns/a");
  clock_.Advance(seconds(10));
  EXPECT_EQ(queue_.TryGet(), std::nullopt);  // the later times collapsed into the first

  queue_.AddAfter("ns/b", seconds(60));
  queue_.Add("ns/b");
  ASSERT_EQ(queue_.TryGet(), "ns/b");
  queue_.Done("ns/b");
  clock_.Advance(seconds(60));
  EXPECT_EQ(queue_.TryGet(), std::nullopt);
}

// Delayed keys come due in the order of their times, whatever order they were added in, and only
// those due: thousands may wait at once (work_queue_bench measures a trip with 15,000 waiting).
TEST_F(WorkQueueTest, DelayedKeysComeDueInTheirOrderAndOnlyWhenDue) {
  queue_.AddAfter("ns/c", seconds(3));
  queue_.AddAfter("ns/a", seconds(1));
  queue_.AddAfter("ns/b", seconds(2));
  queue_.AddAfter("ns/d", seconds(9));
  queue_.AddAfter("ns/d", milliseconds(2500));  // earlier: moves ahead of c
  EXPECT_EQ(queue_.TryGet(), std::nullopt);
  clock_.Advance(milliseconds(2600));
  std::vector<std::string> got;
  while (std::optional<std::string> key = queue_.TryGet()) {
    got.push_back(*key);
    queue_.Done(*key);
  }
  EXPECT_EQ(got, (std::vector<std::string>{"ns/a", "ns/b", "ns/d"}));
  clock_.Advance(milliseconds(400));
  EXPECT_EQ(queue_.TryGet(), "ns/c");
  queue_.Done("ns/c");
  clock_.Advance(seconds(60));
  EXPECT_EQ(queue_.TryGet(), std::nullopt);  // d's later time went with its earlier one
}

TEST_F(WorkQueueTest, ShutDownWakesBlockedWorkers) {
  std::vector<std::thread> workers;
  std::atomic<int> woke{0};
  for (int i = 0; i < 3; ++i) {
    workers.emplace_back([&] {
      EXPECT_EQ(queue_.Get(), std::nullopt);
      ++woke;
    });
  }
  queue_.ShutDown();
  for (std::thread& t : workers) t.join();
  EXPECT_EQ(woke.load(), 3);
  queue_.Add("ns/a");
  EXPECT_EQ(queue_.TryGet(), std::nullopt);
  EXPECT_TRUE(queue_.ShuttingDown());
}

// What the workers below share: how many of them hold each key now, and how often each was
// processed.
struct Tally {
  Mutex mu;
  std::map<std::string, int> in_flight GUARDED_BY(mu);
  std::map<std::string, int> processed GUARDED_BY(mu);
};

TEST(WorkQueue, ManyWorkersNeverProcessOneKeyConcurrently) {
  WorkQueue queue(RealClock());
  constexpr int kKeys = 8;
  constexpr int kAddsPerKey = 200;
  Tally tally;
  std::atomic<bool> overlap{false};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      while (std::optional<std::string> key = queue.Get()) {
        {
          MutexLock lock(tally.mu);
          if (++tally.in_flight[*key] > 1) overlap = true;
          tally.processed[*key]++;
        }
        std::this_thread::yield();
        {
          MutexLock lock(tally.mu);
          --tally.in_flight[*key];
        }
        queue.Done(*key);
      }
    });
  }
  for (int i = 0; i < kAddsPerKey; ++i) {
    for (int k = 0; k < kKeys; ++k) {
      queue.Add("ns/" + std::to_string(k));
    }
  }
  EXPECT_TRUE(dljob::testing::Eventually([&] {
    MutexLock lock(tally.mu);
    bool done = true;
    for (int k = 0; k < kKeys; ++k) done = done && tally.processed["ns/" + std::to_string(k)] > 0;
    return done;
  }));
  queue.ShutDown();
  for (std::thread& t : workers) t.join();
  EXPECT_FALSE(overlap.load());
}

}  // namespace
}  // namespace dljob::kube
