// See transport.h.
#include "kube/transport.h"

namespace dljob::kube {

std::string FindHeader(const Headers& headers, std::string_view name) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  for (const auto& [key, value] : headers) {
    if (key.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; same && i < key.size(); ++i) same = lower(key[i]) == lower(name[i]);
    if (same) return value;
  }
  return "";
}

ApiResult<std::string> ReadAll(BodyStream& body, size_t limit) {
  std::string out;
  while (true) {
    ApiResult<std::optional<std::string>> piece = body.Read();
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

}  // namespace dljob::kube
