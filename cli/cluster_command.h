// What the commands that read a cluster itself (`dljob top nodes`, `dljob queue`) share: finding
// the cluster's ClusterReader (cli/backend/cluster_reader.h) or saying plainly that the command
// needs a cluster, and their help footer. Used from main's thread.
#pragma once

#include <string>

#include "cli/backend/backend.h"
#include "cli/commands.h"

namespace dljob {

// The footer of those commands' --help: where they read from.
extern const char kClusterRule[];

// The backend's ClusterReader, or null after printing why there is none (no cluster configured:
// the backend is this machine's) or why the backend could not be made. `command` names the
// command for the message ("dljob top nodes").
ClusterReader* RequireCluster(CliContext& ctx, Result<BackendPtr>& backend,
                              const std::string& command);

}  // namespace dljob
