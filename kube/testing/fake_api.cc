#include "kube/testing/fake_api.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "base/json_fields.h"
#include "kube/label_selector.h"
#include "kube/object_fields.h"

namespace dljob::kube::testing {
namespace {

using kube::ApiError;
using kube::WatchEvent;

ApiError NotFound(const kube::Resource& r, const std::string& name) {
  return {404, "NotFound", r.plural + " \"" + name + "\" not found"};
}

ApiError Conflict(const std::string& message) { return {409, "Conflict", message}; }

// The selector of a list or watch; a malformed one is a 400, as the API server answers it.
kube::ApiResult<kube::LabelSelector> ParseSelector(const std::string& text) {
  Result<kube::LabelSelector> selector = kube::LabelSelector::Parse(text);
  if (!selector.ok()) return ApiError{400, "BadRequest", selector.status().message()};
  return std::move(selector).value();
}

// What a list or watch asked for, as its query parameters name it.
Json OptionsBody(const kube::ListOptions& o) {
  Json body = Json::object();
  if (!o.label_selector.empty()) body["labelSelector"] = o.label_selector;
  if (!o.resource_version.empty()) body["resourceVersion"] = o.resource_version;
  return body;
}

}  // namespace

std::string Call::ToString() const {
  std::string key = ns.empty() && name.empty() ? "" : " " + ns + "/" + name;
  if (ns.empty() && !name.empty()) key = " " + name;
  return verb + " " + resource + key;
}

// A watch over the fake's history: events after `cursor_` for one resource, namespace and
// selector. Cancel() and the fake's watch controls wake a blocked Next().
class FakeWatch final : public kube::WatchStream {
 public:
  enum class Pending { kNone, kEnd, kBreak };

  FakeWatch(FakeApi& api, std::string plural, std::string ns, kube::ListOptions options,
            kube::LabelSelector selector, int64_t cursor)
      : api_(api),
        plural_(std::move(plural)),
        ns_(std::move(ns)),
        options_(std::move(options)),
        selector_(std::move(selector)),
        cursor_(cursor) {}

  ~FakeWatch() override {
    MutexLock lock(api_.mu_);
    api_.watches_.erase(this);
  }

  kube::ApiResult<std::optional<WatchEvent>> Next() override {
    MutexLock lock(api_.mu_);
    while (true) {
      if (cancelled_) return std::optional<WatchEvent>();
      if (pending_ != Pending::kNone) {
        Pending p = std::exchange(pending_, Pending::kNone);
        if (p == Pending::kEnd) return std::optional<WatchEvent>();
        return ApiError{0, "", "connection reset by peer (FakeApi::BreakWatches)"};
      }
      if (cursor_ < api_.compacted_) {
        cursor_ = api_.rv_;
        return std::optional<WatchEvent>(WatchEvent{WatchEvent::Type::kError,
                                                    {{"kind", "Status"},
                                                     {"status", "Failure"},
                                                     {"code", 410},
                                                     {"reason", "Expired"},
                                                     {"message", "too old resource version"}}});
      }
      for (const FakeApi::HistoryEvent& h : api_.history_) {
        if (h.rv <= cursor_ || !Matches(h)) continue;
        cursor_ = h.rv;
        return std::optional<WatchEvent>(h.event);
      }
      api_.cv_.wait(api_.mu_);
    }
  }

  void Cancel() override {
    MutexLock lock(api_.mu_);
    cancelled_ = true;
    api_.cv_.notify_all();
  }

  // REQUIRES: api_.mu_ held, by the FakeApi that owns this watch. Asserted rather than annotated
  // because the analysis cannot tell that the caller's mu_ is this watch's api_.mu_.
  void SetPendingLocked(Pending p) {
    api_.mu_.AssertHeld();
    pending_ = p;
  }

 private:
  bool Matches(const FakeApi::HistoryEvent& h) const {
    if (h.plural == "*") return options_.allow_bookmarks;
    if (h.plural != plural_) return false;
    const Json meta = h.event.object.value("metadata", Json::object());
    if (!ns_.empty() && meta.value("namespace", "") != ns_) return false;
    return selector_.Matches(meta.value("labels", Json::object()));
  }

