#include "images/trainer/checkpoint.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <sstream>

#include <nlohmann/json.hpp>
#include <torch/serialize.h>

#include "base/errno_status.h"

namespace dljob::trainer {
namespace {

constexpr std::string_view kPrefix = "ckpt-";
constexpr std::string_view kManifestSuffix = ".manifest";
constexpr const char* kFormat = "dljob-checkpoint/1";

std::string Padded(int64_t step) {
  std::string digits = std::to_string(step);
  return std::string(digits.size() < 9 ? 9 - digits.size() : 0, '0') + digits;
}

uint32_t Crc32(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (!bytes.empty()) {
    const auto chunk = static_cast<uInt>(std::min<size_t>(bytes.size(), 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), chunk);
    bytes.remove_prefix(chunk);
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace

std::string CheckpointDataName(int64_t step) { return std::string(kPrefix) + Padded(step) + ".pt"; }

std::string CheckpointManifestName(int64_t step) {
  return std::string(kPrefix) + Padded(step) + std::string(kManifestSuffix);
}

namespace {

std::optional<int64_t> StepOfName(std::string_view name, std::string_view suffix) {
  if (!name.starts_with(kPrefix) || !name.ends_with(suffix)) return std::nullopt;
  std::string_view digits = name.substr(kPrefix.size());
  digits.remove_suffix(suffix.size());
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return std::nullopt;
  int64_t step = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return step;
}

}  // namespace

std::optional<int64_t> StepOfManifestName(std::string_view name) {
  return StepOfName(name, kManifestSuffix);
}

std::optional<int64_t> StepOfDataName(std::string_view name) { return StepOfName(name, ".pt"); }

std::string FormatManifest(const Manifest& m) {
  nlohmann::json j = {
      {"format", kFormat},
      {"step", m.meta.step},
      {"epoch", m.meta.epoch},
      {"step_in_epoch", m.meta.step_in_epoch},
      {"world_size", m.meta.world_size},
      {"batch_size", m.meta.batch_size},
      {"seed", m.meta.seed},
      {"model", m.meta.model},
      {"sample_in_epoch", m.meta.sample_in_epoch},
      {"base_world_size", m.meta.base_world_size},
      {"resizes", m.meta.resizes},
      {"tensors", m.tensor_names},
      {"data_file", m.data_file},
      {"data_bytes", m.data_bytes},
      {"data_crc32", m.data_crc32},
  };
  return j.dump(2) + "\n";
}

Result<Manifest> ParseManifest(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument("manifest: not JSON");
  if (j.value("format", "") != kFormat) {
    return Status::InvalidArgument("manifest: format is not \"" + std::string(kFormat) + "\"");
  }
  Manifest m;
  try {
    auto get = [&j](const char* key, auto& out) {
      if (!j.contains(key)) {
        throw std::invalid_argument("field \"" + std::string(key) + "\" is missing");
      }
      j.at(key).get_to(out);
    };
    get("step", m.meta.step);
    get("epoch", m.meta.epoch);
    get("step_in_epoch", m.meta.step_in_epoch);
    get("world_size", m.meta.world_size);
    get("batch_size", m.meta.batch_size);
    get("seed", m.meta.seed);
    get("model", m.meta.model);
    // Added with elastic resume; older manifests lack them (the defaults say what that means).
    auto get_optional = [&j](const char* key, auto& out) {
      if (j.contains(key)) j.at(key).get_to(out);
    };
    get_optional("sample_in_epoch", m.meta.sample_in_epoch);
    get_optional("base_world_size", m.meta.base_world_size);
    get_optional("resizes", m.meta.resizes);
    get("tensors", m.tensor_names);
    get("data_file", m.data_file);
    get("data_bytes", m.data_bytes);
    get("data_crc32", m.data_crc32);
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string("manifest: ") + e.what());
  }
  if (m.data_file.empty() || m.data_file.find('/') != std::string::npos) {
    return Status::InvalidArgument("manifest: data_file must be a plain file name");
  }
  if (m.meta.world_size < 1 || m.meta.batch_size < 1) {
    return Status::InvalidArgument("manifest: world_size and batch_size must be at least 1");
  }
  if (m.meta.sample_in_epoch < -1 || m.meta.base_world_size < 0 || m.meta.resizes < 0) {
    return Status::InvalidArgument(
        "manifest: sample_in_epoch, base_world_size and resizes must not be negative");
  }
  return m;
}

std::vector<int64_t> StepsToPrune(std::vector<int64_t> steps, int keep) {
  if (keep <= 0 || steps.size() <= static_cast<size_t>(keep)) return {};
  std::sort(steps.begin(), steps.end());
  steps.resize(steps.size() - static_cast<size_t>(keep));
  return steps;
}

bool CheckpointDue(const CheckpointPolicy& policy, int64_t step, int64_t total_steps,
                   double seconds_since_save, bool stopping) {
  return stopping || step == total_steps ||
         (policy.every_steps > 0 && step % policy.every_steps == 0) ||
         (policy.every_seconds > 0 &&
          seconds_since_save >= static_cast<double>(policy.every_seconds));
}

Status CheckResumable(const CheckpointMeta& saved, const CheckpointMeta& run) {
  auto differs = [](const std::string& flag, const auto& was, const auto& is) {
    std::ostringstream m;
    m << "the checkpoint was written with " << flag << "=" << was << ", this run has " << flag
      << "=" << is;
    return Status::FailedPrecondition(m.str());
  };
  if (saved.model != run.model) return differs("--model", saved.model, run.model);
  if (saved.seed != run.seed) return differs("--seed", saved.seed, run.seed);
  return Status::Ok();
}

CheckpointStore::CheckpointStore(std::string dir, int keep, Env& env)
    : env_(env), dir_(std::move(dir)), keep_(keep) {}

Status CheckpointStore::Prepare() {
  if (Status s = env_.CreateDirs(dir_); !s.ok()) return s;
  if (::access(dir_.c_str(), W_OK) != 0) return ErrnoStatus("cannot write to", dir_);
  return Status::Ok();
}

Status CheckpointStore::Save(const Checkpoint& checkpoint) {
  const int64_t step = checkpoint.meta.step;
  Manifest manifest;
  manifest.meta = checkpoint.meta;
  manifest.data_file = CheckpointDataName(step);
  std::ostringstream bytes;
  try {
    torch::serialize::OutputArchive archive;
    for (size_t i = 0; i < checkpoint.tensors.size(); ++i) {
      archive.write("t" + std::to_string(i), checkpoint.tensors[i].second.detach().cpu());
      manifest.tensor_names.push_back(checkpoint.tensors[i].first);
    }
    archive.save_to(bytes);
  } catch (const c10::Error& e) {
    return Status::Internal(std::string("serializing checkpoint: ") + e.what_without_backtrace());
  }
  const std::string data = bytes.str();
  manifest.data_bytes = data.size();
  manifest.data_crc32 = Crc32(data);
  // The data first, the manifest last: a crash between them leaves data without a manifest,
  // which LoadLatest skips. Each write is durable (file and directory synced) before the next.
  if (Status s = env_.WriteFileAtomically(dir_ + "/" + manifest.data_file, data); !s.ok()) {
    return s;
  }
  const std::string manifest_path = dir_ + "/" + CheckpointManifestName(step);
  if (Status s = env_.WriteFileAtomically(manifest_path, FormatManifest(manifest)); !s.ok()) {
    return s;
  }
  for (int64_t old : StepsToPrune(ListSteps(), keep_)) {
    // Best effort: a file left behind is only disk space.
    (void)env_.RemoveAll(dir_ + "/" + CheckpointManifestName(old));
    (void)env_.RemoveAll(dir_ + "/" + CheckpointDataName(old));
  }
  return Status::Ok();
}

std::vector<int64_t> CheckpointStore::ListSteps() const {
  std::vector<int64_t> steps;
  Result<std::vector<std::string>> names = env_.ListDir(dir_);
  if (!names.ok()) return steps;
  for (const std::string& name : *names) {
    if (auto step = StepOfManifestName(name)) steps.push_back(*step);
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

Result<Checkpoint> CheckpointStore::Load(int64_t step) const {
  Result<std::string> text = env_.ReadFile(dir_ + "/" + CheckpointManifestName(step));
  if (!text.ok()) return text.status();
  Result<Manifest> manifest = ParseManifest(*text);
  if (!manifest.ok()) return manifest.status();
  if (manifest->meta.step != step) {
    return Status::InvalidArgument("manifest: step " + std::to_string(manifest->meta.step) +
                                   " does not match its file name");
  }
  const std::string path = dir_ + "/" + manifest->data_file;
  Result<std::string> data = env_.ReadFile(path);
  if (!data.ok()) return data.status();
  if (data->size() != manifest->data_bytes || Crc32(*data) != manifest->data_crc32) {
    return Status::InvalidArgument("\"" + path + "\" is truncated or corrupt (" +
                                   std::to_string(data->size()) + " bytes, the manifest says " +
                                   std::to_string(manifest->data_bytes) + ")");
  }
  Checkpoint checkpoint;
  checkpoint.meta = manifest->meta;
  try {
    torch::serialize::InputArchive archive;
    std::istringstream in(std::move(*data));
    archive.load_from(in);
    for (size_t i = 0; i < manifest->tensor_names.size(); ++i) {
      torch::Tensor t;
      archive.read("t" + std::to_string(i), t);
      checkpoint.tensors.emplace_back(manifest->tensor_names[i], std::move(t));
    }
  } catch (const c10::Error& e) {
    return Status::InvalidArgument("\"" + path + "\": " + std::string(e.what_without_backtrace()));
  }
  return checkpoint;
}

Result<std::optional<Checkpoint>> CheckpointStore::LoadLatest(
    std::vector<std::string>* warnings) const {
  const std::vector<int64_t> steps = ListSteps();
  std::optional<Checkpoint> found;
  for (auto it = steps.rbegin(); it != steps.rend() && !found; ++it) {
    Result<Checkpoint> checkpoint = Load(*it);
    if (checkpoint.ok()) {
      found = std::move(*checkpoint);
    } else {
      warnings->push_back("skipping checkpoint of step " + std::to_string(*it) + " in \"" + dir_ +
                          "\": " + checkpoint.status().message());
    }
  }
  // Data written but no manifest: a save cut short. Only newer ones matter (older ones are
  // leftovers of pruning and were never chosen anyway).
  Result<std::vector<std::string>> names = env_.ListDir(dir_);
  for (const std::string& name : names.ok() ? *names : std::vector<std::string>{}) {
    std::optional<int64_t> step = StepOfDataName(name);
    if (!step || std::binary_search(steps.begin(), steps.end(), *step)) continue;
    if (found && *step < found->meta.step) continue;
    warnings->push_back("skipping checkpoint of step " + std::to_string(*step) + " in \"" + dir_ +
                        "\": it has no manifest (the save did not finish)");
  }
  return found;
}

}  // namespace dljob::trainer
