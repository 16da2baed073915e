#include "images/trainer/data/fashion_mnist.h"

#include <filesystem>

#include <torch/torch.h>

namespace dljob::trainer {

using storage::ReadIdxFile;
namespace {

constexpr int64_t kSide = 28;

// "<dir>/<base>.gz" if it exists, else "<dir>/<base>" if it exists.
Result<std::string> FindFile(const std::string& dir, const std::string& base) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound("no such directory");
  for (const std::string& name : {base + ".gz", base}) {
    fs::path path = fs::path(dir) / name;
    if (fs::is_regular_file(path, ec)) return path.string();
  }
  return Status::NotFound("neither " + base + ".gz nor " + base + " is there");
}

}  // namespace

Result<Dataset> FashionMnistFromIdx(const IdxArray& images, const IdxArray& labels,
                                    const std::string& name) {
  if (images.dims.size() != 3 || images.dims[1] != kSide || images.dims[2] != kSide) {
    return Status::InvalidArgument(name + ": images are not N x 28 x 28");
  }
  if (labels.dims.size() != 1) return Status::InvalidArgument(name + ": labels are not a vector");
  const int64_t n = images.dims[0];
  if (labels.dims[0] != n) {
    return Status::InvalidArgument(name + ": " + std::to_string(n) + " images but " +
                                   std::to_string(labels.dims[0]) + " labels");
  }
  for (size_t i = 0; i < labels.data.size(); ++i) {
    if (labels.data[i] >= kFashionMnistClasses) {
      return Status::InvalidArgument(name + ": label " + std::to_string(labels.data[i]) +
                                     " at index " + std::to_string(i) + " is not in [0, 10)");
    }
  }
  Dataset dataset;
  torch::Tensor raw = torch::from_blob(const_cast<uint8_t*>(images.data.data()),
                                       {n, 1, kSide, kSide}, torch::kUInt8);
  dataset.images = (raw.to(torch::kFloat32).div_(255.0f).sub_(kFashionMnistMean))
                       .div_(kFashionMnistStd)
                       .contiguous();
  dataset.labels = torch::from_blob(const_cast<uint8_t*>(labels.data.data()), {n}, torch::kUInt8)
                       .to(torch::kInt64);
  dataset.num_classes = kFashionMnistClasses;
  return dataset;
}

Result<Dataset> LoadFashionMnist(const std::string& dir, Split split) {
  const std::string prefix = split == Split::kTrain ? "train" : "t10k";
  Result<std::string> image_path = FindFile(dir, prefix + "-images-idx3-ubyte");
  if (!image_path.ok()) return image_path.status();
  Result<std::string> label_path = FindFile(dir, prefix + "-labels-idx1-ubyte");
  if (!label_path.ok()) return label_path.status();
  Result<IdxArray> images = ReadIdxFile(*image_path);
  if (!images.ok()) return images.status();
  Result<IdxArray> labels = ReadIdxFile(*label_path);
  if (!labels.ok()) return labels.status();
  return FashionMnistFromIdx(*images, *labels, prefix + " split");
}

}  // namespace dljob::trainer
