// LauncherLogWait: whether a job whose launcher has exited 0 should wait a moment before it is
// marked Succeeded, so that its final metrics reach the status first.
//
// The launcher log's last lines (the final step, the test accuracy) are read by the operator's
// log collector (operator/metrics/log_collectors.h), which publishes them into status.throughput
// when it reaches the end of the log — a moment after the pod has ended. Marking the job Succeeded
// at once let `kubectl wait --for=condition=Succeeded` return while status.throughput still held
// an earlier step and no accuracy. So while the collector of the launcher pod is still reading,
// the job stays Running, for at most `grace` after the launcher's container finished; a launcher
// no collector follows (nullopt from `ended`) is not waited for. Pure.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "kube/runtime/duration.h"

namespace dljob::controller {

// Whether the collector of the launcher pod with this uid has reached the end of its log and
// published it: true, false while it reads, nullopt when no collector follows that pod.
using LauncherLogEnded = std::function<std::optional<bool>(const std::string& launcher_uid)>;

inline constexpr std::chrono::seconds kLauncherLogGrace{15};

// How long to wait before looking again (at most 1 s), or nullopt to mark the job Succeeded now.
// `pods` are the job's current pods; the launcher is the one labelled dljob.io/role=launcher.
// Without `ended`, or without a finish time on the launcher's container, never waits.
std::optional<kube::Duration> LauncherLogWait(const std::vector<nlohmann::json>& pods,
                                              const LauncherLogEnded& ended, WallTime now,
                                              kube::Duration grace = kLauncherLogGrace);

}  // namespace dljob::controller
