// FencedApi: the Api of a leader's work (reconciler, status writers, event recorder, log
// collectors), fenced by its LeaderTerm (leader_term.h) so that nothing it does can land after a
// standby may have taken the lease over.
//
// Each call reads LeaderTerm::ActUntil() once. When this replica is not leading, or the window
// has ended, the call fails at once with reason kReasonDeadline and the term's Refusal() ("not
// the leader: the lease was last renewed 3.412 s ago and may be taken over"); nothing is sent.
// Otherwise it goes to the wrapped Api's WithDeadline(window end) view (api.h): no attempt starts
// after the window, each gets only the time left, and a unary request carries it as the server's
// `timeout`. A renewal during a call does not extend it; the next call gets the new window.
// Streams (Watch, Logs) are fenced until they open; reading one on is not acting.
//
// Thread-safety: as the wrapped Api; the term may change under it (it is thread-safe).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "base/clock.h"
#include "kube/api.h"
#include "kube/runtime/leader_term.h"

namespace dljob::kube {

class FencedApi final : public Api {
 public:
  // `inner`, `term` and `clock` must outlive it; `clock` is the one `inner` waits on. `cap`: an
  // earlier deadline still (WithDeadline's views).
  FencedApi(Api& inner, const LeaderTerm& term, Clock& clock,
            std::optional<Clock::MonotonicTime> cap = std::nullopt);

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
  std::unique_ptr<Api> WithDeadline(Clock::MonotonicTime deadline) override;

 private:
  // The wrapped Api bounded by the window's end (and the cap), or why this replica may not act.
  ApiResult<std::unique_ptr<Api>> Bounded() const;
  template <typename F>
  auto Fenced(F&& call) -> decltype(call(std::declval<Api&>())) {
    ApiResult<std::unique_ptr<Api>> api = Bounded();
    if (!api.ok()) return api.error();
    return call(**api);
  }

  Api& inner_;
  const LeaderTerm& term_;
  Clock& clock_;
  const std::optional<Clock::MonotonicTime> cap_;
};

}  // namespace dljob::kube
