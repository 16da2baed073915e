// OperatorApp: dljob-operator's parts put together — leader election, then, while leading, the
// Controller (informers, work queue, reconcilers) and the launcher log collectors.
//
// With --leader-elect, Run() campaigns for the Lease; on winning it starts leading (controller and
// collectors on their own threads), and everything they send to the API server goes through a
// FencedApi (kube/runtime/fenced_api.h): each call is bounded by the lease's acting window, so
// none is applied after a standby may have taken over. When the window ends without a renewal
// (or another holder shows up) the fence refuses every further call at once; Run() then stops
// the leader's threads and returns 1: the process must exit so that Kubernetes restarts it fresh,
// with empty caches, as client-go's leader election prescribes. A standby that never wins just
// keeps trying. Without leader election it leads at once, unfenced. Once a second, the leader hands
// the launcher pods of its cache to LogCollectors, whose last-progress times feed
// progressDeadlineSeconds. The reconcilers report how long each job waited (job_timings.h) into
// the process's JobTimingHistograms, exported on /metrics with the rest. The collectors write the
// job logs to the archive (log_archive.h) only while the lease's acting window lasts (the same
// LeaderTerm as the fence): a replica that is not leading never writes it, and the next leader
// continues each pod's log where the archive ends.
//
// State() may be called from any thread (the HTTP endpoints do); it reports leading only within
// the lease's acting window. The rest belongs to Run()'s thread.
#pragma once

#include <atomic>
#include <stop_token>

#include "base/clock.h"
#include "base/mutex.h"
#include "kube/api.h"
#include "kube/runtime/leader_term.h"
#include "kube/runtime/spans.h"
#include "kube/runtime/store.h"
#include "operator/app/endpoints.h"
#include "operator/app/log_archive_store.h"
#include "operator/app/options.h"
#include "operator/controller/controller.h"
#include "operator/metrics/log_collectors.h"

namespace dljob::op {

class OperatorApp {
 public:
  // `archive`: where job logs go (null: nowhere); `spans`: where the controller's spans go (null:
  // none; ControllerOptions::spans); both must outlive the app.
  OperatorApp(OperatorOptions options, kube::Api& api, Clock& clock,
              const ArchiveLocation* archive = nullptr, kube::SpanSink* spans = nullptr);

  // 0 after `stop` was requested; 1 when leadership was lost.
  int Run(std::stop_token stop);
  OperatorState State() const;

 private:
  // Runs the controller and log collectors until `stop`, every API call through `api`.
  void Lead(std::stop_token stop, kube::Api& api);

  const OperatorOptions options_;
  kube::Api& api_;
  Clock& clock_;
  const ArchiveLocation* archive_;
  kube::SpanSink* const spans_;
  std::atomic<bool> leading_{false};
  mutable Mutex mu_;
  controller::Controller* controller_ GUARDED_BY(mu_) = nullptr;  // while leading
  metrics::LogCollectors* collectors_ GUARDED_BY(mu_) = nullptr;  // while leading
  const kube::LeaderTerm* term_ GUARDED_BY(mu_) = nullptr;        // while electing
  // Fed by the leader's reconcilers as their status writes land; kept for the process's life.
  metrics::JobTimingHistograms timings_;
};

}  // namespace dljob::op
