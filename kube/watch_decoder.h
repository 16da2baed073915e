// WatchDecoder: turns the bytes of a watch response into WatchEvents, however they are chunked.
//
// The API server answers a watch with a stream of JSON objects {"type": "...", "object": {...}},
// one per line. The network delivers that stream in arbitrary pieces: an event may span many
// reads, one read may carry many events. The decoder keeps the unfinished tail between Feed()
// calls and finds object boundaries by tracking brace depth outside JSON strings, so it needs no
// newline and is not confused by braces or newlines inside strings. Pure (no I/O); one instance
// per stream, not thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kube/api.h"

namespace dljob::kube {

// Parses one event object. Errors (http 0, reason "BadWatchEvent") name what is wrong.
ApiResult<WatchEvent> ParseWatchEvent(Json event);  // its object moved out, not copied
const char* WatchEventTypeName(WatchEvent::Type type);

class WatchDecoder {
 public:
  // Appends `bytes` and returns every event completed by them, in order. An error means the
  // stream is corrupt (not JSON, not an event); the decoder is then unusable.
  ApiResult<std::vector<WatchEvent>> Feed(std::string_view bytes);
  // At the end of the stream: an error if an event was cut off midway.
  ApiResult<bool> Finish() const;
  // Bytes held back as the start of an event not yet complete.
  size_t buffered() const { return buf_.size(); }

 private:
  std::string buf_;     // unconsumed bytes, starting at an unfinished object's '{'
  size_t scanned_ = 0;  // bytes of buf_ already scanned
  int depth_ = 0;       // brace/bracket depth at buf_[scanned_]
  bool in_string_ = false;
  bool escaped_ = false;
  bool failed_ = false;
};

}  // namespace dljob::kube
