#include "images/trainer/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <torch/serialize.h>

namespace dljob::trainer {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "ckpt-";
constexpr std::string_view kManifestSuffix = ".manifest";
constexpr const char* kFormat = "dljob-checkpoint/1";

std::string Padded(int64_t step) {
  std::string digits = std::to_string(step);
  return std::string(digits.size() < 9 ? 9 - digits.size() : 0, '0') + digits;
}

std::string Errno(const std::string& path, const char* what) {
  return "cannot " + std::string(what) + " \"" + path + "\": " + std::strerror(errno);
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

Status FsyncPath(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return Status::Unavailable(Errno(path, "open"));
  const bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok ? Status::Ok() : Status::Unavailable(Errno(path, "fsync"));
}

// Writes `bytes` to dir/.name.tmp, fsyncs it and renames it to dir/name.
Status WriteAtomically(const std::string& dir, const std::string& name, std::string_view bytes) {
  const std::string tmp = dir + "/." + name + ".tmp";
  const std::string path = dir + "/" + name;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Unavailable(Errno(tmp, "create"));
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status s = Status::Unavailable(Errno(tmp, "write"));
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    Status s = Status::Unavailable(Errno(tmp, "fsync"));
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) return Status::Unavailable(Errno(path, "rename"));
  return Status::Ok();
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(Errno(path, "read"));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return Status::Unavailable(Errno(path, "read"));
  return bytes.str();
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
  if (saved.world_size != run.world_size) {
    return differs("ranks (-np)", saved.world_size, run.world_size);
  }
  if (saved.batch_size != run.batch_size) {
    return differs("--batch_size", saved.batch_size, run.batch_size);
  }
  if (saved.seed != run.seed) return differs("--seed", saved.seed, run.seed);
  return Status::Ok();
}

CheckpointStore::CheckpointStore(std::string dir, int keep) : dir_(std::move(dir)), keep_(keep) {}

Status CheckpointStore::Prepare() {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status::Unavailable("cannot create \"" + dir_ + "\": " + ec.message());
  if (::access(dir_.c_str(), W_OK) != 0) return Status::Unavailable(Errno(dir_, "write to"));
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
  if (Status s = WriteAtomically(dir_, manifest.data_file, data); !s.ok()) return s;
  const std::string name = CheckpointManifestName(step);
  if (Status s = WriteAtomically(dir_, name, FormatManifest(manifest)); !s.ok()) return s;
  if (Status s = FsyncPath(dir_, O_RDONLY | O_DIRECTORY); !s.ok()) return s;
  for (int64_t old : StepsToPrune(ListSteps(), keep_)) {
    std::error_code ec;  // best effort: a file left behind is only disk space
    fs::remove(dir_ + "/" + CheckpointManifestName(old), ec);
    fs::remove(dir_ + "/" + CheckpointDataName(old), ec);
  }
  return Status::Ok();
}

std::vector<int64_t> CheckpointStore::ListSteps() const {
  std::vector<int64_t> steps;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    if (auto step = StepOfManifestName(entry.path().filename().string())) steps.push_back(*step);
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

Result<Checkpoint> CheckpointStore::Load(int64_t step) const {
  Result<std::string> text = ReadFile(dir_ + "/" + CheckpointManifestName(step));
  if (!text.ok()) return text.status();
  Result<Manifest> manifest = ParseManifest(*text);
  if (!manifest.ok()) return manifest.status();
  if (manifest->meta.step != step) {
    return Status::InvalidArgument("manifest: step " + std::to_string(manifest->meta.step) +
                                   " does not match its file name");
  }
  const std::string path = dir_ + "/" + manifest->data_file;
  Result<std::string> data = ReadFile(path);
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
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    std::optional<int64_t> step = StepOfDataName(entry.path().filename().string());
    if (!step || std::binary_search(steps.begin(), steps.end(), *step)) continue;
    if (found && *step < found->meta.step) continue;
    warnings->push_back("skipping checkpoint of step " + std::to_string(*step) + " in \"" + dir_ +
                        "\": it has no manifest (the save did not finish)");
  }
  return found;
}

}  // namespace dljob::trainer
