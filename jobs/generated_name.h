// Names for the jobs a user does not name, made the way Kubernetes makes them
// (metadata.generateName): a prefix that says what the job runs, then a random suffix.
//
// GenerateNamePrefix picks the prefix, from the job's command and image:
//   - the model of a dljob-train command (`--model=X` or `--model X` after an argument whose last
//     path component is dljob-train, so `mpirun … /opt/bin/dljob-train --model X` counts too);
//   - else the image's repository, without registry, path, tag or digest
//     (`registry.example.com:5000/team/trainer:cuda@sha256:…` gives `trainer`);
//   - lower-cased, each run of characters other than [a-z0-9] made one '-', "dljob-" put in front
//     of one that starts with a digit (a job's name is a DNS-1035 label: a letter first);
//   - cut so that prefix and suffix fit the job-name limit for the job's workers
//     (MaxJobNameLength, child_names.h: children are named after the job), ending in '-';
//   - "dljob-" when neither gives anything.
// Every prefix it returns passes CheckGenerateName (validation.h), the rule a file's own
// metadata.generateName is held to.
//
// The suffix is kGeneratedSuffixLength characters drawn from kGeneratedNameAlphabet, the
// alphabet of the Kubernetes API server's name generator (k8s.io/apimachinery util/rand: no
// vowels, so no words; no 0, 1 or 3, so nothing to misread). The cluster backend leaves the
// suffix to the API server; the local backend draws it with DrawFreeName.
//
// Pure (the random draws come from the Rng passed in); thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/random.h"
#include "jobs/dljob_types.h"

namespace dljob {

inline constexpr char kGeneratedNameAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
inline constexpr size_t kGeneratedSuffixLength = 5;
// How many names a generateName create draws before it gives up: the API server's (Kubernetes
// 1.31's RetryGenerateName: 8 attempts in all, then 409 AlreadyExists).
inline constexpr int kGenerateNameAttempts = 8;

// The prefix for a job running `command` in `image` with `workers` workers (below 1 counts as 1).
std::string GenerateNamePrefix(const std::vector<std::string>& command, const std::string& image,
                               int64_t workers);
// The same for `job` (its command, image and WorkerCount).
std::string GenerateNamePrefix(const DLJob& job);

// kGeneratedSuffixLength characters of kGeneratedNameAlphabet, uniformly drawn from `rng`.
std::string GeneratedNameSuffix(Rng& rng);

// prefix + GeneratedNameSuffix(rng), drawn again while `taken` says the name is in use, at most
// `attempts` times in all; nullopt when every name drawn was taken.
std::optional<std::string> DrawFreeName(const std::string& prefix, Rng& rng,
                                        const std::function<bool(const std::string&)>& taken,
                                        int attempts = kGenerateNameAttempts);

}  // namespace dljob
