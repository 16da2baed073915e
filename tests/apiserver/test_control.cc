// RestHandler: the /_test simulation and control API (test_control.h).
#include "tests/apiserver/test_control.h"

#include "base/time_format.h"
#include "tests/apiserver/rest_handler.h"
#include "tests/apiserver/rest_response.h"
#include "tests/apiserver/sim_objects.h"

namespace dljob::apiserver {
namespace {

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    if (slash > start) out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

ApiResult<Json> JsonBody(const HttpRequest& request) {
  if (request.body.empty()) return Json::object();
  Json body = Json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    return BadRequestError(request.path + ": the body must be a JSON object");
  }
  return body;
}

}  // namespace

void RestHandler::ServeTestControl(const HttpRequest& request, ResponseWriter& out) {
  std::vector<std::string> s = Split(request.path.substr(sizeof kTestControlPrefix - 1));
  const std::string& m = request.method;
  std::string now =
      FormatRfc3339(options_.store.now ? options_.store.now() : std::chrono::system_clock::now());
  ApiResult<Json> body = JsonBody(request);
  bool raw_body = s.size() == 4 && s[0] == "pods" && s[3] == "log";
  if (!body.ok() && !raw_body) return RespondError(out, body.error());

  if (m == "POST" && s == std::vector<std::string>{"nodes"}) {
    NodeSpec spec = NodeSpecFromJson(*body);
    if (spec.name.empty())
      return RespondError(out, BadRequestError("/_test/nodes: name: required"));
    ApiResult<Json> node =
        store_.Create(*registry_.FindByKey("nodes"), "", SimulatedNode(spec, now));
    if (!node.ok()) return RespondError(out, node.error());
    return RespondJson(out, 201, *node);
  }
  if (m == "POST" && s.size() == 3 && s[0] == "nodes" && s[2] == "kubelet") {
    if (!body->contains("running") || !(*body)["running"].is_boolean()) {
      return RespondError(out, BadRequestError("/_test/nodes/" + s[1] +
                                               "/kubelet: running: required, true or false"));
    }
    const bool running = (*body)["running"].get<bool>();
    ApiResult<Json> node = store_.Mutate(*registry_.FindByKey("nodes"), "", s[1],
                                         [&](Json& n) -> std::optional<ApiError> {
                                           SetNodeReachable(n, running, now);
                                           return std::nullopt;
                                         });
    if (!node.ok()) return RespondError(out, node.error());
    kubelet_->SetNodeDown(s[1], !running);
    return RespondJson(out, 200, *node);
  }
  if (m == "POST" && s.size() == 4 && s[0] == "pods" && s[3] == "status") {
    PodState state = PodStateFromJson(*body);
    ApiResult<Json> pod = store_.Mutate(*registry_.FindByKey("pods"), s[1], s[2],
                                        [&](Json& p) -> std::optional<ApiError> {
                                          ApplyPodState(p, state, now);
                                          return std::nullopt;
                                        });
    if (!pod.ok()) return RespondError(out, pod.error());
    logs_.Wake(s[1] + "/" + s[2]);  // a followed log ends when its pod finishes
    return RespondJson(out, 200, *pod);
  }
  if (m == "POST" && raw_body) {
    if (ApiResult<Json> pod = store_.Get(*registry_.FindByKey("pods"), s[1], s[2]); !pod.ok()) {
      return RespondError(out, pod.error());
    }
    logs_.Append(s[1] + "/" + s[2], request.body);
    return RespondJson(out, 200, SuccessStatus(200));
  }
  if (s == std::vector<std::string>{"faults"} && (m == "POST" || m == "DELETE")) {
    if (m == "DELETE") {
      faults_.Clear();
      return RespondJson(out, 200, SuccessStatus(200));
    }
    FaultRule rule;
    rule.method = body->value("method", "*");
    rule.path_prefix = body->value("pathPrefix", "");
    rule.code = body->value("code", 500);
    rule.count = body->value("count", 1);
    rule.message = body->value("message", "");
    if (rule.code < 400 || rule.code > 599) {
      return RespondError(out, BadRequestError("/_test/faults: code: must be an HTTP error code "
                                               "(400-599), got " +
                                               std::to_string(rule.code)));
    }
    faults_.Add(std::move(rule));
    return RespondJson(out, 201, SuccessStatus(201));
  }
  if (m == "POST" && s == std::vector<std::string>{"latency"}) {
    LatencyRule rule;
    rule.latency = std::chrono::milliseconds(body->value("milliseconds", 0));
    rule.user_agent = body->value("userAgent", "");
    rule.method = body->value("method", "");
    rule.path_prefix = body->value("pathPrefix", "");
    faults_.SetLatency(std::move(rule));
    return RespondJson(out, 200, SuccessStatus(200));
  }
  if (s == std::vector<std::string>{"writes"} && (m == "GET" || m == "DELETE")) {
    if (m == "DELETE") {
      writes_.Clear();
      return RespondJson(out, 200, SuccessStatus(200));
    }
    Json writes = Json::array();
    for (const AppliedWrite& w : writes_.Entries()) writes.push_back(w.ToJson());
    return RespondJson(out, 200, {{"writes", std::move(writes)}, {"dropped", writes_.dropped()}});
  }
  if (m == "POST" && s == std::vector<std::string>{"watches", "drop"}) {
    DropWatches();
    return RespondJson(out, 200, SuccessStatus(200));
  }
  if (m == "POST" && s == std::vector<std::string>{"compact"}) {
    store_.CompactHistory();
    return RespondJson(out, 200, SuccessStatus(200));
  }
  if (m == "POST" && s == std::vector<std::string>{"kubelet"}) {
    if (body->value("enabled", true)) {
      kubelet_->Enable(std::chrono::milliseconds(body->value("delayMilliseconds", 0)));
    } else {
      kubelet_->Disable();
    }
    return RespondJson(out, 200, SuccessStatus(200));
  }
  if (m == "POST" && s == std::vector<std::string>{"services"}) {
    std::string ns = body->value("namespace", "");
    std::string name = body->value("name", "");
    if (ns.empty() || name.empty()) {
      return RespondError(out, BadRequestError("/_test/services: namespace and name: required"));
    }
    services_.Set(ns, name, body->value("port", 0), body->value("address", ""));
    return RespondJson(out, 200, SuccessStatus(200));
  }
  if (m == "GET" && s == std::vector<std::string>{"info"}) {
    return RespondJson(
        out, 200,
        {{"resourceVersion", std::to_string(store_.resource_version())},
         {"compactedVersion", std::to_string(store_.compacted_version())},
         {"pendingFaults", faults_.pending()},
         {"kubelet",
          {{"enabled", kubelet_->enabled()}, {"delayMilliseconds", kubelet_->delay().count()}}}});
  }
  RespondError(out, ErrorForCode(404, request.method + " " + request.path +
                                          ": no such test control endpoint (see "
                                          "tests/apiserver/test_control.h)"));
}

}  // namespace dljob::apiserver
