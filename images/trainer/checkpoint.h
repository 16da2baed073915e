// Checkpoints of a training run, so a restarted job loses at most one checkpoint interval.
//
// A checkpoint is a set of named tensors (parameters, buffers, optimizer momentum; the Trainer
// decides which, see training_state.h) plus CheckpointMeta: the steps completed, the position of
// the next batch in the data (epoch and step within it: the sampler, storage/loader/sampler.h,
// is a pure function of these, so a resumed run sees exactly the batches the uninterrupted run
// would have), and the settings the position depends on (world size, batch size, seed, model).
// A run may continue it at another world size (elastic.h says how the batch, the learning rate
// and the position carry over); the meta carries what that needs.
//
// On disk, in one directory, checkpoint of step S is two files:
//   ckpt-<S, 9 digits>.pt        the tensors (LibTorch archive, keys t0, t1, ... in order)
//   ckpt-<S, 9 digits>.manifest  JSON: the meta, the tensor names in order, the .pt file's size
//                                and CRC-32
// Each is written with Env::WriteFileAtomically (a temporary file beside it, fsync'ed, renamed
// into place, the directory fsync'ed); the manifest goes last. A checkpoint exists only once its
// manifest does, so a crash mid-write leaves a torn checkpoint that LoadLatest skips (with a
// warning) in favour of the one before. After a successful Save, checkpoints beyond the newest
// `keep` are deleted (manifest first, so a half-deleted one is also torn, never mistaken for
// complete).
//
// Pure functions for names, manifests, pruning and compatibility; CheckpointStore is the file
// edge, on an Env (base/env.h). One process (rank 0) writes a directory; nothing here is
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "base/env.h"
#include "base/status.h"

namespace dljob::trainer {

struct CheckpointMeta {
  int64_t step = 0;           // steps completed; the resumed run starts at step + 1
  int64_t epoch = 0;          // the next batch's epoch (0-based)
  int64_t step_in_epoch = 0;  // the next batch's step within that epoch
  int world_size = 1;
  int64_t batch_size = 0;  // per rank
  uint64_t seed = 0;
  std::string model;
  // Entries of the epoch's global order trained on, all ranks together (the next batch's start);
  // -1 in manifests older than elastic resume: then step_in_epoch x world_size x batch_size.
  int64_t sample_in_epoch = -1;
  // The world size --batch_size and --learning_rate were given for (the job's first); 0 in older
  // manifests: world_size.
  int base_world_size = 0;
  int64_t resizes = 0;  // resumes at another world size so far (elastic.h)
  bool operator==(const CheckpointMeta&) const = default;
};

struct Checkpoint {
  CheckpointMeta meta;
  std::vector<std::pair<std::string, torch::Tensor>> tensors;  // CPU tensors, in order
};

// What a manifest records.
struct Manifest {
  CheckpointMeta meta;
  std::vector<std::string> tensor_names;
  std::string data_file;  // relative to the directory
  uint64_t data_bytes = 0;
  uint32_t data_crc32 = 0;
};

// "ckpt-000000120.pt", "ckpt-000000120.manifest".
std::string CheckpointDataName(int64_t step);
std::string CheckpointManifestName(int64_t step);
// The step of a manifest's file name; nullopt for any other name (temporary files included).
std::optional<int64_t> StepOfManifestName(std::string_view name);
std::optional<int64_t> StepOfDataName(std::string_view name);

std::string FormatManifest(const Manifest& manifest);
// Errors name what is wrong ("manifest: field \"step\" is missing").
Result<Manifest> ParseManifest(std::string_view text);

// The steps to delete so that only the `keep` highest remain (keep <= 0 keeps all).
std::vector<int64_t> StepsToPrune(std::vector<int64_t> steps, int keep);

// When rank 0 saves: every `every_steps` steps (> 0), once `every_seconds` (> 0) have passed since
// the last save (or the start), after the last step, and at the step a stop was agreed on
// (SIGTERM, stop_signal.h) so that a stopped job loses nothing.
struct CheckpointPolicy {
  int64_t every_steps = 0;
  int64_t every_seconds = 0;
};
bool CheckpointDue(const CheckpointPolicy& policy, int64_t step, int64_t total_steps,
                   double seconds_since_save, bool stopping);

// OK when the settings that must match do (--model, --seed); otherwise FailedPrecondition naming
// the differing one, e.g. `the checkpoint was written with --seed=1, this run has --seed=2`.
// The world size and batch may differ within the rules of elastic.h (PlanResume).
Status CheckResumable(const CheckpointMeta& saved, const CheckpointMeta& run);

class CheckpointStore {
 public:
  // `keep` >= 1: checkpoints kept after each Save. Files are read and written through `env`,
  // which must outlive the store.
  CheckpointStore(std::string dir, int keep, Env& env = DefaultEnv());

  const std::string& dir() const { return dir_; }

  // Creates the directory if needed and checks that it is writable.
  Status Prepare();

  // Writes `checkpoint` atomically (see above) and prunes old ones. Errors name the file.
  Status Save(const Checkpoint& checkpoint);

  // The newest complete checkpoint, or nullopt when there is none. Torn or unreadable
  // checkpoints are skipped; each skip appends a line saying which and why to `warnings`.
  Result<std::optional<Checkpoint>> LoadLatest(std::vector<std::string>* warnings) const;

  // Steps of the checkpoints whose manifest exists, ascending (complete or not).
  std::vector<int64_t> ListSteps() const;

 private:
  Result<Checkpoint> Load(int64_t step) const;

  Env& env_;
  std::string dir_;
  int keep_;
};

}  // namespace dljob::trainer
