// AdmissionBook: what the queue scheduler (queue_scheduler.h) last decided for each DLJob, read by
// the reconciler before it binds a gang or keeps a job running.
//
// Verdicts:
//   kUnknown    no pass has seen the job yet: it waits (a pass follows every job change).
//   kAdmitted   it may place its gang now (at `placement`, the queue's plan; the GPU ledger makes
//               the final choice when it binds). A job stays admitted while it runs. An elastic
//               job runs on as many workers as `placement` has; a pass that resizes it admits it
//               afresh at the new size (reason Resized, `message` the queue's reason), and a new
//               size wakes its reconciler.
//   kWaiting    not yet: `reason` (a condition reason: QueueNotFound, QuotaExceeded,
//               Unschedulable, WaitingForReservation, Preempted) and `message` say why.
//   kPreempt    it runs, and must be suspended to make room for another job; the reconciler
//               suspends it (its pods get SIGTERM and checkpoint), then calls Preempted(), and the
//               job waits like any other until a pass admits it again.
// A job the scheduler has asked to suspend is never admitted again before the reconciler says it
// has done so. Lapse(): an admission that has not led to a bound gang within the TTL is planned
// again (the snapshot then counts the job as pending), so a job that cannot bind where the queue
// planned (a view that was wrong) does not hold its plan forever.
//
// A waiting job's message carries figures that change with nearly every pass ("used 20; 649
// free"). Record() wakes a job's reconciler when its verdict or reason changes, and for a new
// message alone at most once per `restate_after`, so a thousand waiting jobs do not each write
// their status (and patch their pods' PodScheduled condition) on every pass. Get() gives the
// message the job was last woken for, so a pass that runs for another reason (its own status
// write comes back as an update) writes nothing new either. RestateDue() says when a held-back
// message falls due, so the queue scheduler passes again then and the last message is never
// left unsaid.
//
// Pure and thread-safe: the scheduler thread writes, reconcilers read and report.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "kube/runtime/duration.h"
#include "scheduler/cluster.h"
#include "scheduler/queue/queue_types.h"
#include "scheduler/queue/start_estimate.h"

namespace dljob::controller {

enum class Verdict { kUnknown, kAdmitted, kWaiting, kPreempt };

struct Admission {
  Verdict verdict = Verdict::kUnknown;
  std::string reason;
  std::string message;
  scheduler::Placement placement;  // kAdmitted: the queue's plan
  WallTime since{};                // when the verdict was given
  // kWaiting: when the job is expected to start (SetEstimates), also said in `message`.
  std::optional<scheduler::StartEstimate> estimate = {};
  bool operator==(const Admission&) const = default;
};

// "; estimated start 2026-11-27T21:52:00Z, when train-a ends in about 12 min, from its steps and
// images/sec" (or "; estimated start unknown: …"): what a waiting job's message adds.
std::string EstimateSentence(const scheduler::StartEstimate& estimate);

// The condition reason for a waiting job's cause.
std::string WaitReason(scheduler::WaitCause cause);

class AdmissionBook {
 public:
  // Restatements are also spread so that there are at most `restates_per_second` of them over
  // all waiting jobs: with N waiting, a message waits max(restate_after, N / rate) seconds.
  explicit AdmissionBook(kube::Duration admission_ttl = std::chrono::minutes(5),
                         kube::Duration restate_after = std::chrono::seconds(10),
                         double restates_per_second = 20);

  // The job's verdict (kUnknown when none), with the message it was last woken for.
  Admission Get(const std::string& key) const EXCLUDES(mu_);
  std::map<std::string, Admission> All() const EXCLUDES(mu_);

  // Whether the job's admission is older than the TTL (the caller knows its gang is not bound).
  bool Lapsed(const Admission& a, WallTime now) const;

  // Records a pass's decision at `now`: the started jobs admitted (afresh), the preempted ones to
  // be suspended, the waiting ones with their reason. `running` are the jobs the pass counted as
  // running: they stay (or become) admitted, unless a suspension is pending. `leaving` are the
  // jobs left out of the pass because their suspension is pending or under way: they keep their
  // verdict. Every other job is forgotten. Returns the jobs whose verdict or reason changed, or
  // whose message changed and was last returned `restate_after` ago or more, so the caller can
  // wake their reconcilers.
  std::vector<std::string> Record(const scheduler::Decision& decision,
                                  const std::vector<std::string>& running,
                                  const std::vector<std::string>& leaving, WallTime now)
      EXCLUDES(mu_);

  // The earliest time a message the last Record() held back falls due; nullopt when none.
  std::optional<WallTime> RestateDue() const EXCLUDES(mu_);

  // The waiting jobs' latest start estimates (by job key), replacing the earlier ones: the next
  // Record() adds each to its job's message and Admission::estimate, so a new estimate is told
  // as any new message is (at most once per restatement period).
  void SetEstimates(std::map<std::string, scheduler::StartEstimate> estimates) EXCLUDES(mu_);

  // The reconciler has suspended the job as asked: it now waits (reason Preempted) until a pass
  // admits it again.
  void Preempted(const std::string& key, const std::string& message) EXCLUDES(mu_);

 private:
  const kube::Duration admission_ttl_;
  const kube::Duration restate_after_;
  const double restates_per_second_;
  mutable Mutex mu_;
  std::map<std::string, Admission> book_ GUARDED_BY(mu_);
  std::map<std::string, scheduler::StartEstimate> estimates_ GUARDED_BY(mu_);
  struct Told {  // what Record last returned a job for
    WallTime at{};
    std::string message;
    std::optional<scheduler::StartEstimate> estimate;
  };
  std::map<std::string, Told> told_ GUARDED_BY(mu_);
  std::optional<WallTime> restate_due_ GUARDED_BY(mu_);
};

}  // namespace dljob::controller
