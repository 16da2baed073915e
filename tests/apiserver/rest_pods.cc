// RestHandler: the pods/binding and pods/log subresources. See rest_handler.h.
#include <algorithm>
#include <sstream>

#include "base/time_format.h"
#include "tests/apiserver/rest_handler.h"
#include "tests/apiserver/rest_response.h"
#include "tests/apiserver/sim_objects.h"

namespace dljob::apiserver {
void RestHandler::ServeBinding(const HttpRequest& request, const RestPath& path,
                               const ResourceType& type, ResponseWriter& out) {
  Json binding = Json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (binding.is_discarded() || !binding.is_object()) {
    return RespondError(out, BadRequestError("the body of a binding must be a v1 Binding object"));
  }
  std::string node = binding.value("target", Json::object()).value("name", "");
  if (node.empty()) {
    return RespondError(out, InvalidError("Binding", path.name, "target.name: Required value"));
  }
  std::string now =
      FormatRfc3339(options_.store.now ? options_.store.now() : std::chrono::system_clock::now());
  ApiResult<Json> bound =
      store_.Mutate(type, path.ns, path.name, [&](Json& pod) -> std::optional<ApiError> {
        // As the real server's BindingREST: a pod being deleted or bound already is a 409, and
        // the binding replaces the PodScheduled condition (a scheduler's False/Unschedulable, with
        // its reason and message) by a bare True, keeping its transition time if it was True.
        if (pod["metadata"].contains("deletionTimestamp")) {
          return ConflictError(
              "pods/binding", path.name,
              "pod " + path.name + " is being deleted, cannot be assigned to a host");
        }
        if (!pod["spec"].is_object()) pod["spec"] = Json::object();
        std::string current = pod["spec"].value("nodeName", "");
        if (!current.empty()) {
          return ConflictError(
              "pods/binding", path.name,
              "pod " + path.name + " is already assigned to node \"" + current + "\"");
        }
        pod["spec"]["nodeName"] = node;
        Json& conditions = pod["status"]["conditions"];
        if (!conditions.is_array()) conditions = Json::array();
        Json scheduled = {{"type", "PodScheduled"},
                          {"status", "True"},
                          {"lastProbeTime", nullptr},
                          {"lastTransitionTime", now}};
        for (Json& c : conditions) {
          if (c.value("type", "") != "PodScheduled") continue;
          if (c.value("status", "") == "True")
            scheduled["lastTransitionTime"] = c["lastTransitionTime"];
          c = scheduled;
          return std::nullopt;
        }
        conditions.push_back(scheduled);
        return std::nullopt;
      });
  if (!bound.ok()) return RespondError(out, bound.error());
  RespondJson(out, 201, SuccessStatus(201));
}

void RestHandler::ServeLog(const HttpRequest& request, const RestPath& path,
                           const QueryParams& query, ResponseWriter& out) {
  ResourceType pods = *registry_.FindByKey("pods");
  if (ApiResult<Json> pod = store_.Get(pods, path.ns, path.name); !pod.ok()) {
    return RespondError(out, pod.error());
  }
  int64_t tail = -1;
  if (query.count("tailLines")) {
    try {
      tail = std::stoll(query.at("tailLines"));
    } catch (...) {
      return RespondError(out, BadRequestError("tailLines: must be an integer"));
    }
  }
  const std::string key = path.ns + "/" + path.name;
  const bool stamped = QueryFlag(query, "timestamps");
  // The log from `offset` on as served: with each line's time first when asked for.
  auto serve = [&](size_t offset, const std::string& text) {
    return stamped ? logs_.Stamped(key, offset, text) : text;
  };
  std::string text = logs_.Read(key);
  if (!QueryFlag(query, "follow")) {
    return out.Respond(200, {{"Content-Type", "text/plain"}}, TailLines(serve(0, text), tail));
  }
  const uint64_t epoch = watch_epoch_;
  ++followers_;
  struct Unfollow {
    std::atomic<int64_t>& n;
    ~Unfollow() { --n; }
  } unfollow{followers_};
  out.StartStream(200, {{"Content-Type", "text/plain"}});
  size_t offset = text.size();
  if (!text.empty() && !out.Write(TailLines(serve(0, text), tail))) return;
  while (!Stopping(epoch) && out.Connected()) {
    // A follower is woken when its pod's log grows, when the simulated kubelet or the test control
    // ends its pod, and when the pod is deleted; it also looks at its pod every idle_check, for a
    // client's own status write and a client gone. With many followers that look is spread
    // out, at most about kChecksPerIdleCheck of them each idle_check: at ten thousand followed
    // logs, every one looking five times a second was most of this server's CPU. (At a thousand,
    // a copy of the pod at each look had been.)
    ObjectPtr pod = store_.Find(pods, path.ns, path.name);
    bool finished = !pod || PodFinished(*pod);
    std::string more = logs_.Read(key, offset);  // read after the check: no line is lost
    if (!more.empty() && !out.Write(serve(offset, more))) return;
    offset += more.size();
    if (finished && !logs_.Unread(key, offset)) return;  // every line sent, as a kubelet does
    constexpr int64_t kChecksPerIdleCheck = 500;
    const int64_t spread = std::max<int64_t>(1, followers_.load() / kChecksPerIdleCheck);
    logs_.WaitForMore(key, offset, std::chrono::steady_clock::now() + options_.idle_check * spread);
  }
}

}  // namespace dljob::apiserver
