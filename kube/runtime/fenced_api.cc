// See fenced_api.h.
#include "kube/runtime/fenced_api.h"

#include <algorithm>

namespace dljob::kube {

FencedApi::FencedApi(Api& inner, const LeaderTerm& term, Clock& clock,
                     std::optional<Clock::MonotonicTime> cap)
    : inner_(inner), term_(term), clock_(clock), cap_(cap) {}

ApiResult<std::unique_ptr<Api>> FencedApi::Bounded() const {
  const Clock::MonotonicTime now = clock_.MonotonicNow();
  std::optional<Clock::MonotonicTime> until = term_.ActUntil();
  if (!until || now >= *until) {
    std::string why = term_.Refusal(now);
    if (why.empty()) why = "not the leader: its acting window has just ended";  // renewed since
    return ApiError{0, kReasonDeadline, why};
  }
  Clock::MonotonicTime deadline = cap_ ? std::min(*until, *cap_) : *until;
  if (now >= deadline) return ApiError{0, kReasonDeadline, "the call's deadline has passed"};
  return inner_.WithDeadline(deadline);
}

ApiResult<Json> FencedApi::Get(const Resource& r, const std::string& ns, const std::string& name) {
  return Fenced([&](Api& api) { return api.Get(r, ns, name); });
}

ApiResult<Json> FencedApi::List(const Resource& r, const std::string& ns,
                                const ListOptions& options) {
  return Fenced([&](Api& api) { return api.List(r, ns, options); });
}

ApiResult<Json> FencedApi::Create(const Resource& r, const std::string& ns, const Json& object) {
  return Fenced([&](Api& api) { return api.Create(r, ns, object); });
}

ApiResult<Json> FencedApi::Replace(const Resource& r, const std::string& ns, const Json& object) {
  return Fenced([&](Api& api) { return api.Replace(r, ns, object); });
}

ApiResult<Json> FencedApi::ReplaceStatus(const Resource& r, const std::string& ns,
                                         const Json& object) {
  return Fenced([&](Api& api) { return api.ReplaceStatus(r, ns, object); });
}

ApiResult<Json> FencedApi::MergePatch(const Resource& r, const std::string& ns,
                                      const std::string& name, const Json& patch,
                                      const std::string& subresource) {
  return Fenced([&](Api& api) { return api.MergePatch(r, ns, name, patch, subresource); });
}

ApiResult<Json> FencedApi::Delete(const Resource& r, const std::string& ns, const std::string& name,
                                  const DeleteOptions& options) {
  return Fenced([&](Api& api) { return api.Delete(r, ns, name, options); });
}

ApiResult<WatchStreamPtr> FencedApi::Watch(const Resource& r, const std::string& ns,
                                           const ListOptions& options) {
  return Fenced([&](Api& api) { return api.Watch(r, ns, options); });
}

ApiResult<Json> FencedApi::Bind(const std::string& ns, const std::string& pod,
                                const std::string& node) {
  return Fenced([&](Api& api) { return api.Bind(ns, pod, node); });
}

ApiResult<LineStreamPtr> FencedApi::Logs(const std::string& ns, const std::string& pod,
                                         const LogOptions& options) {
  return Fenced([&](Api& api) { return api.Logs(ns, pod, options); });
}

std::unique_ptr<Api> FencedApi::WithDeadline(Clock::MonotonicTime deadline) {
  return std::make_unique<FencedApi>(inner_, term_, clock_,
                                     cap_ ? std::min(*cap_, deadline) : deadline);
}

}  // namespace dljob::kube
