// See faults.h.
#include "tests/apiserver/faults.h"

#include <algorithm>
#include <cctype>

namespace dljob::apiserver {
namespace {

bool SameMethod(const std::string& rule, const std::string& method) {
  if (rule.empty() || rule == "*") return true;
  return std::equal(rule.begin(), rule.end(), method.begin(), method.end(), [](char a, char b) {
    return std::toupper(static_cast<unsigned char>(a)) ==
           std::toupper(static_cast<unsigned char>(b));
  });
}

}  // namespace

void Faults::Add(FaultRule rule) {
  MutexLock lock(mu_);
  if (rule.count > 0) rules_.push_back(std::move(rule));
}

void Faults::Clear() {
  MutexLock lock(mu_);
  rules_.clear();
  latencies_.clear();
}

std::optional<ApiError> Faults::Take(const std::string& method, const std::string& path) {
  MutexLock lock(mu_);
  for (auto it = rules_.begin(); it != rules_.end(); ++it) {
    if (!SameMethod(it->method, method) || path.rfind(it->path_prefix, 0) != 0) continue;
    ApiError error = ErrorForCode(
        it->code,
        it->message.empty() ? "injected fault (" + std::to_string(it->code) + ")" : it->message);
    if (--it->count <= 0) rules_.erase(it);
    return error;
  }
  return std::nullopt;
}

size_t Faults::pending() const {
  MutexLock lock(mu_);
  return rules_.size();
}

void Faults::SetLatency(LatencyRule rule) {
  if (rule.method == "*") rule.method.clear();
  MutexLock lock(mu_);
  std::erase_if(latencies_, [&](const LatencyRule& r) {
    return r.user_agent == rule.user_agent && r.method == rule.method &&
           r.path_prefix == rule.path_prefix;
  });
  if (rule.latency.count() > 0) latencies_.push_back(std::move(rule));
}

std::chrono::milliseconds Faults::LatencyFor(const std::string& method, const std::string& path,
                                             const std::string& user_agent) const {
  MutexLock lock(mu_);
  for (auto it = latencies_.rbegin(); it != latencies_.rend(); ++it) {
    if (!SameMethod(it->method, method) || path.rfind(it->path_prefix, 0) != 0) continue;
    if (!it->user_agent.empty() && it->user_agent != user_agent) continue;
    return it->latency;
  }
  return std::chrono::milliseconds(0);
}

}  // namespace dljob::apiserver
