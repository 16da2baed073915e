// Mutex and MutexLock: std::mutex with Clang thread-safety annotations (base/thread_annotations.h).
//
// Guard state with a dljob::Mutex so a Clang build checks every access:
//
//   mutable Mutex mu_;
//   std::map<std::string, Entry> entries_ GUARDED_BY(mu_);
//
//   void Cache::Put(std::string key, Entry e) {
//     MutexLock lock(mu_);              // scoped: released at the end of the block
//     entries_[std::move(key)] = std::move(e);
//   }
//
// To wait for a condition, use std::condition_variable_any on the Mutex itself. Write the
// condition as a loop in the function that holds the lock, or as a predicate annotated with
// REQUIRES (a lambda is analysed as a function of its own, which otherwise holds nothing):
//
//   MutexLock lock(mu_);
//   while (!stop_ && queue_.empty()) cv_.wait(mu_);   // releases mu_ while blocked
//   cv_.wait_for(mu_, 1s, [&]() REQUIRES(mu_) { return stop_ || !queue_.empty(); });
//
// Mutex is not recursive, not movable, and costs what std::mutex costs. All methods are
// thread-safe; MutexLock belongs to the thread that made it.
#pragma once

#include <mutex>

#include "base/thread_annotations.h"

namespace dljob {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

  // Tells the analysis the calling thread holds this mutex where it cannot see so itself (a
  // condition variable's predicate). Checks nothing at run time.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

  // BasicLockable, for std::condition_variable_any::wait and std::scoped_lock. Prefer Lock(),
  // Unlock() and MutexLock in dljob code.
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  std::mutex mu_;
};

// Holds `mu` from construction to the end of the enclosing scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() RELEASE() { mu_.Unlock(); }

  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

}  // namespace dljob
