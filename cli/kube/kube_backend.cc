#include "cli/kube/kube_backend.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "cli/kube/launcher_log.h"
#include "jobs/codec.h"
#include "kube/http_api.h"

namespace dljob {
namespace {

using kube::Json;

KubeBackendOptions WithDefaults(KubeBackendOptions options) {
  if (options.namespace_.empty()) options.namespace_ = "default";
  if (!options.clock) options.clock = &RealClock();
  return options;
}

// A DLJob from the API. Fields this build does not know (a newer operator) are reported by the
// decoder but do not hide the job: what could be read is shown.
DLJob Decode(const Json& object) { return DecodeTree(object).job; }

}  // namespace

KubeBackend::KubeBackend(std::unique_ptr<kube::Api> api, KubeBackendOptions options)
    : owned_(std::move(api)), api_(*owned_), options_(WithDefaults(std::move(options))) {}

KubeBackend::KubeBackend(kube::Api& api, KubeBackendOptions options)
    : api_(api), options_(WithDefaults(std::move(options))) {}

Status KubeBackend::Failure(const kube::ApiError& error, const std::string& what,
                            const std::string& permission) const {
  std::string where = options_.cluster.empty() ? "" : " (cluster " + options_.cluster + ")";
  if (error.reason == kube::kReasonNoCredentials) {  // the kubeconfig's credential plugin failed
    return Status::FailedPrecondition(what + ": no credentials for the Kubernetes API server" +
                                      where + ": " + error.message);
  }
  if (error.http == 0) {
    return Status::Unavailable(what + ": cannot reach the Kubernetes API server" + where + ": " +
                               error.message +
                               "; check the cluster is up and --kubeconfig/"
                               "--context point at it, or use --local");
  }
  if (error.http == 401 || error.http == 403) {
    return Status::FailedPrecondition(what + ": " + error.ToString() + where +
                                      "; check your credentials and that your user may " +
                                      permission);
  }
  return error.ToStatus().WithContext(what);
}

Result<DLJob> KubeBackend::Submit(const DLJob& job, JobObserver& /*observer*/) {
  DLJob clean = job;
  clean.status = DLJobStatus{};  // the operator owns status; a create does not set it
  if (clean.metadata.namespace_.empty()) clean.metadata.namespace_ = options_.namespace_;
  const std::string& ns = clean.metadata.namespace_;
  Json object = EncodeTree(clean);
  object.erase("status");
  // With no name, the generateName goes as it is: the API server draws the name (and draws again
  // when one is taken), so a 409 means it gave up, and a retry here would only ask again.
  const std::string& generate_name = clean.metadata.generate_name;
  const bool named_by_server = clean.metadata.name.empty();
  kube::ApiResult<Json> created = api_.Create(kube::resources::kDLJobs, ns, object);
  if (!created.ok()) {
    const kube::ApiError& e = created.error();
    std::string what = "creating DLJob " + ns + "/" +
                       (named_by_server ? generate_name + "* (generateName)" : clean.metadata.name);
    if (e.IsAlreadyExists() && named_by_server) {
      return Status::AlreadyExists("the API server found no free name starting \"" + generate_name +
                                   "\" in namespace \"" + ns + "\": " + e.message);
    }
    if (e.IsAlreadyExists()) {
      return Status::AlreadyExists("a DLJob named \"" + clean.metadata.name +
                                   "\" already exists in namespace \"" + ns + "\"");
    }
    if (e.IsNotFound()) {
      return Status::FailedPrecondition(
          what + ": the cluster does not know DLJobs (" + e.ToString() +
          "); install dljob there first: helm install dljob charts/dljob -n dljob-system "
          "--create-namespace");
    }
    return Failure(e, what);
  }
  return Decode(*created);
}

Result<std::vector<DLJob>> KubeBackend::List() {
  return ListJobs(options_.all_namespaces ? "" : options_.namespace_);
}

Result<std::vector<DLJob>> KubeBackend::ListJobs(const std::string& ns) {
  kube::ApiResult<Json> list = kube::ListAll(api_, kube::resources::kDLJobs, ns);
  if (!list.ok()) {
    std::string what = "listing DLJobs" + (ns.empty() ? std::string(" in all namespaces")
                                                      : " in namespace \"" + ns + "\"");
    if (list.error().IsNotFound()) {
      return Status::FailedPrecondition(what +
                                        ": the cluster does not know DLJobs; install "
                                        "dljob there first: helm install dljob charts/dljob");
    }
    return Failure(list.error(), what);
  }
  std::vector<DLJob> jobs;
  for (const Json& item : (*list)["items"]) jobs.push_back(Decode(item));
  std::sort(jobs.begin(), jobs.end(), [](const DLJob& a, const DLJob& b) {
    if (a.metadata.creation_timestamp != b.metadata.creation_timestamp) {
      return a.metadata.creation_timestamp > b.metadata.creation_timestamp;
    }
    if (a.metadata.namespace_ != b.metadata.namespace_) {
      return a.metadata.namespace_ < b.metadata.namespace_;
    }
    return a.metadata.name < b.metadata.name;
  });
  return jobs;
}

Result<DLJob> KubeBackend::Get(const std::string& name) {
  const std::string& ns = options_.namespace_;
  kube::ApiResult<Json> job = api_.Get(kube::resources::kDLJobs, ns, name);
  if (!job.ok()) {
    if (job.error().IsNotFound()) {
      return Status::NotFound("no DLJob \"" + name + "\" in namespace \"" + ns + "\"");
    }
    return Failure(job.error(), "reading DLJob " + ns + "/" + name);
  }
  return Decode(*job);
}

Status KubeBackend::Logs(const std::string& name, const LogOptions& options, std::ostream& out) {
  Clock& clock = *options_.clock;
  return PrintLauncherLog(
      api_, options_.namespace_, name, options,
      [&clock] { clock.SleepFor(std::chrono::seconds(1)); }, out, options_.archive);
}

Status KubeBackend::Delete(const std::string& name) {
  const std::string& ns = options_.namespace_;
  kube::DeleteOptions options;
  options.propagation_policy = "Background";  // the garbage collector removes the children
  kube::ApiResult<Json> deleted = api_.Delete(kube::resources::kDLJobs, ns, name, options);
  if (!deleted.ok()) {
    if (deleted.error().IsNotFound()) {
      return Status::NotFound("no DLJob \"" + name + "\" in namespace \"" + ns + "\"");
    }
    return Failure(deleted.error(), "deleting DLJob " + ns + "/" + name);
  }
  return Status::Ok();
}

Result<BackendPtr> MakeKubeBackend(const kube::ConfigSource& source, const std::string& namespace_,
                                   bool all_namespaces) {
  Result<kube::Config> config = kube::LoadConfig(source);
  if (!config.ok()) return config.status();
  kube::ApiOptions api_options;
  api_options.user_agent = "dljob-cli";
  api_options.qps = 20;
  api_options.burst = 40;
  api_options.retry.max_attempts = 3;  // a person is waiting: fail within seconds, not minutes
  api_options.retry.max_backoff = std::chrono::milliseconds(2000);
  Result<std::unique_ptr<kube::Api>> api = kube::MakeApi(*config, api_options);
  if (!api.ok()) return api.status();  // it names the kubeconfig (and the plugin) already
  KubeBackendOptions options;
  options.namespace_ = namespace_.empty() ? config->default_namespace : namespace_;
  options.all_namespaces = all_namespaces;
  options.cluster = config->server + " from " + config->source;
  if (const char* at = std::getenv("DLJOB_OPERATOR_SERVICE"); at && *at) {
    std::optional<OperatorService> parsed = ParseOperatorService(at);
    if (!parsed) {
      return Status::InvalidArgument(std::string("DLJOB_OPERATOR_SERVICE: \"") + at +
                                     "\" is not <namespace>/<service>[:<port>]");
    }
    options.archive = *parsed;
  }
  return BackendPtr(new KubeBackend(std::move(api).value(), std::move(options)));
}

}  // namespace dljob
