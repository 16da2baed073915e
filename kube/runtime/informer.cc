#include "kube/runtime/informer.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace dljob::kube {
namespace {

kube::ListOptions ListOpts(const InformerOptions& o) {
  kube::ListOptions l;
  l.label_selector = o.label_selector;
  l.field_selector = o.field_selector;
  l.limit = o.page_size;
  return l;
}

}  // namespace

Informer::Informer(kube::Api& api, kube::Resource resource, InformerOptions options,
                   Store::IndexFunc index)
    : api_(api),
      resource_(std::move(resource)),
      options_(std::move(options)),
      store_(std::move(index), options_.compact),
      backoff_(options_.initial_backoff) {}

void Informer::AddHandlers(EventHandlers handlers) { handlers_.push_back(std::move(handlers)); }

std::string Informer::LastResourceVersion() const {
  MutexLock lock(rv_mu_);
  return rv_;
}

void Informer::SetResourceVersion(std::string rv) {
  MutexLock lock(rv_mu_);
  rv_ = std::move(rv);
}

void Informer::Run(std::stop_token stop) {
  bool need_list = true;
  while (!stop.stop_requested()) {
    if (need_list) {
      if (!List()) {
        Backoff(stop);
        continue;
      }
      need_list = false;
    }
    switch (Watch(stop)) {
      case WatchEnd::kStopped:
        return;
      case WatchEnd::kRelist:
        // Said as client-go's reflector says it: the server no longer has the events since our
        // version (its watch cache moved on), so only a fresh list tells what changed.
        std::fprintf(stderr,
                     "dljob-operator: the watch of %s cannot go on from resourceVersion %s (410 "
                     "Gone, or an ERROR event); listing again\n",
                     resource_.plural.c_str(), LastResourceVersion().c_str());
        need_list = true;
        break;
      case WatchEnd::kRewatch:
        break;
      case WatchEnd::kBackoff:
        Backoff(stop);
        break;
    }
  }
}

bool Informer::List() {
  // Each page's items are cut by the transform as the page arrives: a list of 50,000 pods is
  // never held whole.
  std::vector<Json> items;
  ApiResult<std::string> version =
      kube::ListEach(api_, resource_, options_.ns, ListOpts(options_), [&](Json&& item) {
        items.push_back(options_.transform ? options_.transform(std::move(item)) : std::move(item));
      });
  if (!version.ok()) {
    // Logged once per distinct error, as it is retried with backoff. A 404 for a dljob.io kind is
    // the usual case: its CRD is not installed (or older than this operator).
    std::string error = version.error().ToString();
    if (error != last_list_error_) {
      std::fprintf(stderr, "dljob-operator: listing %s failed: %s (retrying)%s\n",
                   resource_.plural.c_str(), error.c_str(),
                   version.error().IsNotFound() && !resource_.group.empty()
                       ? "; install the CRDs: kubectl apply -f charts/dljob/crds/"
                       : "");
      last_list_error_ = std::move(error);
    }
    return false;
  }
  last_list_error_.clear();
  ++lists_;
  Replace(items);
  SetResourceVersion(*version);
  backoff_ = options_.initial_backoff;
  synced_ = true;
  return true;
}

void Informer::Replace(const std::vector<Json>& items) {
  std::set<std::string> seen;
  for (const Json& item : items) {
    seen.insert(ObjectKey(item));
    ObjectPtr old = store_.Upsert(item);
    if (!old) {
      NotifyAdd(item);
    } else if (ResourceVersionOf(*old) != ResourceVersionOf(item)) {
      NotifyUpdate(*old, item);
    }
  }
  for (const std::string& key : store_.Keys()) {
    if (seen.count(key)) continue;
    if (ObjectPtr gone = store_.Remove(key)) NotifyDelete(*gone);
  }
}

Informer::WatchEnd Informer::Watch(std::stop_token stop) {
  kube::ListOptions opts = ListOpts(options_);
  opts.limit = 0;
  opts.resource_version = LastResourceVersion();
  opts.timeout_seconds = options_.watch_timeout_seconds;
  opts.allow_bookmarks = true;
  ApiResult<kube::WatchStreamPtr> stream = api_.Watch(resource_, options_.ns, opts);
  if (!stream.ok()) return stream.error().IsGone() ? WatchEnd::kRelist : WatchEnd::kBackoff;
  kube::WatchStream& s = **stream;
  std::stop_callback cancel(stop, [&s] { s.Cancel(); });
  while (!stop.stop_requested()) {
    ApiResult<std::optional<kube::WatchEvent>> next = s.Next();
    if (stop.stop_requested()) break;
    if (!next.ok()) return next.error().IsGone() ? WatchEnd::kRelist : WatchEnd::kBackoff;
    if (!next->has_value()) return WatchEnd::kRewatch;
    if (!Apply(std::move(**next))) return WatchEnd::kRelist;
  }
  return WatchEnd::kStopped;
}

bool Informer::Apply(kube::WatchEvent event) {
  using Type = kube::WatchEvent::Type;
  // An ERROR event (410 Gone: our version is too old, or any other) leaves us unsure what we
  // missed: only a fresh list tells.
  if (event.type == Type::kError) return false;
  std::string event_rv = ResourceVersionOf(event.object);
  if (!event_rv.empty()) SetResourceVersion(event_rv);
  backoff_ = options_.initial_backoff;
  if (event.type == Type::kBookmark) return true;
  // The one copy of the event's object: the store and the handlers share it.
  auto object = std::make_shared<const Json>(
      options_.transform ? options_.transform(std::move(event.object)) : std::move(event.object));
  switch (event.type) {
    case Type::kBookmark:
      break;
    case Type::kAdded:
    case Type::kModified: {
      ObjectPtr old = store_.Upsert(object);
      old ? NotifyUpdate(*old, *object) : NotifyAdd(*object);
      break;
    }
    case Type::kDeleted: {
      store_.Remove(ObjectKey(*object));
      NotifyDelete(*object);
      break;
    }
    case Type::kError:
      break;
  }
  return true;
}

void Informer::Backoff(std::stop_token stop) {
  MutexLock lock(sleep_mu_);
  sleep_cv_.wait_for(sleep_mu_, stop, backoff_, [] { return false; });
  backoff_ = std::min(backoff_ * 2, options_.max_backoff);
}

void Informer::NotifyAdd(const Json& object) {
  for (const EventHandlers& h : handlers_) {
    if (h.on_add) h.on_add(object);
  }
}

void Informer::NotifyUpdate(const Json& old_object, const Json& object) {
  for (const EventHandlers& h : handlers_) {
    if (h.on_update) h.on_update(old_object, object);
  }
}

void Informer::NotifyDelete(const Json& object) {
  for (const EventHandlers& h : handlers_) {
    if (h.on_delete) h.on_delete(object);
  }
}

}  // namespace dljob::kube
