// The pure parts of HTTP/1.1, both ends: parsing a request or response head, decoding
// percent-escapes and chunked bodies, and formatting response heads. No sockets here, so every
// rule (what is malformed, what is too large) is tested without a network (http_util_test.cc);
// http_server.cc and socket_client.cc only move bytes between these functions and sockets.
//
// All functions are pure and thread-safe; a ChunkedDecoder is a value used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "http/http.h"

namespace dljob::http {

// What a request head says about the body that follows it.
struct RequestHead {
  HttpRequest request;               // method, path, query, headers (body and remote left empty)
  bool chunked = false;              // Transfer-Encoding: chunked
  std::uint64_t content_length = 0;  // when not chunked
  bool keep_alive = true;            // HTTP/1.1 unless "Connection: close"; never 1.0
  bool expect_continue = false;      // "Expect: 100-continue"
  bool http10 = false;               // HTTP/1.0: no chunked responses
};

// A request the server refuses before calling the handler: the status to answer with and why.
struct HttpError {
  int status = 400;
  std::string message;
};

// Parses `head`: the request line and header lines, each ending in CRLF, without the empty line
// that ends the head. Refuses (400) a malformed request line, target, escape or header, both or
// conflicting Content-Length values, Content-Length with Transfer-Encoding; 501 for a transfer
// coding other than chunked; 505 for a version other than HTTP/1.0 or HTTP/1.1.
std::optional<HttpError> ParseRequestHead(std::string_view head, RequestHead* out);

// What a response head says, for the client side (socket_client.h).
struct ResponseHead {
  int status = 0;
  HttpHeaders headers;
  bool chunked = false;                         // Transfer-Encoding: chunked
  std::optional<std::uint64_t> content_length;  // when not chunked; none: the body ends at close
  bool keep_alive = true;                       // HTTP/1.1 unless "Connection: close"; never 1.0
};

// Parses a response head: the status line ("HTTP/1.1 200 OK"; HTTP/1.0 or 1.1, a three-digit
// code, any reason) and header lines by the rules of ParseRequestHead, without the empty line
// that ends the head. An error says what is malformed. Whether the body is there at all (HEAD,
// 1xx, 204, 304) is for the caller, which knows the request.
std::optional<std::string> ParseResponseHead(std::string_view head, ResponseHead* out);

// Decodes %XX escapes. nullopt when an escape is cut short, not hex, or decodes to NUL.
std::optional<std::string> PercentDecodePath(std::string_view s);

// Decodes a chunked body as its bytes arrive. Feed() consumes what it can from the front of
// `in`, appending chunk data to `body`; call it again with more bytes while it answers kNeedMore.
// Chunk extensions and trailers are read and dropped.
class ChunkedDecoder {
 public:
  enum class Result { kNeedMore, kDone, kMalformed, kTooLarge };

  // max_body: the most body bytes accepted; max_line: the longest size or trailer line.
  ChunkedDecoder(std::size_t max_body, std::size_t max_line)
      : max_body_(max_body), max_line_(max_line) {}

  // Sets *consumed to the bytes of `in` used (the rest belongs to the next request on kDone).
  Result Feed(std::string_view in, std::size_t* consumed, std::string* body);

 private:
  enum class State { kSize, kData, kDataEnd, kTrailer, kDone };
  State state_ = State::kSize;
  std::uint64_t remaining_ = 0;  // data bytes left in the current chunk
  std::size_t trailer_bytes_ = 0;
  std::size_t max_body_;
  std::size_t max_line_;
};

// "OK", "Not Found", ...; "Unknown" for codes without a phrase here.
std::string_view ReasonPhrase(int status);

// The status line and headers, ending with the empty line. `framing` is the framing header the
// server adds ("Content-Length: 12" or "Transfer-Encoding: chunked"); the handler's own
// Content-Length, Transfer-Encoding and Connection headers are dropped in favour of the server's.
std::string FormatResponseHead(int status, const HttpHeaders& headers, std::string_view framing,
                               bool keep_alive);

// One chunk of a chunked body: hex size, CRLF, data, CRLF. REQUIRES: !data.empty().
std::string FormatChunk(std::string_view data);

// ASCII case-insensitive comparison.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

}  // namespace dljob::http
