// How the CLI prints jobs: kubectl-style tables and -o json|yaml|wide.
//
//   NAME    STATUS     GPUS  IMG/SEC  DURATION  ESTIMATED START  AGE
//   mnist   Succeeded  2     1510.2   1m32s     -                5m
//   big     Queued     16    -        -         ~12m             1m
//
// ESTIMATED START is a waiting job's start estimate (start_estimate_view.h); `dljob get` adds
// the estimate's line with its assumption below the table. wide adds STEP, LOSS, ACCURACY,
// RESTARTS and IMAGE. json and yaml print the whole object (a DLJobList for several). Jobs from
// several namespaces (-A) get a NAMESPACE column first, as kubectl prints them. `dljob top` has its
// own table (FormatTop). Pure functions of the jobs and "now"; thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/human_format.h"  // RenderTable
#include "base/status.h"
#include "jobs/dljob_types.h"

namespace dljob {

enum class OutputFormat { kTable, kWide, kJson, kYaml };

// Accepts "" (table), "wide", "json", "yaml"; anything else is kInvalidArgument naming them.
Result<OutputFormat> ParseOutputFormat(const std::string& name);

std::string FormatJobs(const std::vector<DLJob>& jobs, OutputFormat format,
                       std::chrono::system_clock::time_point now, bool namespace_column = false);
std::string FormatJob(const DLJob& job, OutputFormat format,
                      std::chrono::system_clock::time_point now);

// `dljob top`: how fast each job trains, from status.throughput.
//
//   NAME     STATUS    GPUS   WORKERS   IMG/SEC   IMG/SEC/GPU   STEP   LOSS    UPDATED
//   resnet   Running   16     2/2       9843.1    615.2         3100   2.331   4s
//
// followed by a total line over the jobs shown ("2 jobs, 24 GPUs, 12014.2 images/sec"). wide
// adds EPOCH, ACCURACY, RESTARTS and NODES (the placement). IMG/SEC/GPU is the job's own figure,
// else IMG/SEC divided by GPUS. json and yaml print the DLJobList, as FormatJobs does.
std::string FormatTop(const std::vector<DLJob>& jobs, OutputFormat format,
                      std::chrono::system_clock::time_point now, bool namespace_column = false);

}  // namespace dljob
