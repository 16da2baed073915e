// Fuzz target: the parts of http/http_util.h that read what a peer sends — a server's answer
// (status line, headers, chunked body) on the client side, a request head and its chunked body
// on the server side.
//
// Each input is read whole, as a response head, a request head, a chunked body and a
// percent-escaped path; and as the wire carries a message, a head up to the first empty line
// and the chunked body after it (for an answer, 1xx heads first, skipped as the client skips
// them). The input's first byte picks the size of the pieces the chunked body arrives in.
//
// Properties checked (abort on violation, so libFuzzer and the replay driver report it):
//   - no input crashes, hangs or leaks (ASan/UBSan catch the rest);
//   - a response head that parses has a status in 100..999, not both chunked and a
//     Content-Length, header names that are tokens and values without CR, LF, NUL or outer
//     blanks; formatting it with FormatResponseHead and parsing that gives back the same head;
//   - a request head that parses has a method, a path starting with '/' and without NUL, a query
//     without controls or spaces, the same header rules, and HTTP/1.0 neither kept alive nor
//     expecting 100-continue; a refusal has a 4xx/5xx status and a message;
//   - ChunkedDecoder, fed in pieces with max_body 64 KiB and max_line 256 (what a Feed leaves
//     unconsumed fed again, as the server and the client do): `consumed` never exceeds the
//     bytes fed, the body grows by no more than was consumed and never past max_body; a piece
//     split that ends in kDone or kTooLarge ends the same way fed in one piece, with the same
//     body and the same bytes consumed;
//   - PercentDecodePath never lengthens its input and never decodes an escape to NUL.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "http/http_util.h"

