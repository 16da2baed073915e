// RestHandler: watches (GET ...?watch=true). See rest_handler.h.
//
// One JSON event per line on a chunked 200 response. The stream ends when timeoutSeconds pass
// (the client re-watches from its last version), the client goes away, DropWatches() or
// Shutdown() is called, or the cursor's version is compacted away (an ERROR event with a 410
// Status — also the answer to a watch that starts from a version already gone).
#include <algorithm>

#include "tests/apiserver/rest_handler.h"
#include "tests/apiserver/rest_response.h"
#include "tests/apiserver/table.h"
#include "tests/apiserver/watch_cursor.h"

namespace dljob::apiserver {

void RestHandler::ServeWatch(const HttpRequest& request, const RestPath& path,
                             const ResourceType& type, const QueryParams& query,
                             ResponseWriter& out) {
  using SteadyClock = std::chrono::steady_clock;
  auto param = [&](const char* key) { return query.count(key) ? query.at(key) : std::string(); };
  const uint64_t epoch = watch_epoch_;
  WatchFilter filter;
  filter.type = type;
  filter.ns = path.ns;
  Result<LabelSelector> labels = LabelSelector::Parse(param("labelSelector"));
  if (!labels.ok()) return RespondError(out, BadRequestError(labels.status().message()));
  Result<FieldSelector> fields = FieldSelector::Parse(param("fieldSelector"));
  if (!fields.ok()) return RespondError(out, BadRequestError(fields.status().message()));
  filter.labels = *labels;
  filter.fields = *fields;
  std::chrono::seconds timeout = options_.max_watch_timeout;
  if (!param("timeoutSeconds").empty()) {
    try {
      timeout = std::min(timeout, std::chrono::seconds(std::stoll(param("timeoutSeconds"))));
    } catch (...) {
      return RespondError(out, BadRequestError("timeoutSeconds: must be an integer"));
    }
  }
  const bool bookmarks = QueryFlag(query, "allowWatchBookmarks");
  const bool table = WantsTable(RequestHeader(request, "Accept"));
  const std::string include = param("includeObject").empty() ? "Metadata" : param("includeObject");

  std::vector<WatchOut> initial;
  ApiResult<WatchCursor> cursor =
      WatchCursor::Start(store_, filter, param("resourceVersion"), &initial);
  if (!cursor.ok() && !cursor.error().IsGone()) return RespondError(out, cursor.error());
  out.StartStream(200,
                  {{"Content-Type", "application/json"}, {"Cache-Control", "no-cache, private"}});
  if (!cursor.ok()) {
    out.Write(ExpiredEventJson(cursor.error().message).dump() + "\n");
    return;
  }
  bool columns = true;
  auto send = [&](const std::string& event_type, const Json& object) {
    if (!table) return out.Write(WatchEventLine(event_type, object));
    Json t = ObjectsToTable(
        type, {object}, ResourceVersionOf(object), "", include,
        options_.store.now ? options_.store.now() : std::chrono::system_clock::now(), columns);
    columns = false;
    return out.Write(WatchEventLine(event_type, t));
  };
  for (const WatchOut& e : initial) {
    if (!send(e.type, *e.object)) return;
  }
  const SteadyClock::time_point deadline = SteadyClock::now() + timeout;
  SteadyClock::time_point next_bookmark = SteadyClock::now() + options_.bookmark_interval;
  while (!Stopping(epoch) && out.Connected()) {
    ApiResult<std::vector<WatchOut>> events = cursor->Poll();
    if (!events.ok()) {
      out.Write(ExpiredEventJson(events.error().message).dump() + "\n");
      return;
    }
    for (const WatchOut& e : *events) {
      if (!send(e.type, *e.object)) return;
    }
    SteadyClock::time_point now = SteadyClock::now();
    if (now >= deadline) return;
    if (bookmarks && now >= next_bookmark) {
      if (!out.Write(cursor->Bookmark().dump() + "\n")) return;
      next_bookmark = now + options_.bookmark_interval;
    }
    SteadyClock::time_point wake = std::min(deadline, now + options_.idle_check);
    if (bookmarks) wake = std::min(wake, next_bookmark);
    cursor->Wait(wake);
  }
}

}  // namespace dljob::apiserver