  FakeApi& api_;
  const std::string plural_;
  const std::string ns_;
  const kube::ListOptions options_;
  const kube::LabelSelector selector_;
  int64_t cursor_ GUARDED_BY(api_.mu_);
  bool cancelled_ GUARDED_BY(api_.mu_) = false;
  Pending pending_ GUARDED_BY(api_.mu_) = Pending::kNone;
};

FakeApi::~FakeApi() = default;

std::optional<ApiError> FakeApi::RecordLocked(Call call) {
  auto it = failures_.find({call.verb, call.resource});
  if (auto d = call_deadlines_.find(std::this_thread::get_id()); d != call_deadlines_.end()) {
    call.deadline = d->second;
  }
  if (on_call_) on_call_(call);
  calls_.push_back(std::move(call));
  if (it == failures_.end() || it->second.empty()) return std::nullopt;
  ApiError e = it->second.front();
  it->second.pop_front();
  return e;
}

Json FakeApi::StoreLocked(const kube::Resource& r, Json object, WatchEvent::Type type) {
  Json& meta = object["metadata"];
  meta["resourceVersion"] = std::to_string(++rv_);
  if (!meta.contains("uid")) meta["uid"] = "uid-" + std::to_string(++uid_);
  if (!meta.contains("creationTimestamp")) meta["creationTimestamp"] = "2026-01-02T03:04:05Z";
  if (!object.contains("apiVersion")) object["apiVersion"] = r.ApiVersion();
  if (!object.contains("kind")) object["kind"] = r.kind;
  objects_[r.plural][ObjectKey(object)] = object;
  history_.push_back({rv_, r.plural, WatchEvent{type, object}});
  cv_.notify_all();
  return object;
}

void FakeApi::EraseLocked(const kube::Resource& r, const std::string& key) {
  auto it = objects_[r.plural].find(key);
  if (it == objects_[r.plural].end()) return;
  Json object = std::move(it->second);
  objects_[r.plural].erase(it);
  object["metadata"]["resourceVersion"] = std::to_string(++rv_);
  history_.push_back({rv_, r.plural, WatchEvent{WatchEvent::Type::kDeleted, object}});
  cv_.notify_all();
}

Json* FakeApi::FindLocked(const kube::Resource& r, const std::string& ns, const std::string& name) {
  auto& objects = objects_[r.plural];
  auto it = objects.find(ObjectKey(r.namespaced ? ns : "", name));
  return it == objects.end() ? nullptr : &it->second;
}

Json FakeApi::Put(const kube::Resource& r, Json object) {
  MutexLock lock(mu_);
  Json& meta = object["metadata"];
  if (!r.namespaced) meta.erase("namespace");
  Json* old = FindLocked(r, meta.value("namespace", ""), meta.value("name", ""));
  if (old) meta["uid"] = (*old)["metadata"]["uid"];
  return StoreLocked(r, std::move(object),
                     old ? WatchEvent::Type::kModified : WatchEvent::Type::kAdded);
}

void FakeApi::Erase(const kube::Resource& r, const std::string& ns, const std::string& name) {
  MutexLock lock(mu_);
  EraseLocked(r, ObjectKey(r.namespaced ? ns : "", name));
}

std::optional<Json> FakeApi::Object(const kube::Resource& r, const std::string& ns,
                                    const std::string& name) const {
  MutexLock lock(mu_);
  Json* found = const_cast<FakeApi*>(this)->FindLocked(r, ns, name);
  if (!found) return std::nullopt;
  return *found;
}

std::vector<Json> FakeApi::Objects(const kube::Resource& r) const {
  MutexLock lock(mu_);
  std::vector<Json> out;
  auto it = objects_.find(r.plural);
  if (it == objects_.end()) return out;
  for (const auto& [key, object] : it->second) out.push_back(object);
  return out;
}

std::vector<Call> FakeApi::Calls() const {
  MutexLock lock(mu_);
  return calls_;
}

std::vector<std::string> FakeApi::CallStrings() const {
  std::vector<std::string> out;
  for (const Call& c : Calls()) out.push_back(c.ToString());
  return out;
}

void FakeApi::ClearCalls() {
  MutexLock lock(mu_);
  calls_.clear();
}

void FakeApi::FailNext(const std::string& verb, const std::string& plural, ApiError error) {
  MutexLock lock(mu_);
  failures_[{verb, plural}].push_back(std::move(error));
}

void FakeApi::OnCall(std::function<void(const Call&)> hook) {
  MutexLock lock(mu_);
  on_call_ = std::move(hook);
}

// FakeApi::WithDeadline's view: each call goes to the fake with the deadline recorded.
class DeadlineView final : public kube::Api {
 public:
  DeadlineView(FakeApi& api, Clock::MonotonicTime deadline) : api_(api), deadline_(deadline) {}

