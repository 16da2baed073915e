// S3Store's multipart Put (see s3_store.h) and PlanParts (s3_multipart.h).
#include "storage/objstore/s3_multipart.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

#include "base/mutex.h"
#include "storage/objstore/s3_store.h"
#include "storage/objstore/s3_xml.h"

namespace dljob::storage {
namespace {

// "url: rest" -> "url: phase: rest", so every message still starts with the object's URL.
Status InPhase(const Status& s, const std::string& url, const std::string& phase) {
  const std::string prefix = url + ": ";
  std::string rest = s.message();
  if (rest.rfind(prefix, 0) == 0) rest.erase(0, prefix.size());
  return Status(s.code(), prefix + phase + ": " + rest);
}

}  // namespace

std::vector<PartRange> PlanParts(uint64_t size, uint64_t part_size) {
  const uint64_t min_for_count = (size + kMaxUploadParts - 1) / kMaxUploadParts;
  part_size = std::max(part_size, min_for_count);
  std::vector<PartRange> parts;
  parts.reserve((size + part_size - 1) / part_size);
  for (uint64_t offset = 0; offset < size; offset += part_size) {
    parts.push_back({int(parts.size()) + 1, offset, std::min(part_size, size - offset)});
  }
  return parts;
}

Status S3Store::PutMultipart(const std::string& key, std::string_view data,
                             const std::string& url) {
  Result<Response> init = Call("POST", key, {{"uploads", ""}}, {}, {}, url, {200});
  if (!init.ok()) return InPhase(init.status(), url, "starting a multipart upload");
  Result<std::string> upload_id = ParseInitiateMultipartUpload(init->body, url);
  if (!upload_id.ok()) return upload_id.status();

  const std::vector<PartRange> plan = PlanParts(data.size(), options_.part_size);
  const std::string of = " of " + std::to_string(plan.size());
  std::vector<UploadedPart> uploaded(plan.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  struct {
    Mutex mu;
    std::optional<Status> status GUARDED_BY(mu);  // the first part's failure
  } first_error;
  auto upload = [&] {
    for (size_t i; !failed && (i = next++) < plan.size();) {
      const PartRange& part = plan[i];
      const std::string phase = "part " + std::to_string(part.number) + of;
      Result<Response> r =
          Call("PUT", key, {{"partNumber", std::to_string(part.number)}, {"uploadId", *upload_id}},
               {}, data.substr(part.offset, part.size), url, {200});
      Status s = r.ok() ? Status::Ok() : InPhase(r.status(), url, phase);
      if (r.ok()) {
        uploaded[i] = {part.number, http::HeaderValue(r->headers, "ETag")};
        if (uploaded[i].etag.empty()) {
          s = Status::Unavailable(url + ": " + phase + ": the server answered without an ETag");
        }
      }
      if (!s.ok()) {
        MutexLock lock(first_error.mu);
        if (!first_error.status) first_error.status = s;
        failed = true;
      }
    }
  };
  const int workers = std::min<int>(options_.part_concurrency, int(plan.size()));
  std::vector<std::thread> threads;
  for (int t = 1; t < workers; ++t) threads.emplace_back(upload);
  upload();
  for (std::thread& t : threads) t.join();
  std::optional<Status> error;
  {
    MutexLock lock(first_error.mu);
    error = first_error.status;
  }

  Status result =
      error ? *error
            : CompleteMultipart(key, *upload_id, CompleteMultipartUploadXml(uploaded), url);
  if (result.ok()) return result;
  // Nothing half-written may stay: drop the parts. The object itself never appeared.
  Result<Response> abort =
      Call("DELETE", key, {{"uploadId", *upload_id}}, {}, {}, url, {200, 204, 404});
  if (abort.ok()) {
    return Status(result.code(), result.message() + "; the upload was aborted");
  }
  std::string why = abort.status().message();
  if (why.rfind(url + ": ", 0) == 0) why.erase(0, url.size() + 2);
  return Status(result.code(), result.message() + "; aborting upload " + *upload_id +
                                   " failed too (" + why +
                                   "): its parts stay on the server until a lifecycle rule or "
                                   "an abort removes them");
}

Status S3Store::CompleteMultipart(const std::string& key, const std::string& upload_id,
                                  const std::string& body, const std::string& url) {
  std::chrono::milliseconds backoff = options_.initial_backoff;
  for (int attempt = 1;; ++attempt) {
    Result<Response> r = Call("POST", key, {{"uploadId", upload_id}}, {}, body, url, {200});
    if (!r.ok()) return InPhase(r.status(), url, "completing the multipart upload");
    Result<CompleteMultipartResult> done = ParseCompleteMultipartUpload(r->body, url);
    if (!done.ok()) return done.status();
    if (done->error.code.empty()) return Status::Ok();
    // A 200 carrying an error: S3 asks clients to retry InternalError and SlowDown.
    const bool retry = done->error.code == "InternalError" || done->error.code == "SlowDown";
    if (!retry || attempt >= options_.max_attempts) {
      return Status::Unavailable(url + ": completing the multipart upload: " + done->error.code +
                                 (done->error.message.empty() ? "" : ": " + done->error.message) +
                                 " (after " + std::to_string(attempt) + " attempts)");
    }
    clock_.SleepFor(backoff);
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

}  // namespace dljob::storage
