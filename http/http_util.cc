#include "http/http_util.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace dljob::http {
namespace {

bool IsTokenChar(char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return c != '\0' && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsTokenChar(c)) return false;
  }
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Digits only, no sign, no overflow.
std::optional<std::uint64_t> ParseDecimal(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

// Whether a comma-separated header value lists `token` (Connection: keep-alive, Upgrade).
bool ListHas(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    std::size_t comma = value.find(',');
    if (EqualsIgnoreCase(Trim(value.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

std::optional<HttpError> ParseRequestLine(std::string_view line, RequestHead* out, bool* http10) {
  std::size_t sp1 = line.find(' ');
  std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return HttpError{400, "malformed request line"};
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method)) return HttpError{400, "malformed method"};
  if (version == "HTTP/1.0") {
    *http10 = true;
  } else if (version != "HTTP/1.1") {
    if (version.substr(0, 5) != "HTTP/") return HttpError{400, "malformed HTTP version"};
    return HttpError{505, "only HTTP/1.0 and HTTP/1.1 are supported"};
  }
  // Absolute form (a proxy's request): keep the path after the authority.
  if (target.substr(0, 7) == "http://" || target.substr(0, 8) == "https://") {
    std::size_t slash = target.find('/', target.find("//") + 2);
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  }
  if (target.empty() || target.front() != '/') return HttpError{400, "malformed request target"};
  for (char c : target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return HttpError{400, "control character in request target"};
    }
  }
  std::size_t q = target.find('?');
  std::optional<std::string> path = PercentDecodePath(target.substr(0, q));
  if (!path) return HttpError{400, "malformed percent-escape in path"};
  out->request.method = std::string(method);
  out->request.path = std::move(*path);
  out->request.query = q == std::string_view::npos ? "" : std::string(target.substr(q + 1));
  return std::nullopt;
}

}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] + 32) : a[i];
    char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] + 32) : b[i];
    if (x != y) return false;
  }
  return true;
}

std::string HeaderValue(const HttpHeaders& headers, std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return "";
}

std::optional<std::string> PercentDecodePath(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    int hi = HexValue(s[i + 1]);
    int lo = HexValue(s[i + 2]);
    if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

namespace {

// What the header lines of a request or response head say about their message's body.
struct HeaderFields {
  HttpHeaders headers;
  std::optional<std::uint64_t> length;  // Content-Length
  bool chunked = false;                 // Transfer-Encoding: chunked
  std::string connection;               // the Connection header's value
};

// Parses the header lines of `head` after its first line (which ends at `eol`): one per CRLF,
// none folded, each a token, a colon and a value without control characters. Content-Length
// must be one decimal number however often it is repeated, Transfer-Encoding only "chunked"
// (501 otherwise), and not both.
std::optional<HttpError> ParseHeaderFields(std::string_view head, std::size_t eol,
                                           HeaderFields* out) {
  bool has_transfer_encoding = false;
  while (eol != std::string_view::npos) {
    std::size_t start = eol + 2;
    if (start >= head.size()) break;
    eol = head.find("\r\n", start);
    std::string_view line = head.substr(start, eol == std::string_view::npos ? eol : eol - start);
    if (line.empty()) return HttpError{400, "empty header line"};
    if (line.front() == ' ' || line.front() == '\t') {
      return HttpError{400, "folded header lines are not allowed"};
    }
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) {
      return HttpError{400, "malformed header line"};
    }
    std::string_view name = line.substr(0, colon);
    std::string_view value = Trim(line.substr(colon + 1));
    for (char c : value) {
      if (c == '\r' || c == '\n' || c == '\0') return HttpError{400, "control character in header"};
    }
    if (EqualsIgnoreCase(name, "Content-Length")) {
      std::optional<std::uint64_t> n = ParseDecimal(value);
      if (!n || (out->length && *out->length != *n)) {
        return HttpError{400, "malformed Content-Length"};
      }
      out->length = n;
    } else if (EqualsIgnoreCase(name, "Transfer-Encoding")) {
      if (has_transfer_encoding || !EqualsIgnoreCase(value, "chunked")) {
        return HttpError{501, "only Transfer-Encoding: chunked is supported"};
      }
      has_transfer_encoding = true;
    } else if (EqualsIgnoreCase(name, "Connection")) {
      out->connection = std::string(value);
    }
    out->headers.emplace_back(std::string(name), std::string(value));
  }
  if (has_transfer_encoding && out->length) {
    return HttpError{400, "both Content-Length and Transfer-Encoding"};
  }
  out->chunked = has_transfer_encoding;
  return std::nullopt;
}

}  // namespace

std::optional<HttpError> ParseRequestHead(std::string_view head, RequestHead* out) {
  *out = RequestHead();
  std::size_t eol = head.find("\r\n");
  bool http10 = false;
  if (auto err = ParseRequestLine(head.substr(0, eol), out, &http10)) return err;
  HeaderFields fields;
  if (auto err = ParseHeaderFields(head, eol, &fields)) return err;
  if (std::string expect = HeaderValue(fields.headers, "Expect"); !expect.empty()) {
    if (!EqualsIgnoreCase(expect, "100-continue")) return HttpError{417, "unsupported Expect"};
    out->expect_continue = !http10;
  }
  out->request.headers = std::move(fields.headers);
  out->http10 = http10;
  out->chunked = fields.chunked;
  out->content_length = fields.length.value_or(0);
  out->keep_alive = !http10 && !ListHas(fields.connection, "close");  // no keep-alive for 1.0
  return std::nullopt;
}

