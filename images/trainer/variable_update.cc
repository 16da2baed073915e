#include "images/trainer/variable_update.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "images/trainer/comm/gradient_compression.h"
#include "images/trainer/comm/gradient_overlap.h"

namespace dljob::trainer {
namespace {

// The trainable parameters in reduction order (reverse registration order: roughly the order
// backward finishes them, as Horovod and DDP buckets do); the same on every rank.
std::vector<torch::Tensor> ReductionOrder(Model& model) {
  const std::vector<torch::Tensor> params = model.parameters();
  std::vector<torch::Tensor> order;
  order.reserve(params.size());
  for (auto it = params.rbegin(); it != params.rend(); ++it) {
    if (it->requires_grad()) order.push_back(*it);
  }
  return order;
}

int64_t ValueCount(const std::vector<torch::Tensor>& params) {
  int64_t total = 0;
  for (const torch::Tensor& p : params) total += p.numel();
  return total;
}

// 1234567 -> "1,234,567".
std::string WithThousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

// The backward pass already divided the gradients by the world size (loss_scale()).
FusionOptions SumOnly(FusionOptions fusion) {
  fusion.average = false;
  return fusion;
}

// Lays each parameter's gradient end to end in `flat` (param order); a parameter with no gradient
// on this rank contributes zeros.
void PackGradients(const std::vector<torch::Tensor>& params, torch::Tensor& flat) {
  int64_t offset = 0;
  for (const torch::Tensor& p : params) {
    torch::Tensor slot = flat.slice(0, offset, offset + p.numel()).view(p.sizes());
    if (p.grad().defined()) {
      slot.copy_(p.grad());
    } else {
      slot.zero_();
    }
    offset += p.numel();
  }
}

// The gradients summed over `ranks` ranks, laid end to end in `flat` (param order), become each
// parameter's mean gradient. Scales `flat` in place.
void SetMeanGradients(torch::Tensor& flat, int ranks, const std::vector<torch::Tensor>& params) {
  flat.mul_(1.0f / static_cast<float>(ranks));
  int64_t offset = 0;
  for (const torch::Tensor& p : params) {
    torch::Tensor mean = flat.slice(0, offset, offset + p.numel()).view(p.sizes());
    torch::Tensor& grad = p.mutable_grad();
    if (grad.defined()) {
      grad.copy_(mean);
    } else {
      grad = mean.clone().to(p.device());
    }
    offset += p.numel();
  }
}

class AllreduceUpdater : public VariableUpdater {
 public:
  AllreduceUpdater(const VariableUpdateOptions& options, Model& model, Collective& collective)
      : model_(model),
        collective_(collective),
        timeline_(options.timeline),
        fusion_(collective, SumOnly(options.fusion)),
        fp16_(options.fusion.fp16),
        values_(ValueCount(ReductionOrder(model))) {}

  double loss_scale() const override { return 1.0 / collective_.size(); }
  GradientTraffic traffic() const override {
    return {fp16_ ? "fp16" : "fp32", values_ * (fp16_ ? 2 : 4), values_ * 4};
  }

  // Sets up the overlap when it applies: more than one rank, float32 CPU parameters.
  Status Prepare(bool overlap_backward) {
    if (!overlap_backward || collective_.size() == 1) return Status::Ok();
    const std::vector<torch::Tensor> order = ReductionOrder(model_);
    for (const torch::Tensor& p : order) {
      // GPU or non-float32 parameters: gradients are averaged after backward.
      if (!p.device().is_cpu() || p.scalar_type() != torch::kFloat32) return Status::Ok();
    }
    Result<std::unique_ptr<GradientOverlap>> overlap =
        GradientOverlap::Create(order, fusion_, timeline_);
    if (!overlap.ok()) return overlap.status();
    overlap_ = std::move(*overlap);
    return Status::Ok();
  }

  Status BeforeBackward(int64_t step) override {
    if (!overlap_) return Status::Ok();
    return overlap_->BeginStep(step).WithContext("gradients");
  }

  Status Apply(int64_t step, torch::optim::Optimizer& optimizer) override {
    if (Status s = AllreduceGradients(step); !s.ok()) return s;
    TimelineSpan span(timeline_, "OPTIMIZER", "compute", kMainThread, step);
    optimizer.step();
    return Status::Ok();
  }

 private:
  // Gradients that are not contiguous float32 CPU tensors (a GPU run) take the per-tensor
  // staging path. With the overlap, the buckets were started during backward and Finish collects
  // them.
  Status AllreduceGradients(int64_t step) {
    if (overlap_) return overlap_->Finish().WithContext("gradients");
    const std::vector<torch::Tensor> params = model_.parameters();
    std::vector<torch::Tensor> grads;
    grads.reserve(params.size());
    bool fusible = true;
    for (auto it = params.rbegin(); it != params.rend(); ++it) {
      torch::Tensor grad = it->grad();
      if (!grad.defined()) continue;
      fusible = fusible && grad.device().is_cpu() && grad.is_contiguous() &&
                grad.scalar_type() == torch::kFloat32;
      grads.push_back(std::move(grad));
    }
    if (fusible) return ReduceFused(step, grads);
    TimelineSpan span(timeline_, "ALLREDUCE", "comm", kMainThread, step);
    for (torch::Tensor& grad : grads) {
      if (Status s = collective_.AllreduceSum(grad); !s.ok()) return s.WithContext("gradients");
    }
    return Status::Ok();
  }

