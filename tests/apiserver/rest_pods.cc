// RestHandler: the pods/binding and pods/log subresources. See rest_handler.h.
#include <algorithm>
#include <sstream>

#include "base/time_format.h"
#include "tests/apiserver/log_serving.h"
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
  std::string error;
  std::optional<LogRequest> asked = ParseLogRequest(query, error);
  if (!asked) return RespondError(out, BadRequestError(error));
  const uint64_t epoch = watch_epoch_;
  struct Follower {  // counted while its stream lasts; a plain read is over at once
    std::atomic<int64_t>& n;
    bool counted;
    ~Follower() {
      if (counted) --n;
    }
  } follower{followers_, asked->follow};
  if (asked->follow) ++followers_;
  // A follower is woken when its pod's log grows, when the simulated kubelet or the test control
  // ends its pod, and when the pod is deleted; it also looks at its pod every idle_check, for a
  // client's own status write and a client gone. With many followers that look is spread out, at
  // most about kChecksPerIdleCheck of them each idle_check: at ten thousand followed logs, every
  // one looking five times a second was most of this server's CPU. (At a thousand, a copy of the
  // pod at each look had been.)
  constexpr int64_t kChecksPerIdleCheck = 500;
  LogFollow follow;
  follow.finished = [&] {
    ObjectPtr pod = store_.Find(pods, path.ns, path.name);
    return !pod || PodFinished(*pod);
  };
  follow.go_on = [&] { return !Stopping(epoch); };
  follow.idle = [&] {
    return options_.idle_check * std::max<int64_t>(1, followers_.load() / kChecksPerIdleCheck);
  };
  ServePodLog(logs_, path.ns + "/" + path.name, *asked, follow, out);
}

}  // namespace dljob::apiserver
