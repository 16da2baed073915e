// Printing a cluster job's log: the output of its launcher pod (<job>-launcher, container
// "launcher"), which carries every rank's lines as mpirun tags them. Each line is printed in the
// job-log format of the local backend ("[rank 3] text", "[mpirun] text"; jobs/log_lines.h), or,
// with LogOptions::rank, only that rank's lines without the tag — so `dljob logs` reads the same
// whichever backend ran the job.
//
// Without follow: the launcher's log as it is now, once. A job whose launcher has not started yet
// is a kFailedPrecondition that says so. A finished job whose pods are gone is read from the
// operator's archive instead (`archive`): GET /logs/<ns>/<job> of the operator's metrics Service
// through the API server's service proxy, with the user's own bearer token passed on in
// X-Dljob-Authorization (the proxy keeps the Authorization header to itself); the operator
// serves it only if the user may get pods/log in the job's namespace. A user whose credential is a
// client certificate has no token to pass on: the error says what to do instead. A finished job
// that ran more than once (status: restarts, preemptions, resizes, spec or disruption restarts)
// is read from the archive too, since its launcher pod holds only the last run; when the archive
// cannot be read, the pod's log is printed and LogOptions::notes says why. With follow: waits
// for the launcher to start, prints its lines as they come, re-opens a broken stream without
// printing a line twice, follows the next launcher when the job restarts, and ends when the job has
// finished (or is deleted) and its last launcher's log has been read.
//
// Not thread-safe; `pause` is called between polls (tests make it change the cluster).
#pragma once

#include <functional>
#include <optional>
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

// Where the operator serves its log archive: the metrics Service of the chart's default install.
// `dljob` reads DLJOB_OPERATOR_SERVICE ("<namespace>/<service>[:<port>]") to change it.
struct OperatorService {
  std::string ns = "dljob-system";
  std::string service = "dljob-operator-metrics:metrics";
};
// "ns/name[:port]"; nullopt when it is not of that form.
std::optional<OperatorService> ParseOperatorService(const std::string& text);

Status PrintLauncherLog(kube::Api& api, const std::string& ns, const std::string& job,
                        const LogOptions& options, const std::function<void()>& pause,
                        std::ostream& out, const OperatorService& archive = {});

}  // namespace dljob
