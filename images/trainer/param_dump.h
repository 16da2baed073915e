// Writing a model's parameters as raw bytes, so runs can be compared bit for bit.
//
// The file holds every parameter, in the model's registration order (named_parameters()), as
// native-endian float32 values with nothing in between: two runs that produced identical
// parameters produce identical files.
#pragma once

#include <string>

#include "base/status.h"
#include "images/trainer/models/model.h"

namespace dljob::trainer {

// `base` for a 1-rank job, `base.rank<N>` otherwise.
std::string DumpPath(const std::string& base, int rank, int world_size);

// REQUIRES: every parameter is float32.
Status DumpParameters(Model& model, const std::string& path);

}  // namespace dljob::trainer