std::optional<std::string> ParseResponseHead(std::string_view head, ResponseHead* out) {
  *out = ResponseHead();
  std::size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  // "HTTP/1.1 200 OK": the version, a three-digit code, and a reason that may be empty.
  bool http10 = line.starts_with("HTTP/1.0 ");
  if (!http10 && !line.starts_with("HTTP/1.1 ")) {
    return "malformed status line \"" + std::string(line.substr(0, 64)) + "\"";
  }
  std::string_view code = line.substr(9, 3);
  if (code.size() != 3 || (line.size() > 12 && line[12] != ' ') || code[0] < '1' ||
      !std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return "malformed status line \"" + std::string(line.substr(0, 64)) + "\"";
  }
  HeaderFields fields;
  if (auto err = ParseHeaderFields(head, eol, &fields)) return err->message;
  out->status = (code[0] - '0') * 100 + (code[1] - '0') * 10 + (code[2] - '0');
  out->headers = std::move(fields.headers);
  out->chunked = fields.chunked;
  out->content_length = fields.length;
  out->keep_alive = !http10 && !ListHas(fields.connection, "close");
  return std::nullopt;
}

ChunkedDecoder::Result ChunkedDecoder::Feed(std::string_view in, std::size_t* consumed,
                                            std::string* body) {
  std::size_t pos = 0;
  auto finish = [&](Result r) {
    *consumed = pos;
    return r;
  };
  while (state_ != State::kDone) {
    std::string_view rest = in.substr(pos);
    if (state_ == State::kData) {
      std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, rest.size()));
      if (n == 0) return finish(Result::kNeedMore);
      body->append(rest.substr(0, n));
      pos += n;
      remaining_ -= n;
      if (remaining_ == 0) state_ = State::kDataEnd;
      continue;
    }
    if (state_ == State::kDataEnd) {
      if (rest.size() < 2) return finish(Result::kNeedMore);
      if (rest.substr(0, 2) != "\r\n") return finish(Result::kMalformed);
      pos += 2;
      state_ = State::kSize;
      continue;
    }
    std::size_t eol = rest.find("\r\n");
    if (eol == std::string_view::npos) {
      return finish(rest.size() > max_line_ ? Result::kMalformed : Result::kNeedMore);
    }
    if (eol > max_line_) return finish(Result::kMalformed);  // however the bytes were split
    std::string_view line = rest.substr(0, eol);
    pos += eol + 2;
    if (state_ == State::kTrailer) {
      trailer_bytes_ += eol + 2;
      if (trailer_bytes_ > max_line_) return finish(Result::kTooLarge);
      if (line.empty()) state_ = State::kDone;
      continue;
    }
    std::string_view size = Trim(line.substr(0, line.find(';')));  // drop chunk extensions
    if (size.empty() || size.size() > 15) return finish(Result::kMalformed);
    std::uint64_t n = 0;
    for (char c : size) {
      int v = HexValue(c);
      if (v < 0) return finish(Result::kMalformed);
      n = n * 16 + static_cast<std::uint64_t>(v);
    }
    if (n > max_body_ || body->size() + n > max_body_) return finish(Result::kTooLarge);
    remaining_ = n;
    state_ = n == 0 ? State::kTrailer : State::kData;
  }
  return finish(Result::kDone);
}

std::string_view ReasonPhrase(int status) {
  static constexpr std::pair<int, std::string_view> kPhrases[] = {
      {100, "Continue"},
      {101, "Switching Protocols"},
      {200, "OK"},
      {201, "Created"},
      {202, "Accepted"},
      {204, "No Content"},
      {301, "Moved Permanently"},
      {304, "Not Modified"},
      {400, "Bad Request"},
      {401, "Unauthorized"},
      {403, "Forbidden"},
      {404, "Not Found"},
      {405, "Method Not Allowed"},
      {406, "Not Acceptable"},
      {409, "Conflict"},
      {410, "Gone"},
      {413, "Content Too Large"},
      {415, "Unsupported Media Type"},
      {417, "Expectation Failed"},
      {422, "Unprocessable Entity"},
      {429, "Too Many Requests"},
      {431, "Request Header Fields Too Large"},
      {500, "Internal Server Error"},
      {501, "Not Implemented"},
      {503, "Service Unavailable"},
      {504, "Gateway Timeout"},
      {505, "HTTP Version Not Supported"},
  };
  for (const auto& [code, phrase] : kPhrases) {
    if (code == status) return phrase;
  }
  return "Unknown";
}

std::string FormatResponseHead(int status, const HttpHeaders& headers, std::string_view framing,
                               bool keep_alive) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " ";
  out += ReasonPhrase(status);
  out += "\r\n";
  for (const auto& [name, value] : headers) {
    if (EqualsIgnoreCase(name, "Content-Length") || EqualsIgnoreCase(name, "Transfer-Encoding") ||
        EqualsIgnoreCase(name, "Connection")) {
      continue;
    }
    out += name + ": " + value + "\r\n";
  }
  if (!framing.empty()) out.append(framing).append("\r\n");
  if (!keep_alive) out += "Connection: close\r\n";
  out += "\r\n";
  return out;
}

std::string FormatChunk(std::string_view data) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string size;
  for (std::size_t n = data.size(); n > 0; n /= 16) size.insert(size.begin(), kHex[n % 16]);
  std::string out;
  out.reserve(size.size() + data.size() + 4);
  out.append(size).append("\r\n").append(data).append("\r\n");
  return out;
}

}  // namespace dljob::http
