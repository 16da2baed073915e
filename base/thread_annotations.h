// Clang thread-safety annotations: lock rules written as attributes the compiler checks.
//
// Declare which mutex guards which member and which functions need it held; a Clang build with
// -Wthread-safety (scripts/ci/check-sanitizers.sh, with -Werror=thread-safety) then rejects a read
// or write of guarded state without the lock, a lock taken twice, or one not released:
//
//   dljob::Mutex mu_;
//   int pending_ GUARDED_BY(mu_) = 0;
//   void Flush() REQUIRES(mu_);        // caller holds mu_
//   void Submit() EXCLUDES(mu_);       // takes mu_ itself
//
// Use them with dljob::Mutex (base/mutex.h), which is annotated; std::mutex is not, so state
// guarded by one cannot be checked. With GCC every macro expands to nothing. The names follow
// Clang's documentation ("Thread Safety Analysis"); nothing else in the tree defines them.
#pragma once

#if defined(__clang__)
#define DLJOB_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define DLJOB_THREAD_ANNOTATION_(x)
#endif

// A type that is a lock ("mutex"), or a RAII holder of one.
#define CAPABILITY(x) DLJOB_THREAD_ANNOTATION_(capability(x))
#define SCOPED_CAPABILITY DLJOB_THREAD_ANNOTATION_(scoped_lockable)

// Data: read or written only with the lock held (PT_: the pointee, not the pointer).
#define GUARDED_BY(x) DLJOB_THREAD_ANNOTATION_(guarded_by(x))
#define PT_GUARDED_BY(x) DLJOB_THREAD_ANNOTATION_(pt_guarded_by(x))

// Lock order between mutexes.
#define ACQUIRED_BEFORE(...) DLJOB_THREAD_ANNOTATION_(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) DLJOB_THREAD_ANNOTATION_(acquired_after(__VA_ARGS__))

// Functions: the caller must hold (REQUIRES) or must not hold (EXCLUDES) the lock.
#define REQUIRES(...) DLJOB_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) DLJOB_THREAD_ANNOTATION_(requires_shared_capability(__VA_ARGS__))
#define EXCLUDES(...) DLJOB_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))

// Functions that take or drop the lock (no argument: `this` is the lock).
#define ACQUIRE(...) DLJOB_THREAD_ANNOTATION_(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) DLJOB_THREAD_ANNOTATION_(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) DLJOB_THREAD_ANNOTATION_(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) DLJOB_THREAD_ANNOTATION_(release_shared_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) DLJOB_THREAD_ANNOTATION_(try_acquire_capability(__VA_ARGS__))

// The function checks that the lock is held (the analysis takes it as held afterwards).
#define ASSERT_CAPABILITY(x) DLJOB_THREAD_ANNOTATION_(assert_capability(x))
// The function returns a reference to the lock.
#define RETURN_CAPABILITY(x) DLJOB_THREAD_ANNOTATION_(lock_returned(x))

// Turns the analysis off for one function. Say why at the use.
#define NO_THREAD_SAFETY_ANALYSIS DLJOB_THREAD_ANNOTATION_(no_thread_safety_analysis)
