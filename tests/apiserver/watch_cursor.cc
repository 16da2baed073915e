// See watch_cursor.h.
#include "tests/apiserver/watch_cursor.h"

#include <stdexcept>
#include <utility>

namespace dljob::apiserver {

bool WatchFilter::Matches(const Json& object) const {
  if (type.namespaced && !ns.empty() && NamespaceOf(object) != ns) return false;
  const Json& meta = object["metadata"];
  if (!labels.Matches(meta.value("labels", Json::object()))) return false;
  return fields.Matches(object);
}

ApiResult<WatchCursor> WatchCursor::Start(const ObjectStore& store, WatchFilter filter,
                                          const std::string& resource_version,
                                          std::vector<WatchOut>* initial) {
  if (resource_version.empty() || resource_version == "0") {
    auto [objects, version] = store.Snapshot(filter.type.Key(), filter.ns);
    for (ObjectPtr& obj : objects) {
      if (filter.Matches(*obj)) initial->push_back({"ADDED", std::move(obj)});
    }
    return WatchCursor(store, std::move(filter), version);
  }
  uint64_t version = 0;
  try {
    size_t used = 0;
    version = std::stoull(resource_version, &used);
    if (used != resource_version.size()) throw std::invalid_argument("trailing");
  } catch (...) {
    return BadRequestError("invalid resourceVersion \"" + resource_version + "\"");
  }
  uint64_t compacted = store.compacted_version();
  if (version < compacted) {
    return GoneError("too old resource version: " + resource_version + " (" +
                     std::to_string(compacted) + ")");
  }
  return WatchCursor(store, std::move(filter), version);
}

ApiResult<std::vector<WatchOut>> WatchCursor::Poll() {
  std::vector<StoredEvent> events;
  uint64_t now_at = 0;
  if (!store_->EventsAfter(version_, &events, &now_at)) {
    return GoneError("too old resource version: " + std::to_string(version_) + " (" +
                     std::to_string(store_->compacted_version()) + ")");
  }
  std::vector<WatchOut> out;
  const std::string key = filter_.type.Key();
  for (StoredEvent& e : events) {
    if (e.key != key) continue;
    bool now_matches = filter_.Matches(*e.object);
    bool matched_before = e.previous ? filter_.Matches(*e.previous) : now_matches;
    if (e.type != "MODIFIED") {
      if (now_matches) out.push_back({e.type, std::move(e.object)});
    } else if (now_matches && matched_before) {
      out.push_back({"MODIFIED", std::move(e.object)});
    } else if (now_matches) {
      out.push_back({"ADDED", std::move(e.object)});
    } else if (matched_before) {
      out.push_back({"DELETED", std::move(e.object)});
    }
  }
  version_ = now_at;
  return out;
}

void WatchCursor::Wait(std::chrono::steady_clock::time_point deadline) const {
  store_->WaitPast(version_, deadline);
}

Json WatchCursor::Bookmark() const {
  Json object = {{"kind", filter_.type.kind},
                 {"apiVersion", filter_.type.ApiVersion()},
                 {"metadata", {{"resourceVersion", std::to_string(version_)}}}};
  return WatchEventJson("BOOKMARK", object);
}

Json WatchEventJson(const std::string& type, const Json& object) {
  return {{"type", type}, {"object", object}};
}

std::string WatchEventLine(const std::string& type, const Json& object) {
  // WatchEventJson(type, object).dump(): keys in order, "object" before "type".
  return R"({"object":)" + object.dump() + R"(,"type":)" + Json(type).dump() + "}\n";
}

Json ExpiredEventJson(const std::string& message) {
  return WatchEventJson("ERROR", StatusBody(GoneError(message)));
}

}  // namespace dljob::apiserver
