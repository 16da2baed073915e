// See spans.h.
#include "kube/runtime/spans.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <utility>

namespace dljob::kube {

namespace {

constexpr size_t kFlushBytes = 1 << 16;

double FractionalUnixSeconds(WallTime t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

WallTime FromUnixSeconds(double s) {
  return WallTime(std::chrono::duration_cast<WallTime::duration>(
      std::chrono::microseconds(std::llround(s * 1e6))));
}

std::string ResourceName(const Resource& r, const std::string& subresource = "") {
  return subresource.empty() ? r.plural : r.plural + "/" + subresource;
}

thread_local std::string current_key;

}  // namespace

std::string SpanToJsonLine(const Span& span) {
  Json j = {{"key", span.key},
            {"name", span.name},
            {"detail", span.detail},
            {"start", std::round(FractionalUnixSeconds(span.start) * 1e6) / 1e6},
            {"end", std::round(FractionalUnixSeconds(span.end) * 1e6) / 1e6}};
  return j.dump();
}

std::optional<Span> SpanFromJsonLine(const std::string& line) {
  Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  for (const char* field : {"key", "name", "detail"}) {
    if (!j.contains(field) || !j[field].is_string()) return std::nullopt;
  }
  for (const char* field : {"start", "end"}) {
    if (!j.contains(field) || !j[field].is_number()) return std::nullopt;
  }
  return Span{j["key"].get<std::string>(), j["name"].get<std::string>(),
              j["detail"].get<std::string>(), FromUnixSeconds(j["start"].get<double>()),
              FromUnixSeconds(j["end"].get<double>())};
}

Result<std::vector<Span>> ReadSpanFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read spans from " + path + ": " + std::strerror(errno));
  std::vector<Span> spans;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty()) continue;
    std::optional<Span> span = SpanFromJsonLine(line);
    if (!span) {
      return Status::InvalidArgument(path + ":" + std::to_string(number) +
                                     ": not a span (a JSON object with key, name, detail, start, "
                                     "end)");
    }
    spans.push_back(std::move(*span));
  }
  return spans;
}

Result<std::unique_ptr<SpanFile>> SpanFile::Open(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (!file) {
    return Status::InvalidArgument("cannot write spans to " + path + ": " + std::strerror(errno));
  }
  return std::unique_ptr<SpanFile>(new SpanFile(file));
}

SpanFile::~SpanFile() {
  MutexLock lock(mu_);
  FlushLocked();
  std::fclose(file_);
}

void SpanFile::Record(Span span) {
  std::string line = SpanToJsonLine(span);
  MutexLock lock(mu_);
  buffer_ += line;
  buffer_ += '\n';
  if (buffer_.size() >= kFlushBytes) FlushLocked();
}

void SpanFile::Flush() {
  MutexLock lock(mu_);
  FlushLocked();
}

void SpanFile::FlushLocked() {
  if (buffer_.empty()) return;
  std::fwrite(buffer_.data(), 1, buffer_.size(), file_);
  std::fflush(file_);
  buffer_.clear();
}

SpanScope::SpanScope(std::string key) : outer_(std::exchange(current_key, std::move(key))) {}

SpanScope::~SpanScope() { current_key = std::move(outer_); }

const std::string& SpanScope::Current() { return current_key; }

TracedApi::TracedApi(Api& inner, SpanSink& sink, const Clock& clock)
    : inner_(inner), sink_(sink), clock_(clock) {}

TracedApi::TracedApi(std::unique_ptr<Api> owned, SpanSink& sink, const Clock& clock)
    : owned_(std::move(owned)), inner_(*owned_), sink_(sink), clock_(clock) {}

template <typename F>
auto TracedApi::Traced(std::string detail, F&& call) -> decltype(call(std::declval<Api&>())) {
  const WallTime start = clock_.Now();
  auto result = call(inner_);
  sink_.Record(Span{SpanScope::Current(), "api", std::move(detail), start, clock_.Now()});
  return result;
}

ApiResult<Json> TracedApi::Get(const Resource& r, const std::string& ns, const std::string& name) {
  return Traced("get " + ResourceName(r), [&](Api& api) { return api.Get(r, ns, name); });
}

ApiResult<Json> TracedApi::List(const Resource& r, const std::string& ns,
                                const ListOptions& options) {
  return Traced("list " + ResourceName(r), [&](Api& api) { return api.List(r, ns, options); });
}

ApiResult<Json> TracedApi::Create(const Resource& r, const std::string& ns, const Json& object) {
  return Traced("create " + ResourceName(r), [&](Api& api) { return api.Create(r, ns, object); });
}

ApiResult<Json> TracedApi::Replace(const Resource& r, const std::string& ns, const Json& object) {
  return Traced("update " + ResourceName(r), [&](Api& api) { return api.Replace(r, ns, object); });
}

ApiResult<Json> TracedApi::ReplaceStatus(const Resource& r, const std::string& ns,
                                         const Json& object) {
  return Traced("update " + ResourceName(r, "status"),
                [&](Api& api) { return api.ReplaceStatus(r, ns, object); });
}

ApiResult<Json> TracedApi::MergePatch(const Resource& r, const std::string& ns,
                                      const std::string& name, const Json& patch,
                                      const std::string& subresource) {
  return Traced("patch " + ResourceName(r, subresource),
                [&](Api& api) { return api.MergePatch(r, ns, name, patch, subresource); });
}

ApiResult<Json> TracedApi::Delete(const Resource& r, const std::string& ns, const std::string& name,
                                  const DeleteOptions& options) {
  return Traced("delete " + ResourceName(r),
                [&](Api& api) { return api.Delete(r, ns, name, options); });
}

ApiResult<WatchStreamPtr> TracedApi::Watch(const Resource& r, const std::string& ns,
                                           const ListOptions& options) {
  return Traced("watch " + ResourceName(r), [&](Api& api) { return api.Watch(r, ns, options); });
}

ApiResult<Json> TracedApi::Bind(const std::string& ns, const std::string& pod,
                                const std::string& node) {
  return Traced("create pods/binding", [&](Api& api) { return api.Bind(ns, pod, node); });
}

ApiResult<LineStreamPtr> TracedApi::Logs(const std::string& ns, const std::string& pod,
                                         const LogOptions& options) {
  return Traced("get pods/log", [&](Api& api) { return api.Logs(ns, pod, options); });
}

ApiResult<std::string> TracedApi::ServiceProxyGet(const std::string& ns, const std::string& service,
                                                  const std::string& path,
                                                  const std::string& token_header) {
  return Traced("get services/proxy",
                [&](Api& api) { return api.ServiceProxyGet(ns, service, path, token_header); });
}

std::unique_ptr<Api> TracedApi::WithDeadline(Clock::MonotonicTime deadline) {
  return std::unique_ptr<Api>(new TracedApi(inner_.WithDeadline(deadline), sink_, clock_));
}

}  // namespace dljob::kube
