#include "images/trainer/training_state.h"

#include <sstream>

#include <torch/torch.h>

#include "base/random.h"

namespace dljob::trainer {
namespace {

std::string StateKey(const torch::Tensor& param) {
  return c10::guts::to_string(param.unsafeGetTensorImpl());  // the key SGD itself uses
}

bool HasMomentum(const torch::optim::SGD& optimizer) {
  for (const auto& group : optimizer.param_groups()) {
    if (static_cast<const torch::optim::SGDOptions&>(group.options()).momentum() != 0) return true;
  }
  return false;
}

// A handle sharing the buffer's storage (SGD updates it in place).
torch::Tensor MomentumBuffer(torch::optim::SGD& optimizer, const torch::Tensor& param) {
  auto& state = static_cast<torch::optim::SGDParamState&>(*optimizer.state().at(StateKey(param)));
  return state.momentum_buffer();
}

// Everything a checkpoint holds, as live tensors, in checkpoint order.
std::vector<std::pair<std::string, torch::Tensor>> StateTensors(Model& model,
                                                                torch::optim::SGD* optimizer,
                                                                bool with_momentum) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& p : model.named_parameters()) out.emplace_back("param/" + p.key(), p.value());
  for (const auto& b : model.named_buffers()) out.emplace_back("buffer/" + b.key(), b.value());
  if (with_momentum) {
    for (const auto& p : model.named_parameters()) {
      out.emplace_back("momentum/" + p.key(),
                       optimizer ? MomentumBuffer(*optimizer, p.value()) : p.value());
    }
  }
  return out;
}

std::string Shape(const torch::Tensor& t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
}

Status BroadcastAnyDtype(Collective& collective, torch::Tensor tensor) {
  torch::NoGradGuard no_grad;
  if (tensor.scalar_type() == torch::kFloat32) return collective.Broadcast(tensor, 0);
  torch::Tensor staged = tensor.to(torch::kFloat32);
  Status status = collective.Broadcast(staged, 0);
  if (status.ok()) tensor.copy_(staged);
  return status;
}

}  // namespace

void EnsureMomentumBuffers(torch::optim::SGD& optimizer) {
  if (!HasMomentum(optimizer)) return;
  torch::NoGradGuard no_grad;
  for (const auto& group : optimizer.param_groups()) {
    for (const torch::Tensor& p : group.params()) {
      auto& slot = optimizer.state()[StateKey(p)];
      if (slot) continue;
      auto state = std::make_unique<torch::optim::SGDParamState>();
      state->momentum_buffer(torch::zeros_like(p));
      slot = std::move(state);
    }
  }
}

Checkpoint CaptureCheckpoint(Model& model, torch::optim::SGD& optimizer,
                             const CheckpointMeta& meta) {
  torch::NoGradGuard no_grad;
  Checkpoint checkpoint{meta, {}};
  for (auto& [name, tensor] : StateTensors(model, &optimizer, HasMomentum(optimizer))) {
    checkpoint.tensors.emplace_back(name, tensor.detach().to(torch::kCPU).clone());
  }
  return checkpoint;
}

Status CheckMatchesModel(const Checkpoint& checkpoint, Model& model, bool with_momentum) {
  const auto expected = StateTensors(model, nullptr, with_momentum);
  const auto& got = checkpoint.tensors;
  for (size_t i = 0; i < expected.size() && i < got.size(); ++i) {
    if (expected[i].first != got[i].first) {
      return Status::FailedPrecondition("the checkpoint holds \"" + got[i].first +
                                        "\" where the "
                                        "model has \"" +
                                        expected[i].first + "\"");
    }
    if (!expected[i].second.sizes().equals(got[i].second.sizes())) {
      return Status::FailedPrecondition("the checkpoint's \"" + got[i].first + "\" has shape " +
                                        Shape(got[i].second) + ", the model's has " +
                                        Shape(expected[i].second));
    }
  }
  if (expected.size() != got.size()) {
    return Status::FailedPrecondition("the checkpoint holds " + std::to_string(got.size()) +
                                      " tensors, the model and optimizer " +
                                      std::to_string(expected.size()));
  }
  return Status::Ok();
}

void RestoreCheckpoint(const Checkpoint& checkpoint, Model& model, torch::optim::SGD& optimizer) {
  torch::NoGradGuard no_grad;
  auto live = StateTensors(model, &optimizer, HasMomentum(optimizer));
  for (size_t i = 0; i < live.size(); ++i) live[i].second.copy_(checkpoint.tensors[i].second);
}

Status BroadcastTrainingState(Collective& collective, Model& model, torch::optim::SGD& optimizer) {
  for (auto& [name, tensor] : StateTensors(model, &optimizer, HasMomentum(optimizer))) {
    if (Status s = BroadcastAnyDtype(collective, tensor); !s.ok()) return s.WithContext(name);
  }
  return Status::Ok();
}

Status BroadcastInt64s(Collective& collective, std::vector<int64_t>& values) {
  // Two 24-bit halves each: both are exact in a float32.
  std::vector<float> halves;
  for (int64_t v : values) {
    halves.push_back(static_cast<float>(v >> 24));
    halves.push_back(static_cast<float>(v & 0xFFFFFF));
  }
  if (Status s = collective.Broadcast(halves.data(), halves.size(), 0); !s.ok()) return s;
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] =
        (static_cast<int64_t>(halves[2 * i]) << 24) | static_cast<int64_t>(halves[2 * i + 1]);
  }
  return Status::Ok();
}

Result<int64_t> BroadcastStep(Collective& collective, int64_t step) {
  std::vector<int64_t> values = {step};
  if (Status s = BroadcastInt64s(collective, values); !s.ok()) return s.WithContext("resume step");
  return values[0];
}

uint64_t StepSeed(uint64_t seed, int rank, int64_t step) {
  // SplitMix64 spreads nearby inputs (consecutive steps, neighbouring ranks) apart.
  return SplitMix64(seed ^ (static_cast<uint64_t>(rank) << 40) ^ static_cast<uint64_t>(step));
}

}  // namespace dljob::trainer
