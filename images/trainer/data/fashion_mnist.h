// Fashion-MNIST loading: the four IDX files of the Debian package dataset-fashion-mnist (or of
// the original distribution) turned into normalised Datasets.
//
// Images become float32 [N, 1, 28, 28], scaled to [0, 1] and normalised with the training set's
// mean and standard deviation; labels become int64 [N] in [0, 10). Either the gzipped files
// (`train-images-idx3-ubyte.gz`) or the plain ones (`train-images-idx3-ubyte`) are accepted.
// Errors name the file and the problem. Pure apart from reading files; thread-safe.
#pragma once

#include <string>

#include "base/status.h"
#include "images/trainer/data/dataset.h"
#include "storage/idx_reader.h"

namespace dljob::trainer {

using storage::IdxArray;

inline constexpr float kFashionMnistMean = 0.2860f;
inline constexpr float kFashionMnistStd = 0.3530f;
inline constexpr int64_t kFashionMnistClasses = 10;
inline constexpr const char* kDefaultFashionMnistDir = "/usr/share/datasets/fashion-mnist";

enum class Split { kTrain, kTest };

// Loads one split from `dir`.
Result<Dataset> LoadFashionMnist(const std::string& dir, Split split);

// Checks that `images` is [N, 28, 28] and `labels` is [N] with labels < 10, then builds the
// normalised Dataset. `name` prefixes error messages.
Result<Dataset> FashionMnistFromIdx(const IdxArray& images, const IdxArray& labels,
                                    const std::string& name);

}  // namespace dljob::trainer
