// Loading the job (or queue) a command acts on: read the file (or start empty), apply flags,
// default, validate — and on failure print every problem with its path and a hint, once.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "cli/commands.h"
#include "jobs/dljob_types.h"
#include "jobs/dlqueue_types.h"

namespace dljob {

// `file` may be "" (flags only) or "-" (stdin). `flags` may be null. A job that names no namespace
// (neither in the file nor by -n) gets `default_namespace` when it is not "" (the cluster
// context's), else the usual default. With `flags` (a job to submit), a job with neither a name
// (--name, metadata.name) nor metadata.generateName gets a generateName (generated_name.h); the
// backend or the API server completes it. On failure the problems are already printed to ctx.err
// and the returned Status says only that.
Result<DLJob> LoadJob(const std::string& file, const SubmitFlags* flags, CliContext& ctx,
                      const std::string& default_namespace = "");

// For a command that looks at a document before it knows its kind (validate):
// reads `file` ("-": stdin) once; on failure prints why, with a hint, and returns nullopt.
std::optional<std::string> ReadInputFile(const std::string& file, CliContext& ctx);
// LoadJob on the text of `file` already read (nullopt: no file, flags only).
Result<DLJob> LoadJobText(const std::optional<std::string>& text, const std::string& file,
                          const SubmitFlags* flags, CliContext& ctx,
                          const std::string& default_namespace = "");
// Decodes and validates a DLQueue (no defaults: a queue has none); on failure prints every
// problem, with its line and column, once.
Result<DLQueue> LoadQueueText(const std::string& text, const std::string& file, CliContext& ctx);

}  // namespace dljob
