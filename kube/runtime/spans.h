// Spans: what a controller spent its time on, per object, for a per-phase breakdown of how long
// an object takes to converge (bench/phase_breakdown.h reads them back).
//
// A Span is an interval of wall time (or an instant: start == end) with the key of the object it
// is about ("namespace/name"; "" when none), what it was (`name`: "queue", "reconcile", "api",
// "observe", "child") and a detail ("create pods", "follow-up"). Producers record into a
// SpanSink; a controller without one records nothing and pays one null check per span.
//
// SpanScope names the object the calling thread works on (thread-local, nested scopes restore
// the outer one), so that code below it which does not know the object — an Api call deep in a
// reconcile pass — records its spans against it (TracedApi does).
//
// Thread-safety: SpanSink implementations are called from many threads at once; SpanFile is.
#pragma once

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "kube/api.h"

namespace dljob::kube {

struct Span {
  std::string key;  // "namespace/name" of the object; "" for none
  std::string name;
  std::string detail;
  WallTime start;
  WallTime end;

  bool operator==(const Span&) const = default;
};

class SpanSink {
 public:
  virtual ~SpanSink() = default;
  virtual void Record(Span span) = 0;
};

// One JSON object per line: {"key","name","detail","start","end"}, times as Unix seconds with
// microseconds. Lines are buffered and written in batches; everything recorded is on disk after
// Flush() or destruction.
class SpanFile final : public SpanSink {
 public:
  // Creates (truncates) `path`.
  static Result<std::unique_ptr<SpanFile>> Open(const std::string& path);
  ~SpanFile() override;
  void Record(Span span) override;
  void Flush();

 private:
  explicit SpanFile(std::FILE* file) : file_(file) {}
  void FlushLocked() REQUIRES(mu_);

  Mutex mu_;
  std::FILE* file_ GUARDED_BY(mu_);
  std::string buffer_ GUARDED_BY(mu_);
};

// The line SpanFile writes for `span`, and back: nullopt for a line that is not one.
std::string SpanToJsonLine(const Span& span);
std::optional<Span> SpanFromJsonLine(const std::string& line);
// Every span of a file SpanFile wrote; an error names the first bad line.
Result<std::vector<Span>> ReadSpanFile(const std::string& path);

// While alive, the calling thread works on `key`.
class SpanScope {
 public:
  explicit SpanScope(std::string key);
  ~SpanScope();
  SpanScope(const SpanScope&) = delete;
  SpanScope& operator=(const SpanScope&) = delete;

  // The innermost scope's key on this thread; "" outside every scope.
  static const std::string& Current();

 private:
  std::string outer_;
};

// An Api that records an "api" span for every call, detail "<verb> <resource>[/<subresource>]"
// (verbs as the API server's audit log names them: get, list, create, update, patch, delete,
// watch; a bind is "create pods/binding"), against SpanScope::Current(). Watch() and Logs() are
// measured until their stream opens. Views from WithDeadline() record too. `inner`, `sink` and
// `clock` must outlive it.
class TracedApi final : public Api {
 public:
  TracedApi(Api& inner, SpanSink& sink, const Clock& clock);

  ApiResult<Json> Get(const Resource& r, const std::string& ns, const std::string& name) override;
  ApiResult<Json> List(const Resource& r, const std::string& ns,
                       const ListOptions& options) override;
  ApiResult<Json> Create(const Resource& r, const std::string& ns, const Json& object) override;
  ApiResult<Json> Replace(const Resource& r, const std::string& ns, const Json& object) override;
  ApiResult<Json> ReplaceStatus(const Resource& r, const std::string& ns,
                                const Json& object) override;
  ApiResult<Json> MergePatch(const Resource& r, const std::string& ns, const std::string& name,
                             const Json& patch, const std::string& subresource = "") override;
  ApiResult<Json> Delete(const Resource& r, const std::string& ns, const std::string& name,
                         const DeleteOptions& options = {}) override;
  ApiResult<WatchStreamPtr> Watch(const Resource& r, const std::string& ns,
                                  const ListOptions& options) override;
  ApiResult<Json> Bind(const std::string& ns, const std::string& pod,
                       const std::string& node) override;
  ApiResult<LineStreamPtr> Logs(const std::string& ns, const std::string& pod,
                                const LogOptions& options) override;
  ApiResult<std::string> ServiceProxyGet(const std::string& ns, const std::string& service,
                                         const std::string& path,
                                         const std::string& token_header) override;
  std::unique_ptr<Api> WithDeadline(Clock::MonotonicTime deadline) override;

 private:
  TracedApi(std::unique_ptr<Api> owned, SpanSink& sink, const Clock& clock);
  template <typename F>
  auto Traced(std::string detail, F&& call) -> decltype(call(std::declval<Api&>()));

  std::unique_ptr<Api> owned_;  // a WithDeadline view, or null
  Api& inner_;
  SpanSink& sink_;
  const Clock& clock_;
};

}  // namespace dljob::kube
