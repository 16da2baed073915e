// The operator's memory allocator: jemalloc when the program links it (operator/app/CMakeLists.txt
// does unless DLJOB_JEMALLOC is off or the build has sanitizers), else glibc's malloc, each set up
// for a long-running process whose caches churn (docs/benchmarks/operator.md, "The allocator").
//
// The operator's work is mostly decoding, copying and freeing small JSON nodes and strings. With
// glibc's malloc that was a quarter of its CPU at 1,000 jobs, more at 10,000 (consolidating freed
// chunks). jemalloc's per-thread caches and size classes do the same work in less, and its
// background thread returns unused pages to the system while the operator is idle.
#pragma once

#include <stop_token>
#include <string>

namespace dljob::op {

// "jemalloc 5.3.0 (background thread)" or "glibc malloc": which one this process allocates with
// (jemalloc is told apart by its mallctl interface).
std::string AllocatorName();

// Before any thread starts. With glibc: at most two arenas (MALLOC_ARENA_MAX, when set, decides
// instead). jemalloc reads its settings when it starts (malloc_conf in allocator.cc; MALLOC_CONF
// overrides them).
void ConfigureAllocator();

// Until `stop`: with glibc, hands the free pages inside the heap back once a minute
// (malloc_trim). With jemalloc, returns at once: its background thread does that.
void ReturnFreeHeap(std::stop_token stop);

}  // namespace dljob::op
