// How the CLI prints jobs: kubectl-style tables and -o json|yaml|wide.
//
//   NAME    STATUS     GPUS  IMG/SEC  DURATION  AGE
//   mnist   Succeeded  2     1510.2   1m32s     5m
//
// wide adds STEP, LOSS, ACCURACY, RESTARTS and IMAGE. json and yaml print the whole object (a
// DLJobList for several). Pure functions of the jobs and "now"; thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "jobs/dljob_types.h"
#include "jobs/status.h"

namespace dljob {

enum class OutputFormat { kTable, kWide, kJson, kYaml };

// Accepts "" (table), "wide", "json", "yaml"; anything else is kInvalidArgument naming them.
Result<OutputFormat> ParseOutputFormat(const std::string& name);

std::string FormatJobs(const std::vector<DLJob>& jobs, OutputFormat format,
                       std::chrono::system_clock::time_point now);
std::string FormatJob(const DLJob& job, OutputFormat format,
                      std::chrono::system_clock::time_point now);

// Left-aligned columns separated by at least three spaces, as kubectl prints them.
std::string RenderTable(const std::vector<std::vector<std::string>>& rows);

}  // namespace dljob
