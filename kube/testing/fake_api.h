// FakeApi: a small in-memory kube::Api for controller unit tests.
//
// It holds objects by resource, assigns uids and resourceVersions (one counter, as etcd does),
// answers get/list/create/replace/status/patch/delete/bind and watch (label selectors of every
// form, kube/label_selector.h, a malformed one a 400; 404, 409 AlreadyExists/Conflict as the
// server sends them), and records every call a test's code makes — verb, resource,
// namespace/name and the body sent — so a test can assert the exact sequence ("create pods
// ns/j-worker-0"). Set-up goes through Put()/Erase(), which are not recorded but do produce watch
// events, like a kubelet or a user would.
//
// A create with metadata.generateName and no name is named the prefix and a counted 5-digit
// suffix ("j-00001", "j-00002", …; the real server's is random), and recorded with the name sent.
//
// Not a server: no defaulting, no admission, no garbage collection, no graceful deletion,
// pagination ignored. The test API server (tests/apiserver/) is the faithful one.
//
// WithDeadline's views record their deadline with each call (Call::deadline) and answer as the
// fake does: it has no clock, so nothing is refused for lateness; a test asserts the deadlines.
// OnCall() lets a test act as each call arrives (advance a FakeClock: a slow server).
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "kube/api.h"

namespace dljob::kube::testing {

using Json = nlohmann::json;

struct Call {
  std::string verb;      // get list create update update-status patch delete watch bind logs
  std::string resource;  // plural: "pods", "dljobs"
  std::string ns;
  std::string name;
  // What was sent (create/update/patch), {"node": …} for bind, and for list/watch the options
  // that were set ({"labelSelector": …, "resourceVersion": …}).
  Json body;
  // The deadline of the WithDeadline view the call was made through; nullopt: none.
  std::optional<Clock::MonotonicTime> deadline{};

  // "create pods ns/j-worker-0", "list nodes", "list pods ns/".
  std::string ToString() const;
};

class FakeWatch;

class FakeApi final : public kube::Api {
 public:
  FakeApi() = default;
  ~FakeApi() override;

  // Set-up, not recorded: creates or replaces (keeping the uid), bumps the resourceVersion and
  // emits a watch event. Returns the stored object.
  Json Put(const kube::Resource& r, Json object);
  void Erase(const kube::Resource& r, const std::string& ns, const std::string& name);
  std::optional<Json> Object(const kube::Resource& r, const std::string& ns,
                             const std::string& name) const;
  std::vector<Json> Objects(const kube::Resource& r) const;

  // What Logs() answers for this pod from now on: these lines, then the end of the log (as a
  // followed log of an exited container ends). Without one, Logs() is a 404.
  void SetLog(const std::string& ns, const std::string& pod, std::vector<std::string> lines);

  std::vector<Call> Calls() const;
  std::vector<std::string> CallStrings() const;
  void ClearCalls();
  // The next call with this verb on this resource (plural) fails with `error`, once per call.
  void FailNext(const std::string& verb, const std::string& plural, kube::ApiError error);
  // Runs `hook` as each later call is recorded, before it is answered, with the fake's lock held:
  // it may advance a clock, never call the fake. Null: none.
  void OnCall(std::function<void(const Call&)> hook);
  // Creates of a review kind (tokenreviews, subjectaccessreviews, …) are answered, not stored:
  // the object back with this status (none set: an empty one, so not authenticated, not allowed).
  void SetReview(const std::string& plural, Json status);

  // Watch control.
  void Compact();       // forget history: a watch from an older version gets ERROR 410
  void EndWatches();    // every open watch ends normally, as at its timeoutSeconds
  void BreakWatches();  // every open watch fails with a transport error
  // Every open watch that asked for them gets a BOOKMARK; returns its resourceVersion.
  std::string Bookmark();
  int OpenWatches() const;

