// See client.h.
#include "http/client.h"

#include <algorithm>

namespace dljob::http {

ClientResult<ReadyBytes> BodyStream::TryRead() {
  ClientResult<std::optional<std::string>> piece = Read();
  if (!piece.ok()) return piece.error();
  ReadyBytes out;
  if (*piece) {
    out.bytes = std::move(**piece);
  } else {
    out.end = true;
  }
  return out;
}

ClientResult<std::string> ReadAll(BodyStream& body, size_t limit) {
  std::string out;
  while (true) {
    ClientResult<std::optional<std::string>> piece = body.Read();
    if (!piece.ok()) return piece.error();
    if (!*piece) return out;
    size_t room = limit - out.size();
    out.append(**piece, 0, std::min(room, (*piece)->size()));
    if (out.size() >= limit) {
      body.Cancel();  // the rest is not wanted; do not wait for it
      return out;
    }
  }
}

}  // namespace dljob::http
