// Printing a cluster job's log: the output of its launcher pod (<job>-launcher, container
// "launcher"), which carries every rank's lines as mpirun tags them. Each line is printed in the
// job-log format of the local backend ("[rank 3] text", "[mpirun] text"; jobs/log_lines.h), or,
// with LogOptions::rank, only that rank's lines without the tag — so `dljob logs` reads the same
// whichever backend ran the job.
//
// Without follow: the launcher's log as it is now, once. A job whose launcher has not started yet
// or whose pods are gone (finished and cleaned up) is a kFailedPrecondition that says so and
// where the archived log is. With follow: waits for the launcher to start, prints its lines as
// they come, re-opens a broken stream without printing a line twice, follows the next launcher
// when the job restarts, and ends when the job has finished (or is deleted) and its last
// launcher's log has been read.
//
// Not thread-safe; `pause` is called between polls (tests make it change the cluster).
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "base/status.h"
#include "cli/backend/backend.h"
#include "kube/api.h"

namespace dljob {

// The launcher pod's container, as the operator builds it (operator/controller/builders.h:
// NewLauncherPod); the pod's name is jobs/child_names.h's LauncherName.
inline constexpr char kLauncherContainer[] = "launcher";

// One launcher line in the job-log format; nullopt when a rank filter drops it.
std::optional<std::string> JobLogLine(std::string_view launcher_line, const LogOptions& options);

Status PrintLauncherLog(kube::Api& api, const std::string& ns, const std::string& job,
                        const LogOptions& options, const std::function<void()>& pause,
                        std::ostream& out);

}  // namespace dljob
