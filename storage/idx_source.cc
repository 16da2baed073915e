// The IDX half of PackDataset (pack.h): (Fashion-)MNIST image/label file pairs as splits.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>

#include "storage/idx_reader.h"
#include "storage/pack.h"

namespace dljob::storage {
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kFashionMnistClasses = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

// "<dir>/<stem>" or "<dir>/<stem>.gz", whichever exists; "" if neither.
std::string FindIdx(const std::string& dir, const std::string& stem) {
  std::error_code ec;
  for (const std::string& name : {stem, stem + ".gz"}) {
    if (fs::is_regular_file(dir + "/" + name, ec)) return dir + "/" + name;
  }
  return "";
}

struct IdxPair {
  std::shared_ptr<IdxArray> images, labels;
};

Result<IdxPair> LoadPair(const std::string& images_path, const std::string& labels_path) {
  auto images = ReadIdxFile(images_path);
  if (!images.ok()) return images.status();
  auto labels = ReadIdxFile(labels_path);
  if (!labels.ok()) return labels.status();
  if (images->dims.size() != 3 || images->dims[1] > 65535 || images->dims[2] > 65535) {
    return Status::InvalidArgument(images_path + ": expected images N x height x width");
  }
  if (labels->dims.size() != 1 || labels->dims[0] != images->dims[0]) {
    return Status::InvalidArgument(labels_path + ": expected " + std::to_string(images->dims[0]) +
                                   " labels to match " + images_path);
  }
  return IdxPair{std::make_shared<IdxArray>(std::move(images).value()),
                 std::make_shared<IdxArray>(std::move(labels).value())};
}

SplitSource MakeSplit(const std::string& name, IdxPair pair) {
  const uint64_t count = static_cast<uint64_t>(pair.images->dims[0]);
  const uint16_t h = static_cast<uint16_t>(pair.images->dims[1]);
  const uint16_t w = static_cast<uint16_t>(pair.images->dims[2]);
  return {name, count, [pair, h, w](uint64_t i) -> Result<Sample> {
            const size_t pixels = size_t{h} * w;
            const uint8_t* p = pair.images->data.data() + i * pixels;
            return Sample{pair.labels->data[i], SampleFormat::kRaw, 1, h, w, {p, p + pixels}};
          }};
}

std::vector<std::string> ClassNames(const std::string& dir, uint32_t num_classes) {
  std::string base = fs::path(dir).lexically_normal().filename().string();
  if (base.empty()) base = fs::path(dir).lexically_normal().parent_path().filename().string();
  std::transform(base.begin(), base.end(), base.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (base.find("fashion") != std::string::npos && num_classes <= kFashionMnistClasses.size()) {
    return kFashionMnistClasses;
  }
  std::vector<std::string> names;
  for (uint32_t k = 0; k < num_classes; ++k) names.push_back(std::to_string(k));
  return names;
}

}  // namespace

Result<SourcePlan> PlanIdxSource(const std::string& dir) {
  SourcePlan plan{"idx", {}, {}};
  uint32_t num_classes = 0;
  for (const auto& [prefix, split] : {std::pair{"train", "train"}, std::pair{"t10k", "test"}}) {
    std::string images = FindIdx(dir, std::string(prefix) + "-images-idx3-ubyte");
    std::string labels = FindIdx(dir, std::string(prefix) + "-labels-idx1-ubyte");
    if (images.empty() && labels.empty()) continue;
    if (images.empty() || labels.empty()) {
      return Status::InvalidArgument(dir + ": " + (images.empty() ? labels : images) +
                                     " has no matching " + (images.empty() ? "images" : "labels") +
                                     " file");
    }
    Result<IdxPair> pair = LoadPair(images, labels);
    if (!pair.ok()) return pair.status();
    for (uint8_t label : pair->labels->data)
      num_classes = std::max<uint32_t>(num_classes, label + 1);
    plan.splits.push_back(MakeSplit(split, std::move(pair).value()));
  }
  if (plan.splits.empty()) return Status::NotFound(dir + ": no IDX files");
  plan.classes = ClassNames(dir, num_classes);
  return plan;
}

}  // namespace dljob::storage
