// dljob-train's enumerated options: each flag that picks one of a few named values (--data_name,
// --data_format, --collective, --variable_update, --allreduce_alg, --gradient_compression) is an
// enum here, with one
// table giving every value its flag spelling. flags.cc parses the command line into these once;
// the rest of the trainer switches on the enums and never compares strings.
//
// Name(value) is the flag spelling, for printing; ParseChoice<E>("--flag", text) is the inverse,
// and its error lists the valid values as the flags spell them
// (`--data_name: cifar10 not in {fashion-mnist,synthetic,imagenet}`). Adding a value means one
// enumerator and one table row.
//
// Pure, header-only; all functions are thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace dljob::trainer {

// --data_name: where the training samples come from (data/training_data.h).
enum class DataName { kFashionMnist, kSynthetic, kImagenet, kKjv };
// --data_format: the memory layout of the model and its inputs.
enum class DataFormat { kNchw, kNhwc };
// --collective: which backend carries the collectives (comm/collective_backend.h); kAuto lets
// the registry pick the first one that can run here.
enum class CollectiveChoice { kAuto, kMpi, kNccl };
// --variable_update: how gradients become the same update on every rank (variable_update.h).
enum class VariableUpdate { kAllreduce, kParameterServer };
// --allreduce_alg: the backend's flat allreduce, or the two-level one over nodes
// (comm/hierarchical_collective.h).
enum class AllreduceAlg { kRing, kHierarchical };
// --gradient_compression: the allreduce update's gradients as float32, or quantised to 2 bits
// with error feedback (comm/gradient_compression.h).
enum class GradientCompression { kNone, kTwoBit };

// --lstm_config: the LSTM language model's preset (language_model_flags.h).
enum class LstmConfig { kSmall, kMedium };

template <typename E>
struct ChoiceName {
  E value;
  std::string_view name;
};

// The tables, in the order --help lists the values. Choices(E{}) selects one by type.
inline constexpr ChoiceName<DataName> kDataNames[] = {{DataName::kFashionMnist, "fashion-mnist"},
                                                      {DataName::kSynthetic, "synthetic"},
                                                      {DataName::kImagenet, "imagenet"},
                                                      {DataName::kKjv, "kjv"}};
inline constexpr ChoiceName<DataFormat> kDataFormats[] = {{DataFormat::kNchw, "NCHW"},
                                                          {DataFormat::kNhwc, "NHWC"}};
inline constexpr ChoiceName<CollectiveChoice> kCollectiveChoices[] = {
    {CollectiveChoice::kAuto, "auto"},
    {CollectiveChoice::kMpi, "mpi"},
    {CollectiveChoice::kNccl, "nccl"}};
inline constexpr ChoiceName<VariableUpdate> kVariableUpdates[] = {
    {VariableUpdate::kAllreduce, "allreduce"},
    {VariableUpdate::kParameterServer, "parameter_server"}};
inline constexpr ChoiceName<AllreduceAlg> kAllreduceAlgs[] = {
    {AllreduceAlg::kRing, "ring"}, {AllreduceAlg::kHierarchical, "hierarchical"}};
inline constexpr ChoiceName<GradientCompression> kGradientCompressions[] = {
    {GradientCompression::kNone, "none"}, {GradientCompression::kTwoBit, "2bit"}};

inline constexpr ChoiceName<LstmConfig> kLstmConfigs[] = {{LstmConfig::kSmall, "small"},
                                                          {LstmConfig::kMedium, "medium"}};

constexpr std::span<const ChoiceName<DataName>> Choices(DataName) { return kDataNames; }
constexpr std::span<const ChoiceName<LstmConfig>> Choices(LstmConfig) { return kLstmConfigs; }
constexpr std::span<const ChoiceName<DataFormat>> Choices(DataFormat) { return kDataFormats; }
constexpr std::span<const ChoiceName<CollectiveChoice>> Choices(CollectiveChoice) {
  return kCollectiveChoices;
}
constexpr std::span<const ChoiceName<VariableUpdate>> Choices(VariableUpdate) {
  return kVariableUpdates;
}
constexpr std::span<const ChoiceName<AllreduceAlg>> Choices(AllreduceAlg) { return kAllreduceAlgs; }
constexpr std::span<const ChoiceName<GradientCompression>> Choices(GradientCompression) {
  return kGradientCompressions;
}

template <typename E>
concept Choice = requires(E e) {
  Choices(e);
};

// The flag spelling of `value`: Name(DataName::kFashionMnist) == "fashion-mnist".
template <Choice E>
constexpr std::string_view Name(E value) {
  for (const ChoiceName<E>& c : Choices(E{})) {
    if (c.value == value) return c.name;
  }
  return "?";  // not reached: every enumerator has a row (flags_test walks them)
}

// "{fashion-mnist,synthetic,imagenet}": the valid spellings, as --help and errors show them.
template <Choice E>
std::string KnownNames() {
  std::string out = "{";
  for (const ChoiceName<E>& c : Choices(E{})) {
    if (out.size() > 1) out += ",";
    out += c.name;
  }
  return out + "}";
}

// The value spelt `text`, or InvalidArgument `<flag>: <text> not in {<known values>}`.
template <Choice E>
Result<E> ParseChoice(std::string_view flag, std::string_view text) {
  for (const ChoiceName<E>& c : Choices(E{})) {
    if (c.name == text) return c.value;
  }
  return Status::InvalidArgument(std::string(flag) + ": " + std::string(text) + " not in " +
                                 KnownNames<E>());
}

}  // namespace dljob::trainer
