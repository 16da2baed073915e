// The WatchStream and LineStream HttpApi hands out: decoders over an HTTP client's BodyStream
// (http/client.h); and the ApiError a transport failure of that client stands for.
//
// HttpWatchStream feeds the body's chunks to a WatchDecoder and returns its events one by one.
// An ERROR event whose Status has code 410 (the resourceVersion is too old) becomes an ApiError
// that IsGone(), so callers re-list on one signal whichever way the server says it (a 410 answer
// to the watch request, or an ERROR event inside the stream); other ERROR events are returned as
// events. A body that ends between events is the server's normal end of a watch (std::nullopt);
// one that ends inside an event, or bytes that are not events, are errors. HttpLineStream splits
// the body at '\n'; a last line without a newline is still returned. Its TryNext() reads with
// BodyStream::TryRead, so a line that has arrived comes without waiting.
//
// Thread-safety: as WatchStream / LineStream (one reader; Cancel() from any thread).
#pragma once

#include <deque>
#include <string>

#include "http/client.h"
#include "kube/api.h"
#include "kube/watch_decoder.h"

namespace dljob::kube {

class HttpWatchStream : public WatchStream {
 public:
  explicit HttpWatchStream(http::BodyStreamPtr body) : body_(std::move(body)) {}
  ApiResult<std::optional<WatchEvent>> Next() override;
  void Cancel() override { body_->Cancel(); }

 private:
  http::BodyStreamPtr body_;
  WatchDecoder decoder_;
  std::deque<WatchEvent> pending_;
  bool ended_ = false;
};

class HttpLineStream : public LineStream {
 public:
  explicit HttpLineStream(http::BodyStreamPtr body) : body_(std::move(body)) {}
  ApiResult<std::optional<std::string>> Next() override;
  ApiResult<ReadyLine> TryNext() override;
  void Cancel() override { body_->Cancel(); }

 private:
  // The next whole line of buf_, or its last piece once the body ended.
  std::optional<std::string> TakeLine();

  http::BodyStreamPtr body_;
  std::string buf_;
  size_t scanned_ = 0;  // bytes of buf_ known to hold no '\n'
  bool ended_ = false;
};

// The ApiError (http 0, reason kReason*) for a request of the HTTP client that got no answer.
ApiError FromClientError(const http::ClientError& error);

// The ApiError an ERROR watch event's Status stands for (code 0 or missing: 500).
ApiError ErrorFromStatus(const Json& status);

}  // namespace dljob::kube
