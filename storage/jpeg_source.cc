// The JPEG-tree half of PackDataset (pack.h): SRC/[split/]<class>/*.jpg as splits.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <set>

#include <turbojpeg.h>

#include "base/env.h"
#include "storage/pack.h"

namespace dljob::storage {
namespace fs = std::filesystem;

namespace {

const std::set<std::string> kSplitFolders = {"train", "val", "validation", "test"};

struct Item {
  std::string path;
  uint32_t label;
};

bool IsJpegName(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".jpg" || ext == ".jpeg";
}

std::vector<std::string> SortedSubdirs(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory(ec) && e.path().filename().string()[0] != '.') {
      names.push_back(e.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// class name -> sorted JPEG paths, for the class folders under `dir`.
std::map<std::string, std::vector<std::string>> ListClasses(const std::string& dir) {
  std::map<std::string, std::vector<std::string>> classes;
  for (const std::string& c : SortedSubdirs(dir)) {
    std::vector<std::string>& files = classes[c];
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir + "/" + c, ec)) {
      if (e.is_regular_file(ec) && IsJpegName(e.path())) files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
  }
  return classes;
}

Result<Sample> LoadJpeg(const Item& item) {
  Result<std::string> file = DefaultEnv().ReadFile(item.path);
  if (!file.ok()) return file.status();
  std::vector<uint8_t> bytes(file->begin(), file->end());
  std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitDecompress(), tjDestroy);
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  if (!tj || tjDecompressHeader3(tj.get(), bytes.data(), bytes.size(), &width, &height, &subsamp,
                                 &colorspace) != 0) {
    return Status::InvalidArgument(item.path + ": not a readable JPEG (" +
                                   tjGetErrorStr2(tj.get()) + ")");
  }
  const uint8_t channels = colorspace == TJCS_GRAY ? 1 : 3;
  return Sample{item.label,
                SampleFormat::kJpeg,
                channels,
                static_cast<uint16_t>(height),
                static_cast<uint16_t>(width),
                std::move(bytes)};
}

SplitSource MakeSplit(const std::string& name, std::vector<Item> items, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::shuffle(items.begin(), items.end(), rng);
  auto shared = std::make_shared<std::vector<Item>>(std::move(items));
  return {name, shared->size(), [shared](uint64_t i) { return LoadJpeg((*shared)[i]); }};
}

}  // namespace

Result<SourcePlan> PlanJpegSource(const std::string& dir, uint64_t shuffle_seed) {
  // Split folders above the classes if every top-level folder is a split name.
  std::vector<std::string> top = SortedSubdirs(dir);
  const bool has_splits = !top.empty() && std::all_of(top.begin(), top.end(), [](auto& n) {
    return kSplitFolders.count(n) > 0;
  });
  std::map<std::string, std::map<std::string, std::vector<std::string>>> splits;
  if (has_splits) {
    for (const std::string& s : top) splits[s] = ListClasses(dir + "/" + s);
  } else {
    splits["train"] = ListClasses(dir);
  }
  std::set<std::string> class_set;
  uint64_t files = 0;
  for (auto& [s, classes] : splits) {
    for (auto& [c, paths] : classes) {
      class_set.insert(c);
      files += paths.size();
    }
  }
  if (files == 0) return Status::NotFound(dir + ": no class folders with .jpg files");
  SourcePlan plan{"jpeg", {class_set.begin(), class_set.end()}, {}};
  for (auto& [s, classes] : splits) {
    std::vector<Item> items;
    for (auto& [c, paths] : classes) {
      auto label = static_cast<uint32_t>(
          std::lower_bound(plan.classes.begin(), plan.classes.end(), c) - plan.classes.begin());
      for (std::string& p : paths) items.push_back({std::move(p), label});
    }
    plan.splits.push_back(MakeSplit(s, std::move(items), shuffle_seed));
  }
  return plan;
}

}  // namespace dljob::storage
