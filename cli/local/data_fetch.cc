#include "cli/local/data_fetch.h"

#include <atomic>
#include <cstdio>
#include <future>

#include "base/clock.h"
#include "base/human_format.h"
#include "base/mutex.h"
#include "base/progress_printer.h"
#include "storage/objstore/cache_warmup.h"
#include "storage/objstore/open_store.h"

namespace dljob {
namespace {

// "  3/10 objects": ends each progress line (base/progress_printer.h).
std::string Objects(const storage::WarmCacheProgress& p) {
  return "  " + std::to_string(p.objects_done) + "/" + std::to_string(p.objects_total) + " objects";
}

// The copy thread's latest progress report, taken by the thread that prints it.
struct SharedProgress {
  Mutex mu;
  storage::WarmCacheProgress latest GUARDED_BY(mu);
  bool changed GUARDED_BY(mu) = false;  // a report came since the last one printed
};

Status FetchOne(const DataFetch& f, const storage::EnvLookup& env, JobObserver& observer,
                const Clock& clock, const FetchOptions& options) {
  const bool remote = f.from.find("://") != std::string::npos;
  Result<storage::OpenedSource> source =
      storage::OpenSource(f.from, storage::S3Flags{}, env, f.field + ".source");
  if (!source.ok()) {
    return Status(source.status().code(),
                  source.status().message() +
                      (remote ? "; the endpoint and keys come from the environment, never the "
                                "spec: set OSS_ENDPOINT (or AWS_ENDPOINT_URL) and "
                                "OSS_ACCESS_KEY_ID / OSS_ACCESS_KEY_SECRET (or AWS_ACCESS_KEY_ID "
                                "/ AWS_SECRET_ACCESS_KEY)"
                              : "; check " + f.field + ".source"));
  }
  observer.OnNotice("fetching " + f.from + " → " + f.to);
  const Clock::MonotonicTime start = clock.MonotonicNow();

  SharedProgress shared;
  std::atomic<bool> cancel{false};
  storage::WarmCacheOptions warm;
  warm.parallel = options.parallel;
  warm.cancel = &cancel;
  // A local directory is cheap to list, and a stale copy of it would silently train on old data:
  // list it every time (unchanged files are skipped by size and mtime). A bucket's complete copy
  // is trusted, so a later job starts without listing it.
  warm.trust_marker = remote;
  warm.progress = [&](const storage::WarmCacheProgress& p) {
    MutexLock lock(shared.mu);
    shared.latest = p;
    shared.changed = true;
  };
  ProgressPrinter printer([&observer](const std::string& line) { observer.OnNotice(line); }, clock,
                          {ProgressUnit::kBytes});
  const std::string label = "fetching " + f.from;
  printer.Start(label);  // the rate counts from here
  // The copy runs on its own thread so that the observer is only ever called from this one.
  std::future<Result<storage::WarmCacheResult>> done = std::async(std::launch::async, [&] {
    return storage::WarmCache(*source->store, source->prefix, f.to, warm);
  });
  while (done.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready) {
    if (options.interrupted && options.interrupted()) cancel = true;
    storage::WarmCacheProgress now;
    {
      MutexLock lock(shared.mu);
      if (!shared.changed) continue;
      shared.changed = false;
      now = shared.latest;
    }
    if (now.bytes_total > 0) printer.Update(label, now.bytes_done, now.bytes_total, Objects(now));
  }
  Result<storage::WarmCacheResult> result = done.get();
  if (!result.ok()) {
    const bool damaged = result.status().code() == StatusCode::kInvalidArgument;
    return Status(result.status().code(),
                  f.field + ": fetching " + f.from + " into " + f.to + ": " +
                      result.status().message() +
                      (damaged ? "; the source object is damaged: upload it again"
                               : "; submit again: finished objects are kept and partial ones "
                                 "resume"));
  }
  if (result->objects == 0) {
    return Status::NotFound(f.field + ".source: " + f.from +
                            " holds no objects (nothing to fetch); check the bucket and prefix");
  }
  if (result->already_complete) {
    observer.OnNotice(f.to + " already holds a complete copy of " + f.from);
    return Status::Ok();
  }
  const double secs = std::chrono::duration<double>(clock.MonotonicNow() - start).count();
  char timing[48];
  std::snprintf(timing, sizeof timing, " in %.1fs", secs);
  observer.OnNotice("fetched " + f.from + ": " + std::to_string(result->objects) + " objects (" +
                    HumanBytes(result->bytes) + "), " + std::to_string(result->objects_copied) +
                    " copied, " + std::to_string(result->objects_skipped) + " already there" +
                    timing);
  return Status::Ok();
}

}  // namespace

Status FetchData(const std::vector<DataFetch>& fetches, const storage::EnvLookup& env,
                 JobObserver& observer, const Clock& clock, const FetchOptions& options) {
  for (const DataFetch& f : fetches) {
    if (Status s = FetchOne(f, env, observer, clock, options); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace dljob
