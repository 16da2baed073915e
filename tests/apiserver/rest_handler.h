// RestHandler: the test API server's REST layer — the Kubernetes API over an ObjectStore, as a
// Handler (http/http.h) that the HTTP server (http/http_server.h) or a unit
// test calls directly.
//
// Serves, in the real API server's JSON shapes: /version; discovery (/api, /api/v1, /apis,
// /apis/{group}, /apis/{group}/{version}); get, list (label/field selectors, limit/continue),
// watch (resourceVersion, allowWatchBookmarks, timeoutSeconds; 410 as an ERROR event), create,
// update (PUT), patch (merge patch; strategic merge patch for built-in types (strategic_patch.h);
// JSON patch; server-side apply, application/apply-patch+yaml, rest_apply.cc), delete
// (DeleteOptions body or propagationPolicy query) for every registered type, namespaced and
// across namespaces; status subresources; pods/binding; pods/log (follow); Tables for `kubectl
// get`; OpenAPI v3 and v2 (openapi.h). Every client write records its field manager in
// metadata.managedFields (field_manager.h): the fieldManager parameter, else the User-Agent's
// product. POSTing a CustomResourceDefinition registers its type. Client writes (create, update,
// patch, apply, delete) go to the validating admission webhooks of the stored
// ValidatingWebhookConfigurations after the built-in admission and before they are stored, outside
// the store's lock (webhook_dispatcher.h; rest_webhooks.cc).
// /_test/... is the simulation and fault-injection API (test_control.h lists the endpoints).
// A request's `timeout` parameter is honoured as kube-apiserver does (request_deadline.h): once it
// has passed — during an injected latency, say — the answer is 504 and nothing is applied. Every
// applied write is logged with its client (write_log.h).
//
// Thread-safety: Serve() may run on many threads at once; a watch or followed log blocks its
// caller's thread until it ends (timeout, client gone, DropWatches(), Shutdown()). The handler
// must outlive every call to Serve(); destroy it only after the HTTP server has stopped.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "tests/apiserver/admission.h"
#include "tests/apiserver/faults.h"
#include "tests/apiserver/field_manager.h"
#include "tests/apiserver/object_store.h"
#include "tests/apiserver/pod_logs.h"
#include "tests/apiserver/resource_types.h"
#include "tests/apiserver/rest_path.h"
#include "tests/apiserver/rest_response.h"
#include "tests/apiserver/sim_kubelet.h"
#include "tests/apiserver/webhook_dispatcher.h"
#include "tests/apiserver/write_log.h"

namespace dljob::apiserver {

struct RestOptions {
  StoreOptions store;
  // Namespaces that exist from the start.
  std::vector<std::string> namespaces = {"default", "kube-system", "kube-public",
                                         "kube-node-lease"};
  // CRD manifests (YAML or JSON) registered at start, e.g. charts/dljob/crds/dljob.io_dljobs.yaml.
  std::vector<std::string> crd_files;
  std::chrono::milliseconds bookmark_interval{std::chrono::seconds(10)};
  std::chrono::seconds max_watch_timeout{std::chrono::minutes(30)};  // also the default
  // How often an idle watch or followed log checks that its client is still there.
  std::chrono::milliseconds idle_check{std::chrono::milliseconds(200)};
  std::string server_address = "127.0.0.1";  // for /api's serverAddressByClientCIDRs
  // While the simulated kubelet is enabled, deleting a running pod marks it (deletionTimestamp)
  // and the kubelet removes it, as on a real cluster (ObjectStore::SetGracefulPodDeletion).
  // On by default; false: deleted pods vanish at once even while the kubelet runs.
  bool graceful_pod_deletion = true;
  // How long appended pod log text takes to reach readers (pod_logs.h); 0: at once.
  std::chrono::milliseconds log_delay{0};
};

class RestHandler {
 public:
  // Loads options.crd_files; a file that does not load is a Status from Create().
  static Result<std::unique_ptr<RestHandler>> Create(RestOptions options = {});
  explicit RestHandler(RestOptions options = {});  // no CRD files
  ~RestHandler();                                  // Shutdown()
  RestHandler(const RestHandler&) = delete;
  RestHandler& operator=(const RestHandler&) = delete;

  // A Handler that calls Serve() on this object.
  Handler AsHandler();
  void Serve(const HttpRequest& request, ResponseWriter& out);

  // Stores an apiextensions.k8s.io/v1 CustomResourceDefinition (create or replace) and serves
  // its type. Errors name the missing field.
  Status RegisterCrd(const Json& crd);
  // RegisterCrd for each document of a YAML or JSON file.
  Status LoadCrdFile(const std::string& path);

  // Ends every open watch now (clients see their stream end and must re-watch).
  void DropWatches();
  // Ends open watches and followed logs and stops the simulated kubelet; later watches end
  // at once.
  void Shutdown();

