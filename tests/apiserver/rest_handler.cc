// See rest_handler.h. This file routes requests and serves discovery and CRD registration;
// objects are in rest_objects.cc, watches in rest_watch.cc, pod subresources in rest_pods.cc,
// /_test in test_control.cc.
#include "tests/apiserver/rest_handler.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/time_format.h"
#include "jobs/codec.h"
#include "tests/apiserver/discovery.h"
#include "tests/apiserver/openapi.h"
#include "tests/apiserver/openapi_v2_proto.h"
#include "tests/apiserver/request_deadline.h"
#include "tests/apiserver/rest_response.h"
#include "tests/apiserver/rest_reviews.h"

namespace dljob::apiserver {
namespace {

std::string NowText(const StoreOptions& options) {
  return FormatRfc3339(options.now ? options.now() : std::chrono::system_clock::now());
}

// The documents of a YAML stream, split at "---" lines.
std::vector<std::string> YamlDocuments(const std::string& text) {
  std::vector<std::string> docs(1);
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("---", 0) == 0) {
      docs.emplace_back();
    } else {
      docs.back() += line + "\n";
    }
  }
  return docs;
}

}  // namespace

RestHandler::RestHandler(RestOptions options)
    : options_(std::move(options)), store_(options_.store), logs_(options_.log_delay) {
  kubelet_ = std::make_unique<SimKubelet>(
      store_, *registry_.FindByKey("pods"), [this] { return NowText(options_.store); },
      options_.graceful_pod_deletion,
      // A followed log ends when its pod finishes.
      [this](const std::string& ns, const std::string& name) { logs_.Wake(ns + "/" + name); });
  for (ResourceType& t : RbacTypes()) registry_.Add(std::move(t));  // rest_reviews.h
  ResourceType namespaces = *registry_.FindByKey("namespaces");
  for (const std::string& ns : options_.namespaces) {
    store_.Create(namespaces, "", {{"metadata", {{"name", ns}}}});
  }
}

Result<std::unique_ptr<RestHandler>> RestHandler::Create(RestOptions options) {
  std::vector<std::string> files = options.crd_files;
  auto handler = std::make_unique<RestHandler>(std::move(options));
  for (const std::string& file : files) {
    Status loaded = handler->LoadCrdFile(file);
    if (!loaded.ok()) return loaded;
  }
  return handler;
}

RestHandler::~RestHandler() { Shutdown(); }

Handler RestHandler::AsHandler() {
  return [this](const HttpRequest& request, ResponseWriter& out) { Serve(request, out); };
}

void RestHandler::Serve(const HttpRequest& request, ResponseWriter& out) {
  try {
    if (request.path == "/_test" || request.path.rfind("/_test/", 0) == 0) {
      ServeTestControl(request, out);
      return;
    }
    if (std::optional<ApiError> late = Delay(request)) {
      RespondError(out, *late);
      return;
    }
    if (std::optional<ApiError> fault = faults_.Take(request.method, request.path)) {
      RespondError(out, *fault);
      return;
    }
    if (!IsWriteMethod(request.method)) {
      ServeApi(request, ParseRestPath(request.path), out);
      return;
    }
    WriteRecorder recorder(out, writes_, request, [this] {
      return FormatRfc3339Micros(options_.store.now ? options_.store.now()
                                                    : std::chrono::system_clock::now());
    });
    ServeApi(request, ParseRestPath(request.path), recorder);
  } catch (const nlohmann::json::exception& e) {
    // A body of the wrong shape (a string where an object belongs, …).
    RespondError(out, BadRequestError(std::string("malformed request body: ") + e.what()));
  }
}

std::optional<ApiError> RestHandler::Delay(const HttpRequest& request) {
  using Steady = std::chrono::steady_clock;
  const Steady::time_point received = Steady::now();
  ApiResult<std::optional<std::chrono::nanoseconds>> timeout =
      RequestTimeout(request.path, ParseQuery(request.query));
  if (!timeout.ok()) return timeout.error();
  std::optional<Steady::time_point> deadline;
  if (*timeout) deadline = received + std::chrono::duration_cast<Steady::duration>(**timeout);
  Steady::time_point until = received + faults_.LatencyFor(request.method, request.path,
                                                           RequestHeader(request, "User-Agent"));
  if (deadline) until = std::min(until, *deadline);
  // In slices, so that Shutdown() does not wait for a long latency.
  for (Steady::time_point now = Steady::now(); now < until && !shut_down_; now = Steady::now()) {
    std::this_thread::sleep_for(
        std::min<Steady::duration>(until - now, std::chrono::milliseconds(50)));
  }
  if (deadline && Steady::now() >= *deadline) return RequestTimedOut();
  return std::nullopt;
}

