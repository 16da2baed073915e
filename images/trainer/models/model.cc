#include "images/trainer/models/model.h"

#include <algorithm>
#include <numeric>

namespace dljob::trainer {

Status ModelRegistry::Register(ModelInfo info) {
  if (info.name.empty() || !info.create) {
    return Status::InvalidArgument("model registration needs a name and a factory");
  }
  if (models_.count(info.name) != 0) {
    return Status::AlreadyExists("model \"" + info.name + "\" is already registered");
  }
  std::string name = info.name;
  models_.emplace(std::move(name), std::move(info));
  return Status::Ok();
}

Result<const ModelInfo*> ModelRegistry::Find(const std::string& name) const {
  auto it = models_.find(name);
  if (it != models_.end()) return &it->second;
  std::string known;
  for (const std::string& n : Names()) known += (known.empty() ? "" : ", ") + n;
  return Status::NotFound("unknown model \"" + name + "\" (known models: " + known + ")");
}

std::vector<std::string> ModelRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, info] : models_) names.push_back(name);
  return names;
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string UnknownModelHint(const std::string& name, const std::vector<std::string>& known) {
  const std::string* best = nullptr;
  size_t best_distance = 3;  // suggest only near misses
  for (const std::string& candidate : known) {
    size_t d = EditDistance(name, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = &candidate;
    }
  }
  if (best != nullptr) return "did you mean --model=" + *best + "?";
  return "pass --model=<name> with one of the known models";
}

}  // namespace dljob::trainer
