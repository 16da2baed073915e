// See operator_app.h.
#include "operator/app/operator_app.h"

#include <cstdio>
#include <optional>
#include <thread>

#include "base/stoppable_sleep.h"
#include "kube/object_fields.h"
#include "kube/runtime/fenced_api.h"
#include "kube/runtime/leader_election.h"
#include "operator/app/self_budget.h"
#include "operator/controller/builders.h"
#include "scheduler/queue/queue_policy.h"
#include "scheduler/queue/queue_types.h"

namespace dljob::op {
namespace {

void Log(const Clock& clock, const std::string& message) {
  std::fprintf(stderr, "%s dljob-operator: %s\n", FormatRfc3339(clock.Now()).c_str(),
               message.c_str());
}

}  // namespace

OperatorApp::OperatorApp(OperatorOptions options, kube::Api& api, Clock& clock,
                         const ArchiveLocation* archive, kube::SpanSink* spans)
    : options_(std::move(options)), api_(api), clock_(clock), archive_(archive), spans_(spans) {}

int OperatorApp::Run(std::stop_token stop) {
  if (!options_.leader_elect) {
    Log(clock_, "leader election off: leading at once");
    Lead(stop, api_);
    return 0;
  }
  kube::LeaderElectionOptions le;
  le.lease_name = options_.lease_name;
  le.lease_namespace = options_.lease_namespace;
  le.identity = options_.identity;
  le.lease_duration = options_.lease_duration;
  le.renew_deadline = options_.renew_deadline;
  le.retry_period = options_.retry_period;
  kube::LeaderElector elector(api_, le, clock_);
  kube::FencedApi fenced(api_, elector.term(), clock_);
  {
    MutexLock lock(mu_);
    term_ = &elector.term();
  }

  std::stop_source lead_stop;
  std::jthread leader;
  std::atomic<bool> lost{false};
  Log(clock_,
      "campaigning for lease " + le.lease_namespace + "/" + le.lease_name + " as " + le.identity);
  elector.Run(stop, kube::LeaderCallbacks{
                        .on_started_leading =
                            [&] {
                              Log(clock_, "became the leader");
                              leader = std::jthread([this, &fenced, token = lead_stop.get_token()] {
                                Lead(token, fenced);
                              });
                            },
                        .on_stopped_leading =
                            [&] {
                              // The fence already refuses every call; wait for the work to stop, so
                              // that the elector releases the lease (on stop) only after it has.
                              if (!stop.stop_requested()) lost = true;
                              lead_stop.request_stop();
                              if (leader.joinable()) leader.join();
                            },
                        .on_new_leader =
                            [this](const std::string& holder) {
                              if (!holder.empty()) Log(clock_, "the leader is " + holder);
                            },
                        .on_error =
                            [&](const std::string& error) {
                              Log(clock_, error + "; retrying every " +
                                              std::to_string(le.retry_period.count()) + " ms");
                            },
                    });
  lead_stop.request_stop();
  if (leader.joinable()) leader.join();
  {
    MutexLock lock(mu_);
    term_ = nullptr;
  }
  if (lost) Log(clock_, "lost the lease: exiting so that a fresh process takes over");
  return lost ? 1 : 0;
}

namespace {

// The PodDisruptionBudget version the server serves: policy/v1, else policy/v1beta1 (Kubernetes
// before 1.21); nullopt when it serves neither to us (a 403 from RBAC, or no policy group). Asked
// with a list of one item in `ns` ("" for every namespace), so it needs only what creating them
// needs besides.
std::optional<kube::Resource> DisruptionBudgets(kube::Api& api, const std::string& ns) {
  kube::ListOptions one;
  one.limit = 1;
  for (const kube::Resource* r :
       {&kube::resources::kPodDisruptionBudgets, &kube::resources::kPodDisruptionBudgetsV1beta1}) {
    if (api.List(*r, ns, one).ok()) return *r;
  }
  return std::nullopt;
}

// The PodDisruptionBudget of the operator's own pods (self_budget.h), at the version the server
// serves in the operator's namespace. A failure is logged: the operator runs on without one.
void KeepSelfBudget(kube::Api& api, const OperatorOptions& o, const Clock& clock) {
  if (o.operator_deployment.empty() || o.operator_min_available.empty()) return;
  std::optional<kube::Resource> version = DisruptionBudgets(api, o.operator_namespace);
  Status s = version
                 ? EnsureSelfBudget(
                       api, {o.operator_namespace, o.operator_deployment, o.operator_min_available},
                       *version)
                 : Status::Unavailable("the server serves no PodDisruptionBudgets in " +
                                       o.operator_namespace + " this operator may list");
  if (!s.ok()) {
    Log(clock, "keeping no PodDisruptionBudget for the operator's own pods (" + s.message() +
                   "): a drain may evict every replica at once");
  }
}

}  // namespace

void OperatorApp::Lead(std::stop_token stop, kube::Api& api) {
  metrics::ApiThroughputSink sink(api);
  const kube::LeaderTerm* term = nullptr;
  {
    MutexLock lock(mu_);
    term = term_;
  }
  metrics::LogArchiveOptions ao;
  if (term) {  // leader election: write only within the acting window, as the fence calls
    ao.may_write = [this, term] {
      std::string refusal = term->Refusal(clock_.MonotonicNow());
      return refusal.empty() ? Status::Ok() : Status::FailedPrecondition(refusal);
    };
  }
  std::optional<metrics::LogArchive> archive;
  if (archive_) archive.emplace(*archive_->store, archive_->prefix, ao);
  metrics::LogCollectorOptions lo;
  lo.archive = archive ? &*archive : nullptr;
  lo.clock = &clock_;
  metrics::LogCollectors collectors(
      [&api](const std::string& ns, const std::string& pod) {
        kube::LogOptions o;
        o.container = "launcher";
        o.follow = true;
        o.timestamps = true;  // where a re-opened log goes on (log_position.h)
        return api.Logs(ns, pod, o);
      },
      sink, lo);

  controller::ControllerOptions co;
  co.ns = options_.watch_namespace;
  co.workers = options_.workers;
  co.spans = spans_;
  co.reconcile.async_events = true;  // a pass never waits for an Event (events.h)
  co.reconcile.build.cluster_domain = options_.cluster_domain;
  co.reconcile.build.volumes.oss_csi_driver = options_.oss_csi_driver;
  co.reconcile.build.volumes.oss_endpoint = options_.oss_endpoint;
  co.reconcile.build.volumes.oss_secret = options_.oss_secret;
  co.placement_policy = options_.placement_policy;
  co.placement.rack_label = options_.rack_label;
  co.scheduling.queue = scheduler::QueueOptionsByName(options_.queue_policy).value();
  co.scheduling.queue.min_run_time = options_.min_run_time.count();
  co.scheduling.estimate_every = options_.estimate_every;
  co.scheduling.queue.grow_after = options_.elastic_grow_after.count();
  co.reconcile.node_lost_after = options_.node_lost_after;
  co.reconcile.rack_label = options_.rack_label;
  KeepSelfBudget(api, options_, clock_);
  co.reconcile.disruption_budgets = DisruptionBudgets(api, options_.watch_namespace);
  if (!co.reconcile.disruption_budgets) {
    Log(clock_,
        "the server serves no PodDisruptionBudgets this operator may list; jobs get none, "
        "so a drain evicts their pods one by one (restarting each job)");
  }
  co.last_progress = [&collectors](const std::string& key) { return collectors.LastProgress(key); };
  co.reconcile.launcher_log_ended = [&collectors](const std::string& uid) {
    return collectors.Ended(uid);
  };
  co.reconcile.timings = [this](const DLJob& job, const controller::JobTimings& t) {
    const std::string& ns = job.metadata.namespace_;
    if (t.start_seconds) timings_.ObserveStart(ns, *t.start_seconds);
    if (t.queue_wait_seconds) {
      timings_.ObserveQueueWait(ns, job.spec.scheduling.queue.value_or(scheduler::kDefaultQueue),
                                *t.queue_wait_seconds);
    }
  };
  controller::Controller controller(api, clock_, co);
  metrics::LauncherPodSet launchers;
  auto launcher_seen = [&launchers](const nlohmann::json& pod) {
    if (kube::LabelOf(pod, controller::kRoleLabel) == "launcher") launchers.Upsert(pod);
  };
  controller.AddPodHandlers(
      {launcher_seen,
       [launcher_seen](const nlohmann::json&, const nlohmann::json& pod) { launcher_seen(pod); },
       [&launchers](const nlohmann::json& pod) { launchers.Remove(kube::ObjectKey(pod)); }});
  {
    MutexLock lock(mu_);
    controller_ = &controller;
    collectors_ = &collectors;
  }
  leading_ = true;
  std::jthread running([&controller](std::stop_token s) { controller.Run(s); });
  bool announced = false;
  // A heartbeat for the loop's work below; nothing is timed by it, so it waits on the stop token
  // rather than on the Clock.
  while (SleepUnlessStopped(stop, std::chrono::seconds(1))) {
    if (!announced && controller.HasSynced()) {
      Log(clock_, "caches synced: " + std::to_string(controller.jobs().Size()) + " DLJobs");
      announced = true;
    }
    collectors.Sync(launchers.All());
  }
  leading_ = false;
  {
    MutexLock lock(mu_);
    controller_ = nullptr;
    collectors_ = nullptr;
  }
  running.request_stop();
  running.join();
  collectors.StopAll();
  Log(clock_, "stopped leading");
}

OperatorState OperatorApp::State() const {
  OperatorState s;
  s.leader_elect = options_.leader_elect;
  s.timings = timings_.Families();
  MutexLock lock(mu_);
  s.leading = leading_ && controller_ != nullptr &&
              (term_ == nullptr || term_->MayAct(clock_.MonotonicNow()));
  if (controller_) {
    s.synced = controller_->HasSynced();
    s.jobs = controller_->jobs().List();
    s.queue_depth = controller_->queue().Len();
  }
  if (collectors_) {
    s.logs = collectors_->Counts();
    s.following = collectors_->Following();
  }
  return s;
}

}  // namespace dljob::op
