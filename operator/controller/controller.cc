#include "operator/controller/controller.h"

#include <cstdio>
#include <cstdlib>
#include <thread>

#include "base/json_fields.h"
#include "operator/controller/children.h"
#include "operator/controller/dataset_cache_recorder.h"
#include "scheduler/kube_objects.h"

namespace dljob::controller {

using kube::Lane;
using kube::ObjectKey;

namespace {

kube::InformerOptions For(const ControllerOptions& o, const std::string& ns,
                          const std::string& selector) {
  kube::InformerOptions i = o.informer;
  i.ns = ns;
  i.label_selector = selector;
  // Nothing the operator does reads managedFields; in the caches they cost memory and copies.
  if (!i.transform) i.transform = kube::WithoutManagedFields;
  return i;
}

// The policy of that name; a name the caller did not validate is a broken invariant.
scheduler::PlacementPolicyPtr PolicyOrDie(const ControllerOptions& o) {
  Result<scheduler::PlacementPolicyPtr> policy =
      scheduler::MakePlacementPolicy(o.placement_policy, o.placement);
  if (!policy.ok()) {
    std::fprintf(stderr, "dljob-operator: %s\n", policy.status().message().c_str());
    std::abort();
  }
  return std::move(policy).value();
}

// "queue" spans from the work queue's handouts; none without a sink.
kube::HandoutObserver QueueSpans(kube::SpanSink* spans, const Clock& clock) {
  if (!spans) return nullptr;
  return [spans, &clock](const std::string& key, WallTime ready, Lane lane) {
    spans->Record(
        {key, "queue", lane == Lane::kFollowUp ? "follow-up" : "normal", ready, clock.Now()});
  };
}

// "pod j-worker-0 updated Running ready", "service j added". `kind` as the informer knows it:
// objects of a list carry none.
std::string ChildDetail(const std::string& kind, const Json& o, const char* change) {
  std::string detail = kind + " " + kube::NameOf(o) + " " + change;
  const Json& status = o.contains("status") ? o["status"] : Json::object();
  if (status.is_object() && status.contains("phase")) {
    detail += " " + StringAt(status, "phase");
    for (const Json& c : status.value("conditions", Json::array())) {
      if (StringAt(c, "type") == "Ready" && StringAt(c, "status") == "True") detail += " ready";
    }
  }
  return detail;
}

// A pod as a pass creates it: Pending and not being deleted. Its creation tells its job nothing
// the pass that made it did not know; its first change does.
bool AsCreated(const Json& pod) {
  const std::string phase = StringAt(FieldOf(pod, "status"), "phase");
  return (phase.empty() || phase == "Pending") && !IsDeleting(pod);
}

}  // namespace

Controller::Controller(kube::Api& api, Clock& clock, ControllerOptions options,
                       SshKeyGenerator keys)
    : clock_(clock),
      options_(std::move(options)),
      queue_(clock, options_.queue, QueueSpans(options_.spans, clock)),
      policy_(PolicyOrDie(options_)),
      ledger_(clock, *policy_) {
  using namespace kube::resources;
  const std::string& ns = options_.ns;
  jobs_ = std::make_unique<kube::Informer>(api, kDLJobs, For(options_, ns, ""));
  // The jobs' children are read a job at a time (a pass reads its own), so their caches are
  // packed (a sixth of the memory; each read unpacks); passes over every pod read JobPods.
  kube::InformerOptions children = For(options_, ns, kJobNameLabel);
  children.compact = true;
  kube::InformerOptions own_pods = children;
  own_pods.transform = JobPodView;
  pods_ = std::make_unique<kube::Informer>(api, kPods, own_pods, OwnerJobKey);
  services_ = std::make_unique<kube::Informer>(api, kServices, children);
  config_maps_ = std::make_unique<kube::Informer>(api, kConfigMaps, children);
  kube::InformerOptions own_secrets = children;
  own_secrets.transform = SecretMetadataView;
  secrets_ = std::make_unique<kube::Informer>(api, kSecrets, own_secrets);
  // Nodes are read one at a time too (a job's nodes; the ledger keeps its own view of all).
  kube::InformerOptions nodes = For(options_, "", "");
  nodes.transform = NodeView;
  nodes.compact = true;
  nodes_ = std::make_unique<kube::Informer>(api, kNodes, nodes);
  // GPUs are used in every namespace. When the operator watches every namespace, its own pods
  // reach the ledger from pods_ (below), so this watch leaves them out: each job pod is decoded
  // and cached once, not twice. Watching one namespace, it must see the pods of other
  // namespaces' jobs too, so it takes every bound pod.
  kube::InformerOptions bound =
      For(options_, "", options_.ns.empty() ? std::string("!") + kJobNameLabel : "");
  bound.field_selector = "spec.nodeName!=";
  bound.transform = LedgerPodView;
  bound_pods_ = std::make_unique<kube::Informer>(api, kPods, bound);
  queues_ = std::make_unique<kube::Informer>(api, kDLQueues, For(options_, "", ""));
  scheduler_ = std::make_unique<QueueScheduler>(
      api, clock, QueueSources{jobs_->store(), job_pods_, queues_->store()}, ledger_, book_,
      *policy_, options_.scheduling, [this](const std::string& key) {
        // An admitted job holds its quota and GPUs until it binds, a preempted one until it is
        // suspended: both go ahead of new jobs. A waiting job's new reason does not.
        const Verdict verdict = book_.Get(key).verdict;
        queue_.Add(key, verdict == Verdict::kAdmitted || verdict == Verdict::kPreempt
                            ? Lane::kFollowUp
                            : Lane::kNormal);
      });
  auto trigger = [this](const Json&) { scheduler_->Trigger(); };
  auto trigger2 = [this](const Json&, const Json&) { scheduler_->Trigger(); };
  queues_->AddHandlers({trigger, trigger2, trigger});

  auto enqueue = [this](const Json& o) { queue_.Add(kube::ObjectKey(o)); };
  jobs_->AddHandlers({[this, enqueue](const Json& o) {
                        Mark(kube::ObjectKey(o), "observe", "dljob added");
                        enqueue(o);
                        scheduler_->Trigger();
                      },
                      [this, enqueue](const Json& old, const Json& o) {
                        // Its own status write wakes no pass: the pass that wrote it is done.
                        if (!reconciler_->OwnWrite(o)) enqueue(o);
                        if (ChangesQueue(old, o)) {
                          scheduler_->Trigger();
                        } else {
                          scheduler_->TriggerIfWaiting();
                        }
                      },
                      [this](const Json& o) {
                        ledger_.StopWaiting(kube::ObjectKey(o));
                        queue_.Add(kube::ObjectKey(o));
                        scheduler_->Trigger();
                      }});
  auto owner = [this](const Json& o, const char* kind, const char* change) {
    // The job's next step (e.g. its launcher once its workers are Ready) goes ahead of new jobs.
    std::string key = OwnerJobKey(o);
    if (key.empty()) return;
    if (options_.spans) Mark(key, "child", ChildDetail(kind, o, change));
    queue_.Add(key, kube::Lane::kFollowUp);
  };
  auto created = [this](const Json& o, const char* kind) {  // in the spans, waking no pass
    std::string key = OwnerJobKey(o);
    if (options_.spans && !key.empty()) Mark(key, "child", ChildDetail(kind, o, "added"));
  };
  // A child's creation wakes no pass: a pass made it and went on (the first pass of each job,
  // including after a restart of the operator, comes from the jobs' informer). Its changes and
  // its deletion do.
  for (const auto& entry :
       {std::pair{services_.get(), "service"}, std::pair{config_maps_.get(), "configmap"},
        std::pair{secrets_.get(), "secret"}}) {
    const char* kind = entry.second;  // a variable, not a binding: clang 14 cannot capture those
    entry.first->AddHandlers(
        {[created, kind](const Json& o) { created(o, kind); },
         [owner, kind](const Json&, const Json& o) { owner(o, kind, "updated"); },
         [owner, kind](const Json& o) { owner(o, kind, "deleted"); }});
  }
  // First, so that what the handlers below trigger sees the pod's change.
  pods_->AddHandlers({[this](const Json& o) { job_pods_.Upsert(o); },
                      [this](const Json&, const Json& o) { job_pods_.Upsert(o); },
                      [this](const Json& o) { job_pods_.Remove(kube::ObjectKey(o)); }});
  // A job's pods change what the queue sees of it (bound, going away). A pod the operator created
  // where the queue planned it, or one that turns Running, changes it only for jobs that wait.
  auto owned_pod = [this, owner](const Json& o, const char* change) {
    owner(o, "pod", change);
    scheduler_->Trigger();
  };
  pods_->AddHandlers({[this, owned_pod, created](const Json& o) {
                        if (!AsCreated(o)) return owned_pod(o, "added");
                        created(o, "pod");
                        scheduler_->TriggerIfWaiting();
                      },
                      [this, owner](const Json& old, const Json& o) {
                        owner(o, "pod", "updated");
                        if (QueueCountsDifferently(BriefOf(old), BriefOf(o))) {
                          scheduler_->Trigger();
                        } else {
                          scheduler_->TriggerIfWaiting();
                        }
                      },
                      [owned_pod](const Json& o) { owned_pod(o, "deleted"); }});
  // Data locality: a job's pod that has warmed a dataset's cache is recorded on its node.
  auto warmed = [this, &api](const Json* old, const Json& pod) {
    if (Status s = RecordWarmCaches(api, nodes_->store(), old, pod); !s.ok())
      std::fprintf(stderr, "dljob-operator: %s (placement will not prefer it)\n",
                   s.message().c_str());
  };
  pods_->AddHandlers({[warmed](const Json& o) { warmed(nullptr, o); },
                      [warmed](const Json& old, const Json& o) { warmed(&old, o); }, nullptr});
  auto node_seen = [this](const Json& o) {
    if (ledger_.UpsertNode(o)) WakeWaiting();
  };
  // A node that stops (or starts again) being Ready, or is cordoned (or uncordoned): the jobs with
  // pods there look at it (node_loss.h), now and once it would count as lost.
  auto node_changed = [this, node_seen](const Json& old, const Json& o) {
    node_seen(o);
    if (scheduler::NodeReady(old) == scheduler::NodeReady(o) &&
        scheduler::NodeCordoned(old) == scheduler::NodeCordoned(o)) {
      return;
    }
    for (const std::string& key : job_pods_.JobsOn(kube::NameOf(o))) queue_.Add(key);
  };
  nodes_->AddHandlers({node_seen, node_changed, [this](const Json& o) {
                         ledger_.RemoveNode(o);
                         scheduler_->Trigger();
                       }});
  auto pod_seen = [this](const Json& o) {
    if (ledger_.UpsertPod(o)) WakeWaiting();
  };
  auto pod_gone = [this](const Json& o) {
    if (ledger_.RemovePod(o)) WakeWaiting();
  };
  const kube::EventHandlers ledger_handlers = {
      pod_seen, [pod_seen](const Json&, const Json& o) { pod_seen(o); }, pod_gone};
  bound_pods_->AddHandlers(ledger_handlers);
  if (options_.ns.empty()) pods_->AddHandlers(ledger_handlers);  // unbound ones use nothing

  reconciler_ = std::make_unique<Reconciler>(
      api, clock,
      Caches{jobs_->store(), pods_->store(), services_->store(), config_maps_->store(),
             secrets_->store(), ledger_, &book_, &nodes_->store()},
      options_.reconcile, std::move(keys));
}

Controller::~Controller() = default;

void Controller::AddPodHandlers(kube::EventHandlers handlers) {
  pods_->AddHandlers(std::move(handlers));
}

std::vector<kube::Informer*> Controller::Informers() const {
  return {jobs_.get(),    pods_.get(),  services_.get(),   config_maps_.get(),
          secrets_.get(), nodes_.get(), bound_pods_.get(), queues_.get()};
}

void Controller::WakeWaiting() {
  for (const std::string& key : ledger_.Waiting()) queue_.Add(key);
  scheduler_->Trigger();
}

bool Controller::HasSynced() const {
  for (const kube::Informer* i : Informers()) {
    if (!i->HasSynced()) return false;
  }
  return true;
}

void Controller::Run(std::stop_token stop) {
  std::vector<std::jthread> informers;
  for (kube::Informer* i : Informers()) {
    informers.emplace_back([i, stop] { i->Run(stop); });
  }
  // Reconciling from half-filled caches would create children that already exist.
  while (!stop.stop_requested() && !HasSynced()) {
    clock_.SleepFor(std::chrono::milliseconds(5));
  }
  std::vector<std::jthread> workers;
  if (!stop.stop_requested()) {
    workers.emplace_back([this, stop] { scheduler_->Run(stop); });
    for (int i = 0; i < std::max(1, options_.workers); ++i)
      workers.emplace_back([this] { Work(); });
  }
  std::stop_callback shut(stop, [this] { queue_.ShutDown(); });
  for (std::jthread& w : workers) w.join();
  for (std::jthread& i : informers) i.join();
}

void Controller::Mark(const std::string& key, const char* name, std::string detail) {
  if (!options_.spans) return;
  const WallTime now = clock_.Now();
  options_.spans->Record({key, name, std::move(detail), now, now});
}

void Controller::Work() {
  while (std::optional<std::string> key = queue_.Get()) {
    std::optional<WallTime> progress;
    if (options_.last_progress) progress = options_.last_progress(*key);
    const WallTime start = clock_.Now();
    Result<ReconcileResult> r = [&] {
      kube::SpanScope scope(*key);
      return reconciler_->Reconcile(*key, progress);
    }();
    if (options_.spans) {
      options_.spans->Record({*key, "reconcile",
                              !r.ok() ? "error" : (r->requeue_after ? "requeue" : "ok"), start,
                              clock_.Now()});
    }
    if (!r.ok()) {
      // Conflicts from a cache that is behind are routine; the backoff lets it catch up.
      std::fprintf(stderr, "dljob-operator: reconciling %s: %s (will retry)\n", key->c_str(),
                   r.status().message().c_str());
      queue_.AddRateLimited(*key);
    } else {
      queue_.Forget(*key);
      if (r->requeue_after) queue_.AddAfter(*key, *r->requeue_after);
      // A job gone from the cache has no next step to order: its place in the follow-up lane is
      // dropped (its children's deletions, coming later, make one that this drops again).
      if (!jobs_->store().Find(*key)) queue_.ForgetOrder(*key);
    }
    queue_.Done(*key);
  }
}

}  // namespace dljob::controller
