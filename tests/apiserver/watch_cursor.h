// WatchCursor: one watch's position in the ObjectStore history, and its filter.
//
// Start() follows the real server's resourceVersion rules for a watch: "" and "0" begin with a
// synthetic ADDED event for every matching object, then changes; "N" sends the changes after
// version N, and is 410 Gone (reason Expired) when the history no longer reaches back to N.
// Filtering by label and field selectors works on transitions as the real server does: an object
// that starts matching arrives as ADDED, one that stops matching as DELETED.
//
// A cursor belongs to one thread (the watch's); the store it reads is thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/apiserver/object_store.h"

namespace dljob::apiserver {

struct WatchFilter {
  ResourceType type;
  std::string ns;  // "" = all namespaces
  LabelSelector labels;
  FieldSelector fields;

  bool Matches(const Json& object) const;
};

struct WatchOut {
  std::string type;  // ADDED, MODIFIED, DELETED
  ObjectPtr object;
};

class WatchCursor {
 public:
  // REQUIRES: `store` outlives the cursor. Fills `initial` with the synthetic ADDED events.
  static ApiResult<WatchCursor> Start(const ObjectStore& store, WatchFilter filter,
                                      const std::string& resource_version,
                                      std::vector<WatchOut>* initial);

  // The matching events since the last call (possibly none). 410 Gone when the history was
  // compacted past this cursor.
  ApiResult<std::vector<WatchOut>> Poll();
  // Blocks until the store may hold something new for Poll(), or `deadline`.
  void Wait(std::chrono::steady_clock::time_point deadline) const;

  // A BOOKMARK event at the version this cursor has read up to.
  Json Bookmark() const;
  uint64_t version() const { return version_; }

 private:
  WatchCursor(const ObjectStore& store, WatchFilter filter, uint64_t version)
      : store_(&store), filter_(std::move(filter)), version_(version) {}

  const ObjectStore* store_;
  WatchFilter filter_;
  uint64_t version_;
};

// {"type": type, "object": object}: one line of a watch stream.
Json WatchEventJson(const std::string& type, const Json& object);
// The same event as one line of a watch stream (its JSON and "\n"), written without copying
// `object` into an event first.
std::string WatchEventLine(const std::string& type, const Json& object);
// The ERROR event a stream ends with when its version expired (a metav1.Status, code 410).
Json ExpiredEventJson(const std::string& message);

}  // namespace dljob::apiserver
