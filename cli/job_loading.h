// Loading the job a command acts on: read the file (or start empty), apply flags, default,
// validate — and on failure print every problem with its path and a hint, once.
#pragma once

#include <string>

#include "base/status.h"
#include "cli/commands.h"
#include "jobs/dljob_types.h"

namespace dljob {

// `file` may be "" (flags only) or "-" (stdin). `flags` may be null. A job that names no namespace
// (neither in the file nor by -n) gets `default_namespace` when it is not "" (the cluster
// context's), else the usual default. On failure the problems are already printed to ctx.err and
// the returned Status says only that.
Result<DLJob> LoadJob(const std::string& file, const SubmitFlags* flags, CliContext& ctx,
                      const std::string& default_namespace = "");

}  // namespace dljob
