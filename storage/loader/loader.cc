#include "storage/loader/loader.h"

#include <algorithm>
#include <string>

namespace dljob::storage::loader {
namespace {

Status ValidateOptions(const LoaderOptions& o) {
  auto bad = [](const std::string& field, const std::string& what) {
    return Status::InvalidArgument("loader." + field + ": " + what);
  };
  if (o.batch_size < 1) return bad("batch_size", "must be at least 1");
  if (o.threads < 1) return bad("threads", "must be at least 1");
  if (o.batches_in_flight < 0) return bad("batches_in_flight", "must be 0 (automatic) or more");
  if (o.start_epoch < 0) return bad("start_epoch", "must not be negative");
  if (o.start_step < 0) return bad("start_step", "must not be negative");
  if (o.epochs < 0) return bad("epochs", "must be 0 (no end) or more");
  if (Status s = ValidateSamplerOptions(o.sampler); !s.ok()) return s.WithContext("loader");
  const OutputSpec& out = o.transform.output;
  if (out.width < 1 || out.height < 1) return bad("output", "width and height must be positive");
  if (out.channels != 1 && out.channels != 3) return bad("output.channels", "must be 1 or 3");
  for (int c = 0; c < out.channels; ++c) {
    if (!(out.std[c] > 0)) return bad("output.std", "must be positive");
  }
  const AugmentOptions& a = o.transform.augment;
  if (!(a.scale_min > 0 && a.scale_min <= a.scale_max && a.scale_max <= 1)) {
    return bad("augment.scale", "needs 0 < scale_min <= scale_max <= 1");
  }
  if (!(a.ratio_min > 0 && a.ratio_min <= a.ratio_max)) {
    return bad("augment.ratio", "needs 0 < ratio_min <= ratio_max");
  }
  if (!(a.center_fraction > 0 && a.center_fraction <= 1)) {
    return bad("augment.center_fraction", "must be in (0, 1]");
  }
  return Status::Ok();
}

}  // namespace

Result<LoaderPtr> Loader::Open(ShardSet shards, LoaderOptions options) {
  if (Status s = ValidateOptions(options); !s.ok()) return s;
  if (shards.shards.empty()) return Status::InvalidArgument("loader: the shard set is empty");
  LoaderPtr loader(new Loader(std::move(shards), std::move(options)));
  const LoaderOptions& o = loader->options_;
  if (loader->steps_per_epoch_ == 0) {
    return Status::InvalidArgument("loader.batch_size: split \"" + loader->shards_.split +
                                   "\" has " + std::to_string(loader->sampler_.num_samples()) +
                                   " samples, " + std::to_string(loader->sampler_.per_rank()) +
                                   " per rank for " + std::to_string(o.sampler.world_size) +
                                   " ranks: not one batch of " + std::to_string(o.batch_size) +
                                   "; use a smaller batch or fewer ranks");
  }
  if (o.start_step >= loader->steps_per_epoch_) {
    return Status::InvalidArgument("loader.start_step: " + std::to_string(o.start_step) +
                                   " is past the " + std::to_string(loader->steps_per_epoch_) +
                                   " steps of an epoch");
  }
  for (int t = 0; t < o.threads; ++t)
    loader->threads_.emplace_back([l = loader.get()] { l->Work(); });
  return loader;
}

Loader::Loader(ShardSet shards, LoaderOptions options)
    : shards_(std::move(shards)),
      options_(std::move(options)),
      sampler_(shards_.records(), options_.sampler) {
  const auto per_rank = static_cast<int64_t>(sampler_.per_rank());
  const int64_t b = options_.batch_size;
  steps_per_epoch_ = options_.drop_last_batch ? per_rank / b : (per_rank + b - 1) / b;
  if (options_.epochs > 0)
    total_batches_ = options_.epochs * steps_per_epoch_ - options_.start_step;
  in_flight_ = options_.batches_in_flight > 0 ? options_.batches_in_flight : 2 * options_.threads;
  pool_ = std::make_shared<FloatBufferPool>(size_t(in_flight_));
}

Loader::~Loader() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

std::shared_ptr<const std::vector<uint64_t>> Loader::OrderFor(int64_t epoch) {
  auto it = orders_.find(epoch);
  if (it != orders_.end()) return it->second;
  // Workers claim in sequence order, so epochs before the previous one are done with.
  while (!orders_.empty() && orders_.begin()->first < epoch - 1) orders_.erase(orders_.begin());
  auto order = std::make_shared<const std::vector<uint64_t>>(sampler_.RankOrder(epoch));
  orders_[epoch] = order;
  return order;
}

Result<Batch> Loader::BuildBatch(BatchBuilder& builder, int64_t sequence) {
  const int64_t position = options_.start_step + sequence;
  Batch batch;
  batch.epoch = options_.start_epoch + position / steps_per_epoch_;
  batch.step = position % steps_per_epoch_;
  batch.last_in_epoch = batch.step == steps_per_epoch_ - 1;
  std::shared_ptr<const std::vector<uint64_t>> order;
  {
    MutexLock lock(mu_);
    order = OrderFor(batch.epoch);
  }
  const int64_t first = batch.step * options_.batch_size;
  batch.count = std::min<int64_t>(options_.batch_size, int64_t(order->size()) - first);
  batch.samples.assign(order->begin() + first, order->begin() + first + batch.count);
  batch.data = pool_->Take(size_t(batch.count * options_.transform.output.floats()));
  batch.pool_ = pool_;
  batch.labels.resize(size_t(batch.count));
  if (Status s = builder.Build(batch.epoch, batch.samples, batch.data, batch.labels); !s.ok()) {
    return s;
  }
  return batch;
}

void Loader::Work() {
  BatchBuilder builder(shards_, sampler_, options_.transform, options_.read);
  while (true) {
    int64_t sequence = 0;
    {
      MutexLock lock(mu_);
      work_cv_.wait(mu_, [&]() REQUIRES(mu_) {
        return stop_ || ((total_batches_ < 0 || next_claim_ < total_batches_) &&
                         next_claim_ < next_out_ + in_flight_);
      });
      if (stop_) return;
      sequence = next_claim_++;
    }
    Result<Batch> batch = BuildBatch(builder, sequence);
    MutexLock lock(mu_);
    // After a failure no later batch is claimed: the consumer will stop at this one.
    if (!batch.ok()) {
      stop_ = true;
      work_cv_.notify_all();
    }
    ready_.emplace(sequence, std::move(batch));
    ready_cv_.notify_all();
    if (stop_) return;
  }
}

Result<std::optional<Batch>> Loader::Next() {
  if (error_) return *error_;
  std::map<int64_t, Result<Batch>>::node_type node;
  {
    MutexLock lock(mu_);
    if (total_batches_ >= 0 && next_out_ >= total_batches_) return std::optional<Batch>();
    ready_cv_.wait(mu_, [&]() REQUIRES(mu_) { return ready_.count(next_out_) > 0; });
    node = ready_.extract(next_out_);
    ++next_out_;
  }
  work_cv_.notify_all();
  Result<Batch>& batch = node.mapped();
  if (!batch.ok()) {
    error_ = batch.status();
    return *error_;
  }
  return std::optional<Batch>(std::move(batch).value());
}

}  // namespace dljob::storage::loader
