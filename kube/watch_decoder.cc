// See watch_decoder.h.
#include "kube/watch_decoder.h"

namespace dljob::kube {
namespace {

ApiError BadEvent(std::string message) {
  return ApiError{0, "BadWatchEvent", "watch stream: " + std::move(message)};
}

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

const char* WatchEventTypeName(WatchEvent::Type type) {
  switch (type) {
    case WatchEvent::Type::kAdded:
      return "ADDED";
    case WatchEvent::Type::kModified:
      return "MODIFIED";
    case WatchEvent::Type::kDeleted:
      return "DELETED";
    case WatchEvent::Type::kBookmark:
      return "BOOKMARK";
    case WatchEvent::Type::kError:
      return "ERROR";
  }
  return "?";
}

ApiResult<WatchEvent> ParseWatchEvent(Json event) {
  if (!event.is_object()) return BadEvent("event is not a JSON object");
  auto type_it = event.find("type");
  if (type_it == event.end() || !type_it->is_string()) return BadEvent("event has no \"type\"");
  auto object_it = event.find("object");
  if (object_it == event.end() || !object_it->is_object()) {
    return BadEvent("event of type " + type_it->get<std::string>() + " has no \"object\"");
  }
  WatchEvent out;
  const std::string& type = type_it->get_ref<const std::string&>();
  if (type == "ADDED") {
    out.type = WatchEvent::Type::kAdded;
  } else if (type == "MODIFIED") {
    out.type = WatchEvent::Type::kModified;
  } else if (type == "DELETED") {
    out.type = WatchEvent::Type::kDeleted;
  } else if (type == "BOOKMARK") {
    out.type = WatchEvent::Type::kBookmark;
  } else if (type == "ERROR") {
    out.type = WatchEvent::Type::kError;
  } else {
    return BadEvent("unknown event type \"" + type + "\"");
  }
  out.object = std::move(*object_it);
  return out;
}

ApiResult<std::vector<WatchEvent>> WatchDecoder::Feed(std::string_view bytes) {
  if (failed_) return BadEvent("decoder used after an error");
  buf_.append(bytes);
  std::vector<WatchEvent> events;
  size_t start = 0;  // where the current object (or leading whitespace) begins in buf_
  for (size_t i = scanned_; i < buf_.size(); ++i) {
    char c = buf_[i];
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      continue;
    }
    if (depth_ == 0) {
      if (IsSpace(c)) {
        start = i + 1;  // whitespace between events is not kept
        continue;
      }
      if (c != '{') {
        failed_ = true;
        return BadEvent(std::string("expected '{' between events, got '") + c + "'");
      }
    }
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if (c == '}' || c == ']') {
      if (--depth_ == 0) {
        std::string_view text(buf_.data() + start, i + 1 - start);
        Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
        if (json.is_discarded()) {
          failed_ = true;
          return BadEvent("event is not valid JSON: " + std::string(text.substr(0, 200)));
        }
        ApiResult<WatchEvent> event = ParseWatchEvent(std::move(json));
        if (!event.ok()) {
          failed_ = true;
          return event.error();
        }
        events.push_back(std::move(event).value());
        start = i + 1;
      }
    }
  }
  buf_.erase(0, start);
  scanned_ = buf_.size();
  return events;
}

ApiResult<bool> WatchDecoder::Finish() const {
  if (failed_) return BadEvent("stream was corrupt");
  for (char c : buf_) {
    if (!IsSpace(c)) return BadEvent("stream ended in the middle of an event");
  }
  return true;
}

}  // namespace dljob::kube
