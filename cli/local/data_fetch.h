// FetchData: the pre-step of a local run that fills the caches its data volumes read from
// (LocalPlan::fetches, local_volumes.h), before any rank starts.
//
// Each fetch copies `from` (an oss:// or s3:// URL, opened with the endpoint and credentials of the
// environment: OSS_ENDPOINT / AWS_ENDPOINT_URL, OSS_ACCESS_KEY_ID / OSS_ACCESS_KEY_SECRET or
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY — never from the spec; or a local directory) into
// `to` with storage's WarmCache: parallel, checked, resumable. A bucket is downloaded once per
// machine: when `to` already holds a complete copy of it, later jobs start at once without
// listing it. A local directory is listed every time and only new or changed files are copied.
//
// Progress reaches the user as observer notices ("fetching oss://b/fmnist → /…/cache/b/fmnist-…",
// then a line per tenth of the bytes from base/progress_printer.h, then a summary), all on the
// calling thread: the copy runs on a helper thread while the caller waits. Errors name the entry
// ("spec.data[0]: …") and say what to do. The progress rate and the summary's duration read
// `clock`. Not thread-safe; call from the submitting thread.
#pragma once

#include <functional>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "cli/backend/backend.h"
#include "cli/local/local_plan.h"
#include "storage/objstore/object_url.h"

namespace dljob {

struct FetchOptions {
  int parallel = 8;
  // Polled while copying; when it returns true (Ctrl-C) the copy stops, leaving what it has for
  // the next run to resume, and FetchData returns kUnavailable.
  std::function<bool()> interrupted;
};

Status FetchData(const std::vector<DataFetch>& fetches, const storage::EnvLookup& env,
                 JobObserver& observer, const Clock& clock, const FetchOptions& options = {});

}  // namespace dljob