  kube::ApiResult<Json> Get(const kube::Resource& r, const std::string& ns,
                            const std::string& name) override {
    return Bounded([&] { return api_.Get(r, ns, name); });
  }
  kube::ApiResult<Json> List(const kube::Resource& r, const std::string& ns,
                             const kube::ListOptions& options) override {
    return Bounded([&] { return api_.List(r, ns, options); });
  }
  kube::ApiResult<Json> Create(const kube::Resource& r, const std::string& ns,
                               const Json& object) override {
    return Bounded([&] { return api_.Create(r, ns, object); });
  }
  kube::ApiResult<Json> Replace(const kube::Resource& r, const std::string& ns,
                                const Json& object) override {
    return Bounded([&] { return api_.Replace(r, ns, object); });
  }
  kube::ApiResult<Json> ReplaceStatus(const kube::Resource& r, const std::string& ns,
                                      const Json& object) override {
    return Bounded([&] { return api_.ReplaceStatus(r, ns, object); });
  }
  kube::ApiResult<Json> MergePatch(const kube::Resource& r, const std::string& ns,
                                   const std::string& name, const Json& patch,
                                   const std::string& subresource) override {
    return Bounded([&] { return api_.MergePatch(r, ns, name, patch, subresource); });
  }
  kube::ApiResult<Json> Delete(const kube::Resource& r, const std::string& ns,
                               const std::string& name,
                               const kube::DeleteOptions& options) override {
    return Bounded([&] { return api_.Delete(r, ns, name, options); });
  }
  kube::ApiResult<kube::WatchStreamPtr> Watch(const kube::Resource& r, const std::string& ns,
                                              const kube::ListOptions& options) override {
    return Bounded([&] { return api_.Watch(r, ns, options); });
  }
  kube::ApiResult<Json> Bind(const std::string& ns, const std::string& pod,
                             const std::string& node) override {
    return Bounded([&] { return api_.Bind(ns, pod, node); });
  }
  kube::ApiResult<kube::LineStreamPtr> Logs(const std::string& ns, const std::string& pod,
                                            const kube::LogOptions& options) override {
    return Bounded([&] { return api_.Logs(ns, pod, options); });
  }
  std::unique_ptr<kube::Api> WithDeadline(Clock::MonotonicTime deadline) override {
    return std::make_unique<DeadlineView>(api_, std::min(deadline, deadline_));
  }

 private:
  template <typename F>
  auto Bounded(F&& call) -> decltype(call()) {
    return api_.WithCallDeadline(deadline_, std::forward<F>(call));
  }