  Status ReduceFused(int64_t step, std::vector<torch::Tensor>& grads) {
    std::vector<FloatSpan> spans;
    std::vector<size_t> counts;
    spans.reserve(grads.size());
    for (torch::Tensor& g : grads) {
      spans.push_back({g.data_ptr<float>(), static_cast<size_t>(g.numel())});
      counts.push_back(spans.back().count);
    }
    // Bucket by bucket, as Allreduce does, so that the timeline can show each one.
    const size_t buckets = fusion_.Plan(counts).size();
    for (size_t b = 0; b < buckets; ++b) {
      TimelineSpan span(timeline_, "ALLREDUCE", "comm", kMainThread, step, static_cast<int64_t>(b));
      if (Status s = fusion_.ReduceBucket(b, spans); !s.ok()) return s.WithContext("gradients");
    }
    return Status::Ok();
  }

  Model& model_;
  Collective& collective_;
  Timeline* timeline_;
  FusedAllreducer fusion_;
  bool fp16_;
  int64_t values_;                            // trainable parameter values
  std::unique_ptr<GradientOverlap> overlap_;  // last: it borrows fusion_
};

class ParameterServerUpdater : public VariableUpdater {
 public:
  ParameterServerUpdater(const VariableUpdateOptions& options, Model& model, Collective& collective)
      : model_(model), collective_(collective), timeline_(options.timeline) {
    int64_t total = 0;
    const bool per_tensor = options.fusion.threshold_bytes == 0;
    for (const torch::Tensor& p : ReductionOrder(model_)) {
      if (per_tensor && p.numel() > 0) chunks_.emplace_back(total, p.numel());
      total += p.numel();
    }
    if (!per_tensor) {
      const int64_t segment =
          options.fusion.segment_bytes >= sizeof(float)
              ? static_cast<int64_t>(options.fusion.segment_bytes / sizeof(float))
              : std::max<int64_t>(total, 1);
      for (int64_t offset = 0; offset < total; offset += segment) {
        chunks_.emplace_back(offset, std::min(segment, total - offset));
      }
    }
    flat_ = torch::zeros({total}, torch::kFloat32);
  }

  Status BeforeBackward(int64_t) override { return Status::Ok(); }
  GradientTraffic traffic() const override {
    return {"fp32", flat_.numel() * 4, flat_.numel() * 4};
  }

  // Gradients to rank 0, its optimizer step, parameters back from rank 0.
  Status Apply(int64_t step, torch::optim::Optimizer& optimizer) override {
    torch::NoGradGuard no_grad;
    const std::vector<torch::Tensor> params = ReductionOrder(model_);
    const bool root = collective_.rank() == 0;
    Fuse(step, params);
    {
      TimelineSpan span(timeline_, "REDUCE", "comm", kMainThread, step);
      Status s = SendChunks([this](float* data, size_t count) {
        return collective_.ReduceSum(data, count, /*root=*/0);
      });
      if (!s.ok()) return s.WithContext("gradients to rank 0");
    }
    if (root) {
      UnfuseMean(step, params);
      TimelineSpan span(timeline_, "OPTIMIZER", "compute", kMainThread, step);
      optimizer.step();
    }
    TimelineSpan span(timeline_, "BROADCAST", "comm", kMainThread, step);
    if (root) {
      int64_t offset = 0;
      for (const torch::Tensor& p : params) {
        flat_.slice(0, offset, offset + p.numel()).view(p.sizes()).copy_(p);
        offset += p.numel();
      }
    }
    Status s = SendChunks([this](float* data, size_t count) {
      return collective_.Broadcast(data, count, /*root=*/0);
    });
    if (!s.ok()) return s.WithContext("parameters from rank 0");
    if (!root) {
      int64_t offset = 0;
      for (const torch::Tensor& p : params) {
        torch::Tensor value = flat_.slice(0, offset, offset + p.numel()).view(p.sizes());
        p.copy_(value);
        offset += p.numel();
      }
    }
    return Status::Ok();
  }

 private:
  // Packs this rank's gradients into flat_.
  void Fuse(int64_t step, const std::vector<torch::Tensor>& params) {
    TimelineSpan span(timeline_, "FUSE", "comm", kMainThread, step);
    PackGradients(params, flat_);  // no gradient on this rank: contributes nothing to the sum
  }

  // Rank 0: the reduced sums in flat_ become the mean gradients.
  void UnfuseMean(int64_t step, const std::vector<torch::Tensor>& params) {
    TimelineSpan span(timeline_, "UNFUSE", "comm", kMainThread, step);
    SetMeanGradients(flat_, collective_.size(), params);
  }

