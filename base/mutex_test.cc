#include "base/mutex.h"

#include <chrono>
#include <condition_variable>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace dljob {
namespace {

// The annotations are checked at compile time (scripts/ci/check-sanitizers.sh also proves that an
// unguarded access fails to compile); these tests check that the wrapper locks for real.

class Counter {
 public:
  void Add() {
    MutexLock lock(mu_);
    int seen = n_;
    std::this_thread::yield();  // widen the window a missing lock would lose updates in
    n_ = seen + 1;
  }
  int Get() {
    MutexLock lock(mu_);
    return n_;
  }

 private:
  Mutex mu_;
  int n_ GUARDED_BY(mu_) = 0;
};

TEST(Mutex, MutexLockExcludesOtherThreads) {
  Counter c;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) c.Add();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.Get(), 8000);
}

TEST(Mutex, TryLockFailsWhileHeldAndSucceedsAfter) {
  Mutex mu;
  mu.Lock();
  bool got = false;
  std::thread([&] {
    if (mu.TryLock()) {
      got = true;
      mu.Unlock();
    }
  }).join();
  EXPECT_FALSE(got);
  mu.Unlock();
  if (mu.TryLock()) {
    mu.Unlock();
  } else {
    ADD_FAILURE() << "TryLock failed on a free mutex";
  }
}

// GUARDED_BY applies to members, so the waits below use a small struct.
struct Flag {
  Mutex mu;
  std::condition_variable_any cv;
  bool ready GUARDED_BY(mu) = false;
  int woken GUARDED_BY(mu) = 0;
};

TEST(Mutex, ConditionVariableAnyReleasesTheMutexWhileWaiting) {
  Flag f;
  std::thread waiter([&] {
    MutexLock lock(f.mu);
    while (!f.ready) f.cv.wait(f.mu);
    ++f.woken;
  });
  {
    MutexLock lock(f.mu);  // taken while the waiter waits: proves wait() released it
    f.ready = true;
  }
  f.cv.notify_all();
  waiter.join();
  MutexLock lock(f.mu);
  EXPECT_EQ(f.woken, 1);
}

TEST(Mutex, WaitForWithAnnotatedPredicateTimesOut) {
  Flag f;
  MutexLock lock(f.mu);
  EXPECT_FALSE(
      f.cv.wait_for(f.mu, std::chrono::milliseconds(10), [&]() REQUIRES(f.mu) { return f.ready; }));
}

}  // namespace
}  // namespace dljob