  FakeApi& api_;
  const Clock::MonotonicTime deadline_;
};

std::unique_ptr<kube::Api> FakeApi::WithDeadline(Clock::MonotonicTime deadline) {
  return std::make_unique<DeadlineView>(*this, deadline);
}

void FakeApi::Compact() {
  MutexLock lock(mu_);
  compacted_ = rv_;
  history_.clear();
  cv_.notify_all();
}

void FakeApi::EndWatches() {
  MutexLock lock(mu_);
  for (FakeWatch* w : watches_) w->SetPendingLocked(FakeWatch::Pending::kEnd);
  cv_.notify_all();
}

void FakeApi::BreakWatches() {
  MutexLock lock(mu_);
  for (FakeWatch* w : watches_) w->SetPendingLocked(FakeWatch::Pending::kBreak);
  cv_.notify_all();
}

std::string FakeApi::Bookmark() {
  MutexLock lock(mu_);
  ++rv_;
  history_.push_back({rv_, "*",
                      WatchEvent{WatchEvent::Type::kBookmark,
                                 {{"metadata", {{"resourceVersion", std::to_string(rv_)}}}}}});
  cv_.notify_all();
  return std::to_string(rv_);
}

int FakeApi::OpenWatches() const {
  MutexLock lock(mu_);
  return static_cast<int>(watches_.size());
}

kube::ApiResult<Json> FakeApi::Get(const kube::Resource& r, const std::string& ns,
                                   const std::string& name) {
  MutexLock lock(mu_);
  if (auto e = RecordLocked({"get", r.plural, ns, name, nullptr})) return *e;
  Json* found = FindLocked(r, ns, name);
  if (!found) return NotFound(r, name);
  return *found;
}

kube::ApiResult<Json> FakeApi::List(const kube::Resource& r, const std::string& ns,
                                    const kube::ListOptions& options) {
  MutexLock lock(mu_);
  if (auto e = RecordLocked({"list", r.plural, ns, "", OptionsBody(options)})) return *e;
  kube::ApiResult<kube::LabelSelector> selector = ParseSelector(options.label_selector);
  if (!selector.ok()) return selector.error();
  Json items = Json::array();
  for (const auto& [key, object] : objects_[r.plural]) {
    const Json meta = object.value("metadata", Json::object());
    if (!ns.empty() && r.namespaced && meta.value("namespace", "") != ns) continue;
    if (!selector->Matches(meta.value("labels", Json::object()))) continue;
    items.push_back(object);
  }
  return Json{{"kind", r.kind + "List"},
              {"apiVersion", r.ApiVersion()},
              {"metadata", {{"resourceVersion", std::to_string(rv_)}}},
              {"items", std::move(items)}};
}

void FakeApi::SetReview(const std::string& plural, Json status) {
  MutexLock lock(mu_);
  reviews_[plural] = std::move(status);
}

kube::ApiResult<Json> FakeApi::Create(const kube::Resource& r, const std::string& ns,
                                      const Json& object) {
  MutexLock lock(mu_);
  std::string name = NameOf(object);
  if (auto e = RecordLocked({"create", r.plural, ns, name, object})) return *e;
  if (r.plural.ends_with("reviews")) {  // answered, never stored
    Json answer = object;
    auto it = reviews_.find(r.plural);
    answer["status"] = it == reviews_.end() ? Json::object() : it->second;
    return answer;
  }
  Json stored = object;
  if (std::string prefix = StringAt(FieldOf(object, "metadata"), "generateName");
      name.empty() && !prefix.empty()) {
    char suffix[24];
    std::snprintf(suffix, sizeof suffix, "%05lld", static_cast<long long>(++generated_));
    name = prefix + suffix;
    stored["metadata"]["name"] = name;
  }
  if (FindLocked(r, ns, name)) {
    return ApiError{409, "AlreadyExists", r.plural + " \"" + name + "\" already exists"};
  }
  if (r.namespaced) stored["metadata"]["namespace"] = ns;
  stored["metadata"].erase("uid");
  return StoreLocked(r, std::move(stored), WatchEvent::Type::kAdded);
}

kube::ApiResult<Json> FakeApi::UpdateLocked(const kube::Resource& r, const std::string& ns,
                                            const Json& object, bool status_only) {
  std::string name = NameOf(object);
  Json* found = FindLocked(r, ns, name);
  if (!found) return NotFound(r, name);
  std::string rv = ResourceVersionOf(object);
  if (!rv.empty() && rv != ResourceVersionOf(*found)) {
    return Conflict("Operation cannot be fulfilled on " + r.plural + " \"" + name +
                    "\": the object has been modified; please apply your changes to the latest "
                    "version and try again");
  }
  Json updated = *found;
  if (status_only) {
    updated["status"] = object.value("status", Json::object());
  } else {
    Json status = found->value("status", Json());
    updated = object;
    updated["metadata"]["uid"] = (*found)["metadata"]["uid"];
    updated["metadata"]["namespace"] = NamespaceOf(*found);
    if (r.plural == "dljobs") updated["status"] = status;  // the status subresource owns it
  }
  return StoreLocked(r, std::move(updated), WatchEvent::Type::kModified);
}

kube::ApiResult<Json> FakeApi::Replace(const kube::Resource& r, const std::string& ns,
                                       const Json& object) {
  MutexLock lock(mu_);
  if (auto e = RecordLocked({"update", r.plural, ns, NameOf(object), object})) {
    return *e;
  }
  return UpdateLocked(r, ns, object, false);
}

kube::ApiResult<Json> FakeApi::ReplaceStatus(const kube::Resource& r, const std::string& ns,
                                             const Json& object) {
  MutexLock lock(mu_);
  if (auto e = RecordLocked({"update-status", r.plural, ns, NameOf(object), object})) {
    return *e;
  }
  return UpdateLocked(r, ns, object, true);
}

kube::ApiResult<Json> FakeApi::MergePatch(const kube::Resource& r, const std::string& ns,
                                          const std::string& name, const Json& patch,
                                          const std::string& subresource) {
  MutexLock lock(mu_);
  std::string verb = subresource.empty() ? "patch" : "patch-" + subresource;
  if (auto e = RecordLocked({verb, r.plural, ns, name, patch})) return *e;
  Json* found = FindLocked(r, ns, name);
  if (!found) return NotFound(r, name);
  Json updated = *found;
  if (subresource == "status") {
    Json status = updated.value("status", Json::object());
    status.merge_patch(patch.value("status", Json::object()));
    updated["status"] = status;
  } else {
    updated.merge_patch(patch);
  }
  return StoreLocked(r, std::move(updated), WatchEvent::Type::kModified);
}

kube::ApiResult<Json> FakeApi::Delete(const kube::Resource& r, const std::string& ns,
                                      const std::string& name, const kube::DeleteOptions& options) {
  MutexLock lock(mu_);
  Json body = nullptr;  // recorded: the grace period, when one is given
  if (options.grace_period_seconds) body = {{"gracePeriodSeconds", *options.grace_period_seconds}};
  if (auto e = RecordLocked({"delete", r.plural, ns, name, body})) return *e;
  Json* found = FindLocked(r, ns, name);
  if (!found) return NotFound(r, name);
  if (!options.precondition_uid.empty() && UidOf(*found) != options.precondition_uid) {
    return Conflict("Precondition failed: UID in precondition: " + options.precondition_uid);
  }
  Json object = *found;
  EraseLocked(r, ObjectKey(r.namespaced ? ns : "", name));
  return object;
}

kube::ApiResult<kube::WatchStreamPtr> FakeApi::Watch(const kube::Resource& r, const std::string& ns,
                                                     const kube::ListOptions& options) {
  MutexLock lock(mu_);
  if (auto e = RecordLocked({"watch", r.plural, ns, "", OptionsBody(options)})) return *e;
  kube::ApiResult<kube::LabelSelector> selector = ParseSelector(options.label_selector);
  if (!selector.ok()) return selector.error();
  int64_t from = options.resource_version.empty() ? rv_ : std::stoll(options.resource_version);
  auto watch = std::make_unique<FakeWatch>(*this, r.plural, r.namespaced ? ns : "", options,
                                           std::move(selector).value(), from);
  watches_.insert(watch.get());
  return kube::WatchStreamPtr(std::move(watch));
}

kube::ApiResult<Json> FakeApi::Bind(const std::string& ns, const std::string& pod,
                                    const std::string& node) {
  MutexLock lock(mu_);
  if (auto e = RecordLocked({"bind", "pods", ns, pod, {{"node", node}}})) return *e;
  Json* found = FindLocked(kube::resources::kPods, ns, pod);
  if (!found) return NotFound(kube::resources::kPods, pod);
  std::string bound = found->value("spec", Json::object()).value("nodeName", "");
  if (!bound.empty()) return Conflict("pod " + pod + " is already assigned to node " + bound);
  Json updated = *found;
  updated["spec"]["nodeName"] = node;
  StoreLocked(kube::resources::kPods, std::move(updated), WatchEvent::Type::kModified);
  return Json{{"kind", "Status"}, {"status", "Success"}, {"code", 201}};
}

kube::ApiResult<kube::LineStreamPtr> FakeApi::Logs(const std::string& ns, const std::string& pod,
                                                   const kube::LogOptions& options) {
  MutexLock lock(mu_);
  if (auto e = RecordLocked({"logs", "pods", ns, pod, nullptr})) return *e;
  auto it = logs_.find(ns + "/" + pod);
  if (it == logs_.end()) return ApiError{404, "NotFound", "FakeApi has no log for " + pod};
  // The whole log, then its end: a followed log of a container that has exited.
  class Lines final : public kube::LineStream {
   public:
    explicit Lines(std::vector<std::string> lines) : lines_(std::move(lines)) {}
    kube::ApiResult<std::optional<std::string>> Next() override {
      if (next_ >= lines_.size()) return std::optional<std::string>();
      return std::optional<std::string>(lines_[next_++]);
    }
    void Cancel() override { next_ = lines_.size(); }

   private:
    std::vector<std::string> lines_;
    size_t next_ = 0;
  };
  return kube::LineStreamPtr(std::make_unique<Lines>(it->second));
}

void FakeApi::SetLog(const std::string& ns, const std::string& pod,
                     std::vector<std::string> lines) {
  MutexLock lock(mu_);
  logs_[ns + "/" + pod] = std::move(lines);
}

}  // namespace dljob::kube::testing
