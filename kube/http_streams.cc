// See http_streams.h.
#include "kube/http_streams.h"

#include "kube/rest.h"

namespace dljob::kube {

ApiError FromClientError(const http::ClientError& error) {
  switch (error.failure) {
    case http::Failure::kConnectFailed:
      return ApiError{0, kReasonConnectFailed, error.message};
    case http::Failure::kTimeout:
      return ApiError{0, kReasonTimeout, error.message};
    case http::Failure::kCancelled:
      return ApiError{0, kReasonCancelled, error.message};
    case http::Failure::kTransportError:
      break;
  }
  return ApiError{0, kReasonTransportError, error.message};
}

ApiError ErrorFromStatus(const Json& status) {
  ApiError e;
  e.http = 500;
  if (status.is_object()) {
    if (auto code = status.find("code"); code != status.end() && code->is_number_integer()) {
      e.http = code->get<int>();
    }
    if (auto reason = status.find("reason"); reason != status.end() && reason->is_string()) {
      e.reason = reason->get<std::string>();
    }
    if (auto message = status.find("message"); message != status.end() && message->is_string()) {
      e.message = message->get<std::string>();
    }
  }
  if (e.http <= 0) e.http = 500;
  if (e.reason.empty()) e.reason = rest::ReasonForCode(e.http);
  if (e.message.empty()) e.message = "watch ended with an ERROR event: " + status.dump();
  return e;
}

ApiResult<std::optional<WatchEvent>> HttpWatchStream::Next() {
  while (pending_.empty()) {
    if (ended_) return std::optional<WatchEvent>();
    http::ClientResult<std::optional<std::string>> piece = body_->Read();
    if (!piece.ok()) return FromClientError(piece.error());
    if (!*piece) {
      ended_ = true;
      if (ApiResult<bool> end = decoder_.Finish(); !end.ok()) return end.error();
      continue;
    }
    ApiResult<std::vector<WatchEvent>> events = decoder_.Feed(**piece);
    if (!events.ok()) {
      body_->Cancel();  // the rest of a corrupt stream is of no use
      return events.error();
    }
    for (WatchEvent& e : *events) pending_.push_back(std::move(e));
  }
  WatchEvent event = std::move(pending_.front());
  pending_.pop_front();
  if (event.type == WatchEvent::Type::kError) {
    ApiError error = ErrorFromStatus(event.object);
    if (error.IsGone()) return error;
  }
  return std::optional<WatchEvent>(std::move(event));
}

std::optional<std::string> HttpLineStream::TakeLine() {
  size_t nl = buf_.find('\n', scanned_);
  if (nl != std::string::npos) {
    std::string line = buf_.substr(0, nl);
    buf_.erase(0, nl + 1);
    scanned_ = 0;
    return line;
  }
  scanned_ = buf_.size();
  if (!ended_ || buf_.empty()) return std::nullopt;
  std::string last = std::move(buf_);
  buf_.clear();
  scanned_ = 0;
  return last;
}

ApiResult<std::optional<std::string>> HttpLineStream::Next() {
  while (true) {
    if (std::optional<std::string> line = TakeLine()) return line;
    if (ended_) return std::optional<std::string>();
    http::ClientResult<std::optional<std::string>> piece = body_->Read();
    if (!piece.ok()) return FromClientError(piece.error());
    if (!*piece) {
      ended_ = true;
    } else {
      buf_ += **piece;
    }
  }
}

ApiResult<ReadyLine> HttpLineStream::TryNext() {
  while (true) {
    ReadyLine out;
    out.line = TakeLine();
    if (out.line) return out;
    if (ended_) {
      out.end = true;
      return out;
    }
    http::ClientResult<http::ReadyBytes> piece = body_->TryRead();
    if (!piece.ok()) return FromClientError(piece.error());
    if (piece->end) {
      ended_ = true;
    } else if (piece->bytes.empty()) {
      out.wait = piece->wait;
      return out;
    } else {
      buf_ += piece->bytes;
    }
  }
}

}  // namespace dljob::kube
