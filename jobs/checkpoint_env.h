// How spec.checkpoint reaches the workload, the one rule both backends follow (the operator's
// builders with the directory's mount path in rank 0's pod, the local backend with the local
// directory it resolved the source to):
//
//   DLJOB_CHECKPOINT_DIR             the checkpoint directory
//   DLJOB_CHECKPOINT_EVERY_STEPS     spec.checkpoint.everySteps, when set
//   DLJOB_CHECKPOINT_EVERY_SECONDS   spec.checkpoint.everySeconds, when set
//   DLJOB_CHECKPOINT_KEEP            spec.checkpoint.keep, when set
//
// for any program (every rank gets them; only rank 0's pod has the directory mounted), and for
// dljob-train its own flags: --checkpoint_dir, --checkpoint_every (everySteps; 0 when only
// everySeconds is set, so that steps do not trigger saves), --checkpoint_every_seconds and
// --checkpoint_keep, each unless the command already sets it (the command wins).
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "jobs/dljob_types.h"

namespace dljob {

inline constexpr char kCheckpointDirEnv[] = "DLJOB_CHECKPOINT_DIR";
inline constexpr char kCheckpointEveryStepsEnv[] = "DLJOB_CHECKPOINT_EVERY_STEPS";
inline constexpr char kCheckpointEverySecondsEnv[] = "DLJOB_CHECKPOINT_EVERY_SECONDS";
inline constexpr char kCheckpointKeepEnv[] = "DLJOB_CHECKPOINT_KEEP";

// The variables above for `checkpoint` kept in `dir`, in that order, each only when its field is
// set (the directory always).
std::vector<EnvVar> CheckpointEnv(const CheckpointSpec& checkpoint, const std::string& dir);

// Whether a command's program is dljob-train ("dljob-train", "/usr/local/bin/dljob-train").
bool IsDljobTrain(std::string_view program);

// `command` with dljob-train's checkpoint flags appended as described above; unchanged when
// command[0] is not dljob-train.
std::vector<std::string> WithCheckpointFlags(const std::vector<std::string>& command,
                                             const CheckpointSpec& checkpoint,
                                             const std::string& dir);

}  // namespace dljob
