// See generated_name.h.
#include "jobs/generated_name.h"

#include <algorithm>
#include <cctype>

#include "jobs/child_names.h"
#include "jobs/validation.h"

namespace dljob {
namespace {

constexpr char kFallbackPrefix[] = "dljob-";

bool IsDljobTrain(const std::string& arg) {
  return arg.substr(arg.rfind('/') + 1) == "dljob-train";
}

// The value of --model=X or --model X after the dljob-train in `command`; "" when none.
std::string ModelOf(const std::vector<std::string>& command) {
  auto train = std::find_if(command.begin(), command.end(), IsDljobTrain);
  if (train == command.end()) return "";
  for (auto it = train + 1; it != command.end(); ++it) {
    if (it->rfind("--model=", 0) == 0) return it->substr(8);
    if (*it == "--model" && it + 1 != command.end()) return *(it + 1);
  }
  return "";
}

// The repository's last path component: no registry (host[:port]/), path, tag or digest.
std::string RepositoryOf(const std::string& image) {
  std::string ref = image.substr(0, image.find('@'));
  ref = ref.substr(ref.rfind('/') + 1);  // a registry's :port comes before a '/'
  return ref.substr(0, ref.find(':'));
}

// Lower-case [a-z0-9] runs joined by single '-', none at either end.
std::string Dashed(const std::string& text) {
  std::string out;
  for (char c : text) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9')) {
      out += l;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

}  // namespace

std::string GenerateNamePrefix(const std::vector<std::string>& command, const std::string& image,
                               int64_t workers) {
  workers = std::clamp<int64_t>(workers, 1, kMaxGpus);
  std::string base = Dashed(ModelOf(command));
  if (base.empty()) base = Dashed(RepositoryOf(image));
  if (base.empty()) return kFallbackPrefix;
  if (base[0] >= '0' && base[0] <= '9') base = kFallbackPrefix + base;
  const size_t max = MaxJobNameLength(workers) - kGeneratedSuffixLength;  // the '-' included
  if (base.size() > max - 1) base.resize(max - 1);
  while (!base.empty() && base.back() == '-') base.pop_back();
  std::string prefix = base + "-";
  // The rule a file's generateName is held to is the oracle: anything it refuses is not used.
  return CheckGenerateName(prefix, workers).empty() ? prefix : kFallbackPrefix;
}

std::string GenerateNamePrefix(const DLJob& job) {
  return GenerateNamePrefix(job.spec.command, job.spec.image, WorkerCount(job));
}

std::string GeneratedNameSuffix(Rng& rng) {
  constexpr uint64_t kLetters = sizeof kGeneratedNameAlphabet - 1;
  std::string out;
  for (size_t i = 0; i < kGeneratedSuffixLength; ++i) {
    out += kGeneratedNameAlphabet[UniformBelow(rng, kLetters)];
  }
  return out;
}

std::optional<std::string> DrawFreeName(const std::string& prefix, Rng& rng,
                                        const std::function<bool(const std::string&)>& taken,
                                        int attempts) {
  for (int i = 0; i < attempts; ++i) {
    std::string name = prefix + GeneratedNameSuffix(rng);
    if (!taken(name)) return name;
  }
  return std::nullopt;
}

}  // namespace dljob
