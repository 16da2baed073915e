#include "images/trainer/data/training_data.h"

#include <filesystem>

#include "images/trainer/data/fashion_mnist.h"
#include "images/trainer/data/fashion_mnist_shards.h"
#include "images/trainer/data/imagenet_shards.h"
#include "images/trainer/data/language_data.h"

namespace dljob::trainer {
namespace {

Result<TrainingData> MakeFashionMnist(const TrainingDataOptions& o) {
  auto fail = [&](const Status& s) {
    return Status(s.code(),
                  "cannot read Fashion-MNIST from \"" + o.data_dir + "\": " + s.message());
  };
  if (o.input_shape != std::vector<int64_t>{1, 28, 28} || o.num_classes != kFashionMnistClasses) {
    return Status::InvalidArgument(
        "Fashion-MNIST has 1x28x28 images in 10 classes; this model expects other inputs (use "
        "--data_name=synthetic)");
  }
  // Record shards (from `dljob data pack`) when --data_dir holds them or is a URL; else IDX.
  const bool shards = IsFashionMnistShardDir(o.data_dir);
  auto load = [&](Split split) -> Result<Dataset> {
    if (shards) return LoadFashionMnistShards(o.data_dir, split);
    Result<Dataset> d = LoadFashionMnist(o.data_dir, split);
    std::error_code ec;
    if (!d.ok() && d.status().code() == StatusCode::kNotFound &&
        std::filesystem::is_directory(o.data_dir, ec)) {
      return Status::NotFound(d.status().message() +
                              ", and there are no record shards (train-*.shard) either");
    }
    return d;
  };
  Result<Dataset> train = load(Split::kTrain);
  if (!train.ok()) return fail(train.status());
  TrainingData data;
  if (o.load_test) {
    Result<Dataset> test = load(Split::kTest);
    if (!test.ok()) return fail(test.status());
    data.test = std::move(*test);
  }
  data.train_examples = train->size();
  data.description = "fashion-mnist (" + std::to_string(train->size()) + " train" +
                     (data.test ? ", " + std::to_string(data.test->size()) + " test" : "") +
                     " images" + (shards ? ", from record shards" : "") + ")";
  data.train =
      std::make_unique<ShardedDataSource>(std::move(*train), o.world, o.rank, o.batch_size, o.seed);
  return data;
}

Result<TrainingData> MakeImagenet(const TrainingDataOptions& o) {
  Result<std::unique_ptr<ImagenetShardSource>> source =
      ImagenetShardSource::Open({o.data_dir, "train", o.input_shape, o.num_classes, o.world, o.rank,
                                 o.batch_size, o.seed, o.loader_threads});
  if (!source.ok()) return source.status();
  TrainingData data;
  data.train_examples = static_cast<int64_t>((*source)->num_samples());
  data.description = "imagenet shards (" + std::to_string(data.train_examples) + " train images, " +
                     std::to_string((*source)->classes().size()) + " classes, from " + o.data_dir +
                     ")";
  data.train = std::move(*source);
  return data;
}

Result<TrainingData> MakeSynthetic(const TrainingDataOptions& o) {
  TrainingData data;
  // Each rank gets a different fixed batch, as real data would give.
  data.train = std::make_unique<SyntheticDataSource>(o.input_shape, o.num_classes, o.world,
                                                     o.batch_size, o.seed + 7919 * (o.rank + 1));
  data.train_examples = kSyntheticExamplesPerEpoch;
  data.description = "synthetic (a fixed random batch per rank, no I/O)";
  return data;
}

Result<TrainingData> MakeTextData(const TrainingDataOptions& o) {
  switch (o.data_name) {
    case DataName::kKjv:
      return MakeKjvData(o);
    case DataName::kSynthetic:
      return MakeSyntheticText(o);
    case DataName::kFashionMnist:
    case DataName::kImagenet:
      break;
  }
  return Status::InvalidArgument("--data_name=" + std::string(Name(o.data_name)) +
                                 " is image data and this model is a language model; pass "
                                 "--data_name=kjv or --data_name=synthetic");
}

}  // namespace

Result<TrainingData> MakeTrainingData(const TrainingDataOptions& o) {
  if (o.task == Task::kLanguageModel) return MakeTextData(o);
  switch (o.data_name) {
    case DataName::kKjv:
      return Status::InvalidArgument(
          "--data_name=kjv is text, for language models (--model=lstm_lm); pass an image data "
          "set to this model");
    case DataName::kFashionMnist:
      return MakeFashionMnist(o);
    case DataName::kImagenet:
      return MakeImagenet(o);
    case DataName::kSynthetic:
      return MakeSynthetic(o);
  }
  return Status::InvalidArgument("unknown --data_name");  // not reached: the enum is checked
}

}  // namespace dljob::trainer
