// See token_source.h.
#include "kube/token_source.h"

#include <cctype>
#include <utility>

#include "base/env.h"

namespace dljob::kube {

FileTokenSource::FileTokenSource(std::string path, Clock& clock, std::chrono::seconds refresh,
                                 std::string initial)
    : path_(std::move(path)), clock_(clock), refresh_(refresh), token_(std::move(initial)) {}

Result<std::string> FileTokenSource::Token() {
  MutexLock lock(mu_);
  Clock::MonotonicTime now = clock_.MonotonicNow();
  if (read_at_ && now - *read_at_ < refresh_) return token_;
  read_at_ = now;
  Result<std::string> read = DefaultEnv().ReadFile(path_);
  if (!read.ok()) return token_;
  std::string token = std::move(read).value();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (!token.empty()) token_ = std::move(token);
  return token_;
}

void FileTokenSource::Invalidate(const std::string& token) {
  MutexLock lock(mu_);
  if (token == token_) read_at_.reset();  // the kubelet may have rotated it: read again now
}

TokenSourcePtr MakeTokenSource(const Config& config, Clock& clock, std::chrono::seconds refresh) {
  if (!config.token_file.empty()) {
    return std::make_unique<FileTokenSource>(config.token_file, clock, refresh, config.token);
  }
  return std::make_unique<StaticTokenSource>(config.token);
}

}  // namespace dljob::kube
