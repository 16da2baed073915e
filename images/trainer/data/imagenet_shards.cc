#include "images/trainer/data/imagenet_shards.h"

#include <stdexcept>

#include <torch/torch.h>

#include "base/random.h"
#include "storage/loader/sampler.h"
#include "storage/objstore/open_store.h"

namespace dljob::trainer {
namespace {

namespace ld = storage::loader;

bool IsObjectUrl(const std::string& dir) {
  return dir.rfind("oss://", 0) == 0 || dir.rfind("s3://", 0) == 0;
}

// The ImageNet channel statistics (torchvision's), for RGB inputs; their mean for grey ones.
ld::OutputSpec ImagenetOutput(const std::vector<int64_t>& shape) {
  ld::OutputSpec out;
  out.channels = static_cast<int>(shape[0]);
  out.height = static_cast<int>(shape[1]);
  out.width = static_cast<int>(shape[2]);
  out.layout = ld::Layout::kCHW;
  out.mean = {0.485f, 0.456f, 0.406f};
  out.std = {0.229f, 0.224f, 0.225f};
  if (out.channels == 1) {
    out.mean = {0.449f, 0.449f, 0.449f};
    out.std = {0.226f, 0.226f, 0.226f};
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<ImagenetShardSource>> ImagenetShardSource::Open(
    const ImagenetShardOptions& o) {
  const std::string where = "--data_dir=" + o.data_dir;
  const std::vector<int64_t>& shape = o.input_shape;
  if (shape.size() != 3 || (shape[0] != 1 && shape[0] != 3) || shape[1] < 1 || shape[2] < 1) {
    return Status::InvalidArgument(
        "--data_name=imagenet needs a model with 1- or 3-channel image inputs");
  }
  if (o.threads < 1) return Status::InvalidArgument("--loader_threads must be at least 1");
  Opener opener;
  if (IsObjectUrl(o.data_dir)) {
    Result<storage::OpenedSource> source =
        storage::OpenSource(o.data_dir, {}, storage::ProcessEnv(), "--data_dir");
    if (!source.ok()) return source.status();
    std::shared_ptr<storage::ObjectStore> store = std::move(source->store);
    opener = [store, prefix = source->prefix, split = o.split] {
      return ld::OpenStoreSplit(store, prefix, split);
    };
  } else {
    opener = [dir = o.data_dir, split = o.split] { return ld::OpenLocalSplit(dir, split); };
  }
  Result<ld::ShardSet> shards = opener();
  if (!shards.ok()) return shards.status().WithContext(where);
  if (static_cast<int64_t>(shards->classes.size()) > o.num_classes) {
    return Status::InvalidArgument(where + ": the dataset has " +
                                   std::to_string(shards->classes.size()) +
                                   " classes; the model predicts " + std::to_string(o.num_classes));
  }

  ld::LoaderOptions options;
  options.batch_size = o.batch_size;
  options.threads = o.threads;
  options.drop_last_batch = true;
  options.epochs = 0;  // the trainer decides when to stop
  options.sampler.world_size = o.world;
  options.sampler.rank = o.rank;
  options.sampler.seed = o.seed;
  options.sampler.shuffle = true;
  options.sampler.order =
      IsObjectUrl(o.data_dir) ? ld::Order::kShardWindows : ld::Order::kGlobalShuffle;
  options.sampler.remainder = ld::Remainder::kDrop;
  options.transform.output = ImagenetOutput(shape);
  options.transform.augment.random_crop = true;
  options.transform.augment.flip = true;
  options.transform.seed = MixSeed(o.seed, 0x696d616765ull);  // not the sampler's stream
  if (Status s = ld::ValidateSamplerOptions(options.sampler); !s.ok()) return s;
  std::unique_ptr<ImagenetShardSource> source(
      new ImagenetShardSource(o.data_dir, std::move(opener), std::move(*shards), options));
  source->label_limit_ =
      source->classes_.empty() ? o.num_classes : static_cast<int64_t>(source->classes_.size());
  return source;
}

ImagenetShardSource::ImagenetShardSource(std::string data_dir, Opener opener, ld::ShardSet shards,
                                         ld::LoaderOptions options)
    : data_dir_(std::move(data_dir)), opener_(std::move(opener)), options_(std::move(options)) {
  const ld::Sampler sampler(shards.records(), options_.sampler);
  num_samples_ = sampler.num_samples();
  // As the loader counts them with drop_last_batch.
  steps_per_epoch_ = static_cast<int64_t>(sampler.per_rank()) / options_.batch_size;
  classes_ = shards.classes;
  first_ = std::move(shards);
}

void ImagenetShardSource::Restart(int64_t epoch, int64_t step) {
  loader_.reset();  // stops its threads before the new loader reads
  Result<ld::ShardSet> shards = first_ ? Result<ld::ShardSet>(std::move(*first_)) : opener_();
  first_.reset();
  if (!shards.ok()) {
    throw std::runtime_error("--data_dir=" + data_dir_ + ": " + shards.status().message());
  }
  ld::LoaderOptions options = options_;
  options.start_epoch = epoch;
  options.start_step = step;
  Result<ld::LoaderPtr> loader = ld::Loader::Open(std::move(*shards), options);
  if (!loader.ok()) {
    throw std::runtime_error("--data_dir=" + data_dir_ + ": " + loader.status().message());
  }
  if ((*loader)->steps_per_epoch() != steps_per_epoch_) {
    throw std::logic_error("ImagenetShardSource: loader has " +
                           std::to_string((*loader)->steps_per_epoch()) +
                           " steps per epoch, expected " + std::to_string(steps_per_epoch_));
  }
  loader_ = std::move(*loader);
  next_epoch_ = epoch;
  next_step_ = step;
}

Batch ImagenetShardSource::Get(int64_t epoch, int64_t step) {
  if (loader_ == nullptr || epoch != next_epoch_ || step != next_step_) Restart(epoch, step);
  Result<std::optional<ld::Batch>> next = loader_->Next();
  if (!next.ok()) {
    loader_.reset();  // its error is sticky; a later Get starts afresh
    throw std::runtime_error("reading the training data from --data_dir=" + data_dir_ + ": " +
                             next.status().message());
  }
  if (!next->has_value() || (*next)->epoch != epoch || (*next)->step != step) {
    throw std::logic_error("ImagenetShardSource: the loader did not deliver epoch " +
                           std::to_string(epoch) + " step " + std::to_string(step));
  }
  if (step + 1 == steps_per_epoch_) {
    next_epoch_ = epoch + 1;
    next_step_ = 0;
  } else {
    next_step_ = step + 1;
  }
  auto batch = std::make_shared<ld::Batch>(std::move(**next));
  for (int64_t label : batch->labels) {
    if (label < 0 || label >= label_limit_) {
      throw std::runtime_error("--data_dir=" + data_dir_ + ": label " + std::to_string(label) +
                               " is outside the " + std::to_string(label_limit_) +
                               " classes; re-pack the dataset with `dljob data pack`");
    }
  }
  const ld::OutputSpec& out = options_.transform.output;
  const auto keep = [batch](void*) {};  // the tensors own a reference to the batch's buffers
  Batch result;
  result.images =
      torch::from_blob(batch->data.data(), {batch->count, out.channels, out.height, out.width},
                       keep, torch::kFloat32);
  result.labels = torch::from_blob(batch->labels.data(), {batch->count}, keep, torch::kInt64);
  return result;
}

}  // namespace dljob::trainer
