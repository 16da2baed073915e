// TokenSource: the bearer token HttpApi sends, which may change while the process runs.
//
// HttpApi asks Token() before every attempt, and when the server answers 401 Unauthorized it
// calls Invalidate() with the token it sent and tries once more if the source then has another
// one. Token() fails only for a source that must produce the token and cannot (a credential
// plugin that failed: kube/exec_plugin.h); the call then fails with that error, unsent.
//
// A pod's service-account token is a projected volume the kubelet rotates (tokens expire after an
// hour or so), so a long-running operator must re-read the file rather than keep the token it
// started with. FileTokenSource re-reads at most every `refresh` (default 60 s, as client-go
// does), judged by the injected Clock, and at once after Invalidate() of its token; when a
// re-read fails it keeps the last good token, so a briefly missing file during the kubelet's
// atomic swap costs nothing. All implementations are thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "kube/config.h"

namespace dljob::kube {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // The token to send; "" = send no Authorization header.
  virtual Result<std::string> Token() = 0;
  // The server refused `token` (401): forget it if it is still the current one, so the next
  // Token() fetches a fresh one. The default keeps it (a static token cannot change).
  virtual void Invalidate(const std::string& token) {}
};
using TokenSourcePtr = std::unique_ptr<TokenSource>;

class StaticTokenSource : public TokenSource {
 public:
  explicit StaticTokenSource(std::string token) : token_(std::move(token)) {}
  Result<std::string> Token() override { return token_; }

 private:
  const std::string token_;
};

class FileTokenSource : public TokenSource {
 public:
  // `initial` is used until the first successful read (the file is read on the first Token()).
  FileTokenSource(std::string path, Clock& clock,
                  std::chrono::seconds refresh = std::chrono::seconds(60),
                  std::string initial = "");
  Result<std::string> Token() override;  // never fails
  void Invalidate(const std::string& token) override;

 private:
  const std::string path_;
  Clock& clock_;
  const std::chrono::seconds refresh_;
  Mutex mu_;
  std::string token_ GUARDED_BY(mu_);
  std::optional<Clock::MonotonicTime> read_at_ GUARDED_BY(mu_);  // last read attempt
};

// token_file → FileTokenSource, else token → StaticTokenSource (possibly empty). A credential
// plugin (config.exec) is not looked at here: MakeApi (http_api.h) runs it, since it may also
// return a client certificate.
TokenSourcePtr MakeTokenSource(const Config& config, Clock& clock,
                               std::chrono::seconds refresh = std::chrono::seconds(60));

}  // namespace dljob::kube