void RestHandler::ServeApi(const HttpRequest& request, const RestPath& path, ResponseWriter& out) {
  if (path.kind == RestPath::Kind::kUnknown) {
    if (request.path == "/healthz" || request.path == "/readyz" || request.path == "/livez") {
      out.Respond(200, {{"Content-Type", "text/plain"}}, "ok");
      return;
    }
    if (request.method == "GET" && request.path == "/openapi/v3") {
      RespondJson(out, 200, OpenApiV3Index(registry_.All()));
      return;
    }
    if (request.method == "GET" && request.path == "/openapi/v2") {
      switch (NegotiateOpenApiV2(RequestHeader(request, "Accept"))) {
        case OpenApiV2Format::kJson:
          return RespondJson(out, 200, OpenApiV2Document(registry_.All()));
        case OpenApiV2Format::kProtobuf:
          return out.Respond(200, {{"Content-Type", kOpenApiV2ProtobufType}},
                             EncodeOpenApiV2(OpenApiV2Document(registry_.All())));
        case OpenApiV2Format::kNotAcceptable:
          return out.Respond(406, {}, "");
      }
    }
    if (request.method == "GET" && request.path.rfind("/openapi/v3/", 0) == 0) {
      std::optional<Json> doc =
          OpenApiV3Document(registry_.All(), request.path.substr(sizeof("/openapi/v3/") - 1));
      if (doc) return RespondJson(out, 200, *doc);
    }
    RespondError(out, ErrorForCode(404, "the server could not find the requested resource"));
    return;
  }
  if (path.kind != RestPath::Kind::kResource) {
    ServeDiscovery(request, path, out);
    return;
  }
  if (ServeReview(request, path, store_, registry_, out)) return;  // rest_reviews.h
  std::optional<ResourceType> type = registry_.Find(path.group, path.version, path.plural);
  if (!type) {
    RespondError(out, ErrorForCode(404, "the server could not find the requested resource"));
    return;
  }
  if (!type->namespaced && !path.ns.empty()) {
    RespondError(out, ErrorForCode(404, "the server could not find the requested resource"));
    return;
  }
  ServeResource(request, path, *type, out);
}

void RestHandler::ServeDiscovery(const HttpRequest& request, const RestPath& path,
                                 ResponseWriter& out) {
  if (request.method != "GET") {
    RespondError(out, MethodNotAllowedError("the server does not allow this method on the "
                                            "requested resource"));
    return;
  }
  std::vector<ResourceType> types = registry_.All();
  std::optional<Json> doc;
  switch (path.kind) {
    case RestPath::Kind::kVersion:
      doc = VersionInfo();
      break;
    case RestPath::Kind::kApiVersions:
      doc = ApiVersions(options_.server_address);
      break;
    case RestPath::Kind::kGroupList:
      doc = GroupList(types);
      break;
    case RestPath::Kind::kGroup:
      doc = GroupDocument(types, path.group);
      break;
    case RestPath::Kind::kResourceList:
      doc = ResourceList(types, path.group, path.version);
      break;
    default:
      break;
  }
  if (!doc) {
    RespondError(out, ErrorForCode(404, "the server could not find the requested resource"));
    return;
  }
  RespondJson(out, 200, *doc);
}

Status RestHandler::RegisterCrd(const Json& crd) {
  Result<ResourceType> type = TypeFromCrd(crd);
  if (!type.ok()) return type.status();
  ResourceType crds = *registry_.FindByKey("customresourcedefinitions.apiextensions.k8s.io");
  Json object = crd;
  std::string name = type->plural + "." + type->group;
  object["metadata"]["name"] = name;
  ApiResult<Json> existing = store_.Get(crds, "", name);
  ApiResult<Json> stored =
      existing.ok() ? store_.MergePatch(crds, "", name, object) : store_.Create(crds, "", object);
  if (!stored.ok()) return stored.error().ToStatus();
  ApiResult<Json> done = AfterCrdWrite(*stored);
  return done.ok() ? Status::Ok() : done.error().ToStatus();
}

Status RestHandler::LoadCrdFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(path + ": cannot read the CRD file");
  std::stringstream text;
  text << in.rdbuf();
  for (const std::string& doc : YamlDocuments(text.str())) {
    if (doc.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    Result<nlohmann::json> json = YamlToJson(doc);
    if (!json.ok()) return json.status().WithContext(path);
    if (json->is_null()) continue;
    Status registered = RegisterCrd(*json);
    if (!registered.ok()) return registered.WithContext(path);
  }
  return Status::Ok();
}

void RestHandler::DropWatches() {
  ++watch_epoch_;
  store_.Interrupt();
  logs_.Wake();
}

void RestHandler::Shutdown() {
  shut_down_ = true;
  DropWatches();
  if (kubelet_) kubelet_->Disable();
}

bool RestHandler::Stopping(uint64_t watch_epoch) const {
  return shut_down_ || watch_epoch_ != watch_epoch;
}

}  // namespace dljob::apiserver
