// The flag form of `dljob submit`: building a DLJob from command-line flags.
//
//   dljob submit --local --name N --gpus 2 --image I [--env K=V]… [--data SRC:MOUNT]… -- CMD ARGS…
//
// builds the same DLJob a YAML file would describe. With -f FILE, the flags given override the
// file's values (--name, --gpus, --image, …; --env and --data add entries; a command after `--`
// replaces the file's). Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/dljob_types.h"

namespace dljob {

struct SubmitFlags {
  std::string name;
  std::string namespace_;
  std::string image;
  std::string working_dir;
  std::optional<int64_t> gpus;
  std::optional<int64_t> gpus_per_worker;
  std::optional<int64_t> backoff_limit;
  std::optional<int64_t> active_deadline_seconds;
  std::vector<std::string> env;   // KEY=VALUE
  std::vector<std::string> data;  // SOURCE:MOUNTPATH, e.g. hostPath:/srv/mnist:/data/mnist
  std::vector<std::string> command;
};

// Applies the flags that were given onto `job` (an empty DLJob for the pure flag form). Errors
// name the flag and the expected form: `--data "x": expected SOURCE:MOUNTPATH …`.
Status ApplySubmitFlags(const SubmitFlags& flags, DLJob& job);

// Splits "oss://bucket/p:/data" at the last ':' followed by '/' into {source, mountPath}.
Result<std::pair<std::string, std::string>> SplitDataFlag(const std::string& value);

// A data volume name from a mount path: "/data/fashion-mnist" → "fashion-mnist"; "" if none fits.
std::string VolumeNameFromMountPath(const std::string& mount_path);

}  // namespace dljob
