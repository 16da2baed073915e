// The deadline a client gives a request: kube-apiserver's `timeout` query parameter, a Go duration
// ("2500ms", "1.5s", "1m30s"). The real server's request-deadline filter counts it from when the
// request arrived and, once it passes, answers 504 Timeout and drops the request, so a write
// whose time ran out is not applied. Long-running requests (watches, pod logs) are exempt, and a
// malformed value is a 400. The server's own default limit (its --request-timeout) is not
// simulated. Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "tests/apiserver/api_errors.h"
#include "tests/apiserver/rest_path.h"

namespace dljob::apiserver {

// Go's time.ParseDuration: an optional sign, then decimal numbers each with a unit (ns, us, µs,
// ms, s, m, h); "0" alone is zero. nullopt for anything else.
std::optional<std::chrono::nanoseconds> ParseGoDuration(std::string_view text);

// How long the request may take: nullopt when it has no `timeout`, asks for 0 (none) or is
// long-running (`watch`, a pods/log path); a 400 for a malformed value.
ApiResult<std::optional<std::chrono::nanoseconds>> RequestTimeout(std::string_view path,
                                                                  const QueryParams& query);

// The 504 the real server answers when a request's time ran out.
ApiError RequestTimedOut();

}  // namespace dljob::apiserver