  kube::ApiResult<Json> Get(const kube::Resource& r, const std::string& ns,
                            const std::string& name) override;
  kube::ApiResult<Json> List(const kube::Resource& r, const std::string& ns,
                             const kube::ListOptions& options) override;
  kube::ApiResult<Json> Create(const kube::Resource& r, const std::string& ns,
                               const Json& object) override;
  kube::ApiResult<Json> Replace(const kube::Resource& r, const std::string& ns,
                                const Json& object) override;
  kube::ApiResult<Json> ReplaceStatus(const kube::Resource& r, const std::string& ns,
                                      const Json& object) override;
  kube::ApiResult<Json> MergePatch(const kube::Resource& r, const std::string& ns,
                                   const std::string& name, const Json& patch,
                                   const std::string& subresource) override;
  kube::ApiResult<Json> Delete(const kube::Resource& r, const std::string& ns,
                               const std::string& name,
                               const kube::DeleteOptions& options) override;
  kube::ApiResult<kube::WatchStreamPtr> Watch(const kube::Resource& r, const std::string& ns,
                                              const kube::ListOptions& options) override;
  kube::ApiResult<Json> Bind(const std::string& ns, const std::string& pod,
                             const std::string& node) override;
  kube::ApiResult<kube::LineStreamPtr> Logs(const std::string& ns, const std::string& pod,
                                            const kube::LogOptions& options) override;
  std::unique_ptr<kube::Api> WithDeadline(Clock::MonotonicTime deadline) override;

 private:
  friend class FakeWatch;
  friend class DeadlineView;
  // Runs `call` (one of this fake's methods) with `deadline` recorded on the calls this thread
  // makes meanwhile.
  template <typename F>
  auto WithCallDeadline(Clock::MonotonicTime deadline, F&& call) -> decltype(call()) {
    {
      MutexLock lock(mu_);
      call_deadlines_[std::this_thread::get_id()] = deadline;
    }
    auto result = call();
    MutexLock lock(mu_);
    call_deadlines_.erase(std::this_thread::get_id());
    return result;
  }
  struct HistoryEvent {
    int64_t rv;
    std::string plural;  // "*" for a bookmark
    kube::WatchEvent event;
  };
  using Objects_ = std::map<std::string, Json>;  // key → object

  // Records the call; returns the injected error for it, if any.
  std::optional<kube::ApiError> RecordLocked(Call call) REQUIRES(mu_);
  Json StoreLocked(const kube::Resource& r, Json object, kube::WatchEvent::Type type) REQUIRES(mu_);
  void EraseLocked(const kube::Resource& r, const std::string& key) REQUIRES(mu_);
  Json* FindLocked(const kube::Resource& r, const std::string& ns, const std::string& name)
      REQUIRES(mu_);
  kube::ApiResult<Json> UpdateLocked(const kube::Resource& r, const std::string& ns,
                                     const Json& object, bool status_only) REQUIRES(mu_);

  mutable Mutex mu_;
  std::condition_variable_any cv_;
  std::map<std::string, Objects_> objects_ GUARDED_BY(mu_);  // plural → objects
  std::vector<Call> calls_ GUARDED_BY(mu_);
  std::map<std::string, std::vector<std::string>> logs_ GUARDED_BY(mu_);  // "ns/pod" → lines
  std::map<std::pair<std::string, std::string>, std::deque<kube::ApiError>> failures_
      GUARDED_BY(mu_);
  std::vector<HistoryEvent> history_ GUARDED_BY(mu_);
  std::set<FakeWatch*> watches_ GUARDED_BY(mu_);
  int64_t rv_ GUARDED_BY(mu_) = 100;
  int64_t compacted_ GUARDED_BY(mu_) = 0;  // watches from versions below this get 410
  int64_t uid_ GUARDED_BY(mu_) = 0;
  std::map<std::string, Json> reviews_ GUARDED_BY(mu_);  // SetReview
  int64_t generated_ GUARDED_BY(mu_) = 0;                // names made from generateName
  std::function<void(const Call&)> on_call_ GUARDED_BY(mu_);
  // The deadlines of the WithDeadline views calls are in flight through, by calling thread.
  std::map<std::thread::id, Clock::MonotonicTime> call_deadlines_ GUARDED_BY(mu_);
};

}  // namespace dljob::kube::testing
