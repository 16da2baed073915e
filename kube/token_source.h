// TokenSource: the bearer token HttpApi sends, which may change while the process runs.
//
// A pod's service-account token is a projected volume the kubelet rotates (tokens expire after an
// hour or so), so a long-running operator must re-read the file rather than keep the token it
// started with. FileTokenSource re-reads at most every `refresh` (default 60 s, as client-go
// does), judged by the injected Clock; when a re-read fails it keeps the last good token, so a
// briefly missing file during the kubelet's atomic swap costs nothing. Thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "kube/config.h"

namespace dljob::kube {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  virtual std::string Token() = 0;  // "" = send no Authorization header
};
using TokenSourcePtr = std::unique_ptr<TokenSource>;

class StaticTokenSource : public TokenSource {
 public:
  explicit StaticTokenSource(std::string token) : token_(std::move(token)) {}
  std::string Token() override { return token_; }

 private:
  const std::string token_;
};

class FileTokenSource : public TokenSource {
 public:
  // `initial` is used until the first successful read (the file is read on the first Token()).
  FileTokenSource(std::string path, Clock& clock,
                  std::chrono::seconds refresh = std::chrono::seconds(60),
                  std::string initial = "");
  std::string Token() override;

 private:
  const std::string path_;
  Clock& clock_;
  const std::chrono::seconds refresh_;
  Mutex mu_;
  std::string token_ GUARDED_BY(mu_);
  std::optional<Clock::MonotonicTime> read_at_ GUARDED_BY(mu_);  // last read attempt
};

// token_file → FileTokenSource, else token → StaticTokenSource (possibly empty).
TokenSourcePtr MakeTokenSource(const Config& config, Clock& clock,
                               std::chrono::seconds refresh = std::chrono::seconds(60));

}  // namespace dljob::kube