namespace {

using dljob::http::ChunkedDecoder;

constexpr std::size_t kMaxBody = 1 << 16;
constexpr std::size_t kMaxLine = 256;

void Check(bool ok, const char* what, std::string_view detail) {
  if (ok) return;
  std::fprintf(stderr, "http_parse_fuzzer: %s\n%.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

bool IsControlOrSpace(char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; }

void CheckHeaders(const dljob::http::HttpHeaders& headers, std::string_view input) {
  for (const auto& [name, value] : headers) {
    Check(!name.empty(), "a header without a name", input);
    for (char c : name) Check(!IsControlOrSpace(c) && c != ':', "a header name not a token", input);
    for (char c : value) {
      Check(c != '\r' && c != '\n' && c != '\0', "a control character in a header value", input);
    }
    Check(value.empty() || (value.front() != ' ' && value.front() != '\t' && value.back() != ' ' &&
                            value.back() != '\t'),
          "a header value with blanks around it", input);
  }
}

// The headers the server writes as they were, leaving out the framing ones it writes itself.
dljob::http::HttpHeaders WithoutFraming(const dljob::http::HttpHeaders& headers) {
  dljob::http::HttpHeaders out;
  for (const auto& [name, value] : headers) {
    if (dljob::http::EqualsIgnoreCase(name, "Content-Length") ||
        dljob::http::EqualsIgnoreCase(name, "Transfer-Encoding") ||
        dljob::http::EqualsIgnoreCase(name, "Connection")) {
      continue;
    }
    out.emplace_back(name, value);
  }
  return out;
}

// Parses `text` as a response head; when it parses, checks it and sets *head.
bool CheckResponseHead(std::string_view text, dljob::http::ResponseHead* head) {
  if (std::optional<std::string> error = dljob::http::ParseResponseHead(text, head)) {
    Check(!error->empty(), "a refused response head without a reason", text);
    return false;
  }
  Check(head->status >= 100 && head->status <= 999, "a status outside 100..999", text);
  Check(!(head->chunked && head->content_length), "both chunked and a Content-Length", text);
  CheckHeaders(head->headers, text);

  std::string framing;
  if (head->chunked) {
    framing = "Transfer-Encoding: chunked";
  } else if (head->content_length) {
    framing = "Content-Length: " + std::to_string(*head->content_length);
  }
  std::string formatted =
      dljob::http::FormatResponseHead(head->status, head->headers, framing, head->keep_alive);
  Check(formatted.ends_with("\r\n\r\n"), "a formatted head without its empty line", formatted);
  formatted.resize(formatted.size() - 4);  // what the client's reader hands to the parser
  dljob::http::ResponseHead again;
  std::optional<std::string> error = dljob::http::ParseResponseHead(formatted, &again);
  Check(!error, "a formatted head does not parse", formatted + "\n" + error.value_or(""));
  Check(again.status == head->status && again.chunked == head->chunked &&
            again.content_length == head->content_length && again.keep_alive == head->keep_alive &&
            WithoutFraming(again.headers) == WithoutFraming(head->headers),
        "formatting and parsing a head changed it", formatted);
  return true;
}

// Parses `text` as a request head; when it parses, checks it and sets *head.
bool CheckRequestHead(std::string_view text, dljob::http::RequestHead* head) {
  if (std::optional<dljob::http::HttpError> error = dljob::http::ParseRequestHead(text, head)) {
    Check(error->status >= 400 && error->status <= 599, "a refusal that is not 4xx or 5xx", text);
    Check(!error->message.empty(), "a refusal without a reason", text);
    return false;
  }
  const dljob::http::HttpRequest& request = head->request;
  Check(!request.method.empty(), "a request without a method", text);
  for (char c : request.method) Check(!IsControlOrSpace(c), "a method not a token", text);
  Check(request.path.starts_with('/'), "a path not starting with '/'", text);
  Check(request.path.find('\0') == std::string::npos, "a NUL in the path", text);
  for (char c : request.query)
    Check(!IsControlOrSpace(c), "a control character in the query", text);
  Check(!(head->chunked && head->content_length != 0), "both chunked and a Content-Length", text);
  Check(!head->http10 || (!head->keep_alive && !head->expect_continue),
        "HTTP/1.0 kept alive or expecting 100-continue", text);
  CheckHeaders(request.headers, text);
  return true;
}

struct Decoded {
  ChunkedDecoder::Result result = ChunkedDecoder::Result::kNeedMore;
  std::string body;
  std::size_t consumed = 0;  // bytes of the input used, in all
};

// Feeds `bytes` to a fresh decoder `piece` bytes at a time; what a Feed leaves unconsumed stays
// in front of the next piece. Stops at the first answer other than kNeedMore.
Decoded DecodeChunked(std::string_view bytes, std::size_t piece) {
  ChunkedDecoder decoder(kMaxBody, kMaxLine);
  Decoded out;
  std::string pending;
  for (std::size_t fed = 0; fed < bytes.size();) {
    std::size_t n = std::min(piece, bytes.size() - fed);
    pending.append(bytes.substr(fed, n));
    fed += n;
    std::size_t consumed = SIZE_MAX;  // a Feed that leaves it unset fails the next check
    std::size_t body_before = out.body.size();
    out.result = decoder.Feed(pending, &consumed, &out.body);
    Check(consumed <= pending.size(), "consumed more than was fed", bytes);
    Check(out.body.size() - body_before <= consumed, "the body grew by more than was consumed",
          bytes);
    Check(out.body.size() <= kMaxBody, "a body larger than max_body", bytes);
    pending.erase(0, consumed);
    out.consumed += consumed;
    if (out.result != ChunkedDecoder::Result::kNeedMore) break;
  }
  return out;
}

void CheckChunked(std::string_view bytes, std::size_t piece) {
  Decoded split = DecodeChunked(bytes, piece);
  if (split.result != ChunkedDecoder::Result::kDone &&
      split.result != ChunkedDecoder::Result::kTooLarge) {
    return;  // a long line cut before its CRLF is refused; whole, it may be read
  }
  Decoded whole = DecodeChunked(bytes, bytes.size());
  Check(whole.result == split.result, "fed in pieces and whole, the body ends differently", bytes);
  if (split.result == ChunkedDecoder::Result::kDone) {
    Check(whole.body == split.body && whole.consumed == split.consumed,
          "fed in pieces and whole, the body decodes differently", bytes);
  }
}

// A server's answer as the client reads it: heads up to an empty line, 1xx ones skipped (101
// ends the answer, as it does the client's), then the final head's chunked body.
void CheckAnswer(std::string_view bytes, std::size_t piece) {
  while (true) {
    std::size_t end = bytes.find("\r\n\r\n");
    dljob::http::ResponseHead head;
    if (end == std::string_view::npos || !CheckResponseHead(bytes.substr(0, end), &head)) return;
    bytes.remove_prefix(end + 4);
    if (head.status / 100 != 1 || head.status == 101) {
      if (head.chunked) CheckChunked(bytes, piece);
      return;
    }
  }
}

// A request as the server reads it: the head up to an empty line, then its chunked body.
void CheckRequest(std::string_view bytes, std::size_t piece) {
  std::size_t end = bytes.find("\r\n\r\n");
  dljob::http::RequestHead head;
  if (end == std::string_view::npos || !CheckRequestHead(bytes.substr(0, end), &head)) return;
  if (head.chunked) CheckChunked(bytes.substr(end + 4), piece);
}

void CheckPercentDecode(std::string_view text) {
  std::optional<std::string> path = dljob::http::PercentDecodePath(text);
  if (!path) return;
  Check(path->size() <= text.size(), "a decoded path longer than its escapes", text);
  // %00 is refused; a NUL can only be one that was there already.
  Check(text.find('\0') != std::string_view::npos || path->find('\0') == std::string::npos,
        "%00 decoded to a NUL", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::size_t piece = size == 0 ? 1 : 1 + data[0] % 32;
  dljob::http::ResponseHead response;
  CheckResponseHead(text, &response);
  dljob::http::RequestHead request;
  CheckRequestHead(text, &request);
  CheckChunked(text, piece);
  CheckPercentDecode(text);
  CheckAnswer(text, piece);
  CheckRequest(text, piece);
  return 0;
}
