// Loader: one rank's stream of training batches from a packed dataset split — the data path of
// dljob-train (docs/concepts/architecture.md, "Storage").
//
// A Sampler (sampler.h) decides which samples this rank reads in each epoch; a pool of `threads`
// worker threads each builds whole batches (batch_builder.h: coalesced shard reads, CRC checks,
// JPEG decode, random-resized-crop, flip, normalisation) ahead of the consumer. At most
// `batches_in_flight` batches exist at once (being built or ready and not yet taken), so memory
// is bounded by about batches_in_flight * batch_size * output.floats() * 4 bytes plus one
// decoded image and one read buffer per thread, plus up to batches_in_flight spare buffers of
// batches the consumer has dropped (kept for reuse; see Batch), plus the batches it still holds.
//
// Next() hands batches out strictly in order: epoch by epoch, step 0, 1, ... Each Batch says its
// epoch and step and whether it is the last of its epoch; after the last requested epoch Next()
// returns nullopt. Every rank of a job opened with the same options (except sampler.rank) gets
// the same steps_per_epoch(), so ranks stay in lock step. The first failure (e.g. a corrupt
// record: "…/train-00001-of-00004.shard: at byte 13920: record 17: payload CRC mismatch …")
// stops the workers and is returned by that Next() and every later one; batches are never
// silently skipped.
//
// Determinism: batch contents depend only on the options, the data and (epoch, step) — not on
// the number of threads or on timing.
//
// Thread-safety: Next() and the accessors may be called from one consumer thread at a time. The
// destructor stops the workers (they finish the batch in hand) and joins them.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "storage/loader/batch_builder.h"
#include "storage/loader/buffer_pool.h"
#include "storage/loader/sampler.h"
#include "storage/loader/shard_source.h"

namespace dljob::storage::loader {

struct LoaderOptions {
  int64_t batch_size = 32;
  int threads = 4;
  int batches_in_flight = 0;  // 0: 2 * threads
  int64_t start_epoch = 0;    // resume: first epoch delivered
  int64_t start_step = 0;     // resume: first step of start_epoch
  int64_t epochs = 0;         // epochs to deliver from start_epoch; 0 = no end
  // false: a short last batch ends each epoch (same size on every rank); true: it is dropped.
  bool drop_last_batch = true;
  SamplerOptions sampler;
  TransformOptions transform;
  ReadOptions read;
};

// One batch, owned by whoever holds it. `data` stays valid (and unmoved) for as long as this
// Batch object lives, so it may be wrapped without copying (dljob-train's from_blob tensors keep
// the Batch alive through their deleter). When a Batch from a Loader is destroyed, its `data`
// buffer goes back to the loader's pool (buffer_pool.h) for a later batch: drop batches you are
// done with rather than keeping them, so the buffers are reused.
struct Batch {
  int64_t epoch = 0, step = 0;
  bool last_in_epoch = false;
  int64_t count = 0;              // samples in this batch
  std::vector<float> data;        // count x output (CHW or HWC per sample)
  std::vector<int64_t> labels;    // count
  std::vector<uint64_t> samples;  // count: global sample numbers (sampler.h), for checks and logs

  Batch() = default;
  ~Batch() {
    if (pool_) pool_->Give(std::move(data));
  }
  Batch(Batch&&) noexcept = default;
  Batch& operator=(Batch&& other) noexcept {
    if (this != &other) {
      if (pool_) pool_->Give(std::move(data));
      epoch = other.epoch;
      step = other.step;
      last_in_epoch = other.last_in_epoch;
      count = other.count;
      data = std::move(other.data);
      labels = std::move(other.labels);
      samples = std::move(other.samples);
      pool_ = std::move(other.pool_);
    }
    return *this;
  }
  // A copy owns a fresh buffer and is not pooled.
  Batch(const Batch& other)
      : epoch(other.epoch),
        step(other.step),
        last_in_epoch(other.last_in_epoch),
        count(other.count),
        data(other.data),
        labels(other.labels),
        samples(other.samples) {}
  Batch& operator=(const Batch& other) {
    if (this != &other) *this = Batch(other);
    return *this;
  }

 private:
  friend class Loader;
  std::shared_ptr<FloatBufferPool> pool_;  // where `data` goes back to; null when not pooled
};

class Loader;
using LoaderPtr = std::unique_ptr<Loader>;

class Loader {
 public:
  // kInvalidArgument naming the option for bad options or a split too small for one batch per
  // rank. Starts the threads.
  static Result<LoaderPtr> Open(ShardSet shards, LoaderOptions options);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  int64_t steps_per_epoch() const { return steps_per_epoch_; }
  uint64_t samples_per_epoch() const { return sampler_.per_rank(); }  // this rank's
  const std::vector<std::string>& classes() const { return shards_.classes; }
  const LoaderOptions& options() const { return options_; }

  // Blocks until the next batch is built. nullopt once `epochs` epochs were delivered.
  Result<std::optional<Batch>> Next();

 private:
  Loader(ShardSet shards, LoaderOptions options);
  void Work();
  // This rank's order for `epoch`, computed once.
  std::shared_ptr<const std::vector<uint64_t>> OrderFor(int64_t epoch) REQUIRES(mu_);
  Result<Batch> BuildBatch(BatchBuilder& builder, int64_t sequence);

  const ShardSet shards_;
  const LoaderOptions options_;
  const Sampler sampler_;
  int64_t steps_per_epoch_ = 0;
  int64_t total_batches_ = -1;  // -1: no end
  int in_flight_ = 0;

  Mutex mu_;
  std::condition_variable_any work_cv_;     // a worker may claim a batch, or stop
  std::condition_variable_any ready_cv_;    // a batch is ready
  int64_t next_claim_ GUARDED_BY(mu_) = 0;  // sequence numbers from 0
  int64_t next_out_ GUARDED_BY(mu_) = 0;
  bool stop_ GUARDED_BY(mu_) = false;
  std::map<int64_t, Result<Batch>> ready_ GUARDED_BY(mu_);
  std::map<int64_t, std::shared_ptr<const std::vector<uint64_t>>> orders_ GUARDED_BY(mu_);
  std::optional<Status> error_;  // the consumer's sticky error
  // Shared with the Batches handed out, which may outlive the Loader.
  std::shared_ptr<FloatBufferPool> pool_;
  std::vector<std::thread> threads_;
};

}  // namespace dljob::storage::loader