  ObjectStore& store() { return store_; }
  ResourceRegistry& registry() { return registry_; }
  PodLogs& logs() { return logs_; }
  Faults& faults() { return faults_; }
  SimKubelet& kubelet() { return *kubelet_; }
  WriteLog& writes() { return writes_; }
  // Where calls to webhooks named by a Service go (webhook_dispatcher.h).
  ServiceRoutes& services() { return services_; }

 private:
  // Waits out the request's injected latency, or until its `timeout` has passed; the error to
  // answer instead of serving it, if any.
  std::optional<ApiError> Delay(const HttpRequest& request);
  void ServeApi(const HttpRequest& request, const RestPath& path, ResponseWriter& out);
  void ServeDiscovery(const HttpRequest& request, const RestPath& path, ResponseWriter& out);
  // rest_objects.cc
  void ServeResource(const HttpRequest& request, const RestPath& path, const ResourceType& type,
                     ResponseWriter& out);
  void ServeList(const HttpRequest& request, const RestPath& path, const ResourceType& type,
                 const QueryParams& query, ResponseWriter& out);
  void ServePatch(const HttpRequest& request, const RestPath& path, const ResourceType& type,
                  FieldValidation mode, ResponseWriter& out);
  // rest_apply.cc
  void ServeApply(const HttpRequest& request, const RestPath& path, const ResourceType& type,
                  FieldValidation mode, const QueryParams& query, ResponseWriter& out);
  // Stores what an apply computed: a create when `current` is null, else an update at its
  // version (a stale version is a Conflict for the caller to retry).
  ApiResult<Json> StoreApplied(const ResourceType& type, const RestPath& path, FieldValidation mode,
                               const Json* current, Json object, AdmissionReport* report,
                               const ObjectStore::Review& review);
  // What field management needs to know of a write by `manager` to `path`.
  WriteContext FieldsContext(const ResourceType& type, const RestPath& path,
                             const std::string& manager) const;
  // The managedFields a write stores, given the stored object (null for a create) and the one
  // about to be stored.
  using ManagedFieldsFn = std::function<Json(const Json* old, const Json& object)>;
  // The admission of one client write (admission.h), reporting into `report`, then its
  // managedFields from `managed`.
  static ObjectStore::Admission AdmitWith(const ResourceType& type, FieldValidation mode,
                                          bool patch, AdmissionReport* report,
                                          ManagedFieldsFn managed);
  void ServeDelete(const HttpRequest& request, const RestPath& path, const ResourceType& type,
                   const QueryParams& query, ResponseWriter& out);
  // rest_webhooks.cc: the validating webhooks' review of one client create or update (null when
  // no webhook is configured), their warnings and a refusal's details reported into `report`.
  ObjectStore::Review ReviewWith(const HttpRequest& request, const RestPath& path,
                                 const ResourceType& type, const QueryParams& query,
                                 AdmissionReport* report) const;
  // A delete, reviewed by the webhooks first; again from the start when the object changed in
  // between and the client sent no resourceVersion precondition.
  ApiResult<Json> ReviewedDelete(const HttpRequest& request, const RestPath& path,
                                 const ResourceType& type, const QueryParams& query,
                                 const DeleteRequest& del, AdmissionReport* report);
  // The CRD side effects of a write to customresourcedefinitions.
  ApiResult<Json> AfterCrdWrite(const Json& crd);
  void AfterCrdDelete(const Json& crd);
  // rest_watch.cc
  void ServeWatch(const HttpRequest& request, const RestPath& path, const ResourceType& type,
                  const QueryParams& query, ResponseWriter& out);
  // rest_pods.cc
  void ServeBinding(const HttpRequest& request, const RestPath& path, const ResourceType& type,
                    ResponseWriter& out);
  void ServeLog(const HttpRequest& request, const RestPath& path, const QueryParams& query,
                ResponseWriter& out);
  // test_control.cc
  void ServeTestControl(const HttpRequest& request, ResponseWriter& out);
  bool Stopping(uint64_t watch_epoch) const;

  static constexpr char kCrdKey[] = "customresourcedefinitions.apiextensions.k8s.io";

  const RestOptions options_;
  ResourceRegistry registry_;
  ObjectStore store_;
  PodLogs logs_;
  Faults faults_;
  WriteLog writes_;
  ServiceRoutes services_;
  WebhookDispatcher webhooks_{store_, services_};
  std::unique_ptr<SimKubelet> kubelet_;
  std::atomic<uint64_t> watch_epoch_{0};  // DropWatches() bumps it
  std::atomic<int64_t> followers_{0};     // followed logs being served
  std::atomic<bool> shut_down_{false};
};

}  // namespace dljob::apiserver