  // Sends flat_ in the pieces of chunks_ with `op` (ReduceSum or Broadcast to 0).
  template <typename Op>
  Status SendChunks(Op op) {
    float* base = flat_.data_ptr<float>();
    for (const auto& [offset, count] : chunks_) {
      if (Status s = op(base + offset, static_cast<size_t>(count)); !s.ok()) return s;
    }
    return Status::Ok();
  }

  Model& model_;
  Collective& collective_;
  Timeline* timeline_;
  torch::Tensor flat_;                               // packed gradients, then parameters
  std::vector<std::pair<int64_t, int64_t>> chunks_;  // (offset, count) into flat_
};

// MXNet KVStore's 2-bit compression as an allreduce (variable_update.h): quantise with the
// residual, allgather the packed words, sum every rank's decoded values, average, step.
class TwoBitUpdater : public VariableUpdater {
 public:
  TwoBitUpdater(const VariableUpdateOptions& options, Model& model, Collective& collective)
      : model_(model),
        collective_(collective),
        timeline_(options.timeline),
        threshold_(options.compression_threshold) {
    const int64_t values = ValueCount(ReductionOrder(model_));
    flat_ = torch::zeros({values}, torch::kFloat32);
    residual_.assign(static_cast<size_t>(values), 0.0f);
    packed_.assign(PackedWords(static_cast<size_t>(values)), 0);
    gathered_.assign(packed_.size() * static_cast<size_t>(collective_.size()), 0);
  }

  // Each rank quantises its own mean gradient: the threshold means the same at any world size.
  double loss_scale() const override { return 1.0; }
  GradientTraffic traffic() const override {
    return {"2bit", static_cast<int64_t>(packed_.size() * sizeof(uint32_t)), flat_.numel() * 4};
  }
  Status BeforeBackward(int64_t) override { return Status::Ok(); }

  Status Apply(int64_t step, torch::optim::Optimizer& optimizer) override {
    torch::NoGradGuard no_grad;
    const std::vector<torch::Tensor> params = ReductionOrder(model_);
    const size_t values = static_cast<size_t>(flat_.numel());
    float* flat = flat_.data_ptr<float>();
    {
      TimelineSpan span(timeline_, "FUSE", "comm", kMainThread, step);
      PackGradients(params, flat_);  // no gradient on this rank: only the residual is sent
    }
    {
      TimelineSpan span(timeline_, "QUANTIZE", "compute", kMainThread, step);
      QuantizeTwoBit(flat, residual_.data(), values, threshold_, packed_.data());
    }
    {
      TimelineSpan span(timeline_, "ALLGATHER", "comm", kMainThread, step);
      collective_.Annotate("2-bit gradients");
      Status s = collective_.AllgatherBytes(packed_.data(), packed_.size() * sizeof(uint32_t),
                                            gathered_.data());
      if (!s.ok()) return s.WithContext("2-bit gradients");
    }
    {
      TimelineSpan span(timeline_, "UNFUSE", "comm", kMainThread, step);
      SumPackedTwoBit(gathered_.data(), collective_.size(), values, threshold_, flat);
      SetMeanGradients(flat_, collective_.size(), params);
    }
    TimelineSpan span(timeline_, "OPTIMIZER", "compute", kMainThread, step);
    optimizer.step();
    return Status::Ok();
  }

 private:
  Model& model_;
  Collective& collective_;
  Timeline* timeline_;
  float threshold_;
  torch::Tensor flat_;              // this rank's gradients, then the mean of the decoded sums
  std::vector<float> residual_;     // error feedback, one per value of flat_
  std::vector<uint32_t> packed_;    // this rank's 2-bit codes
  std::vector<uint32_t> gathered_;  // every rank's codes, rank order
};

}  // namespace

std::string FormatGradientTraffic(const GradientTraffic& traffic) {
  std::string line = "gradient bytes/step: " + WithThousands(traffic.bytes_per_step) + " (" +
                     traffic.encoding + ")";
  if (traffic.encoding != "fp32") {
    line += " vs " + WithThousands(traffic.fp32_bytes_per_step) + " (fp32)";
  }
  return line;
}

Result<VariableUpdaterPtr> MakeVariableUpdater(const VariableUpdateOptions& options, Model& model,
                                               Collective& collective) {
  if (options.compression == GradientCompression::kTwoBit) {
    if (options.kind != VariableUpdate::kAllreduce) {
      return Status::InvalidArgument(
          "2-bit gradient compression is an allreduce update; the parameter server reduces "
          "float32 gradients");
    }
    if (!(options.compression_threshold > 0) || !std::isfinite(options.compression_threshold)) {
      return Status::InvalidArgument("compression threshold must be a positive number, got " +
                                     std::to_string(options.compression_threshold));
    }
    return VariableUpdaterPtr(std::make_unique<TwoBitUpdater>(options, model, collective));
  }
  if (options.kind == VariableUpdate::kParameterServer) {
    return VariableUpdaterPtr(std::make_unique<ParameterServerUpdater>(options, model, collective));
  }
  auto updater = std::make_unique<AllreduceUpdater>(options, model, collective);
  if (Status s = updater->Prepare(options.overlap_backward); !s.ok()) return s;
  return VariableUpdaterPtr(std::move(updater));
}

}  // namespace dljob::trainer
