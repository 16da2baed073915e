#include "images/trainer/comm/gradient_overlap.h"

#include <exception>
#include <string>
#include <utility>

#include <torch/torch.h>

namespace dljob::trainer {

Result<std::unique_ptr<GradientOverlap>> GradientOverlap::Create(std::vector<torch::Tensor> params,
                                                                 FusedAllreducer& fusion,
                                                                 Timeline* timeline) {
  for (size_t i = 0; i < params.size(); ++i) {
    const torch::Tensor& p = params[i];
    if (!p.defined() || !p.device().is_cpu() || p.scalar_type() != torch::kFloat32 ||
        !p.requires_grad()) {
      return Status::InvalidArgument("gradient overlap: parameter " + std::to_string(i) +
                                     " is not a float32 CPU tensor that requires a gradient");
    }
  }
  return std::unique_ptr<GradientOverlap>(new GradientOverlap(std::move(params), fusion, timeline));
}

GradientOverlap::GradientOverlap(std::vector<torch::Tensor> params, FusedAllreducer& fusion,
                                 Timeline* timeline)
    : params_(std::move(params)), fusion_(fusion), timeline_(timeline) {
  const size_t n = params_.size();
  staged_.reserve(n);
  spans_.reserve(n);
  counts_.reserve(n);
  for (const torch::Tensor& p : params_) {
    staged_.push_back(torch::zeros(p.sizes(), torch::kFloat32));
    spans_.push_back({staged_.back().data_ptr<float>(), static_cast<size_t>(p.numel())});
    counts_.push_back(static_cast<size_t>(p.numel()));
  }
  plan_ = fusion_.Plan(counts_);
  bucket_of_.assign(n, 0);
  for (size_t b = 0; b < plan_.size(); ++b) {
    for (size_t i = plan_[b].first; i < plan_[b].last; ++i) bucket_of_[i] = b;
  }
  held_.resize(n);
  seen_.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    hook_handles_.push_back(
        params_[i].register_hook([this, i](torch::Tensor grad) { OnGradient(i, grad); }));
  }
  thread_ = std::thread([this] { CommLoop(); });
}

GradientOverlap::~GradientOverlap() {
  for (size_t i = 0; i < params_.size(); ++i) params_[i].remove_hook(hook_handles_[i]);
  {
    MutexLock lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

Status GradientOverlap::BeginStep(int64_t step) {
  MutexLock lock(mutex_);
  if (!error_.ok()) return error_;
  if (armed_) return Status::FailedPrecondition("gradient overlap: step already in progress");
  // The caller owns the FusedAllreducer until we arm: make sure its plan is ours.
  fusion_.Plan(counts_);
  armed_ = true;
  backward_done_ = false;
  step_ = step;
  next_bucket_ = 0;
  seen_.assign(seen_.size(), 0);
  wake_.notify_all();
  return Status::Ok();
}

void GradientOverlap::OnGradient(size_t index, const torch::Tensor& grad) {
  MutexLock lock(mutex_);
  if (!armed_ || backward_done_ || !grad.defined()) return;
  if (seen_[index]) {
    if (error_.ok()) {
      error_ = Status::FailedPrecondition(
          "gradient overlap: parameter " + std::to_string(index) +
          " got a second gradient in one step (one backward per step is supported)");
    }
    return;
  }
  seen_[index] = 1;
  held_[index] = grad;
  if (bucket_of_[index] == next_bucket_) wake_.notify_all();
}

bool GradientOverlap::BucketReady(size_t bucket) const {
  for (size_t i = plan_[bucket].first; i < plan_[bucket].last; ++i) {
    if (!seen_[i]) return false;
  }
  return true;
}

void GradientOverlap::CommLoop() {
  torch::NoGradGuard no_grad;  // grad mode is per thread
  // Held throughout, except while a bucket is fused and reduced (the waits release it).
  mutex_.Lock();
  while (true) {
    wake_.wait(mutex_, [this]() REQUIRES(mutex_) {
      return stop_ || (armed_ && next_bucket_ < plan_.size());
    });
    if (stop_) break;
    const size_t b = next_bucket_;
    const int64_t step = step_;
    const Timeline::Clock::time_point waiting = Timeline::Clock::now();
    wake_.wait(mutex_,
               [this, b]() REQUIRES(mutex_) { return stop_ || backward_done_ || BucketReady(b); });
    if (stop_) break;
    if (timeline_ != nullptr) {
      timeline_->Record("NEGOTIATE", "comm", waiting, Timeline::Clock::now(), kCommThread, step,
                        static_cast<int64_t>(b));
    }
    const Bucket& bucket = plan_[b];
    std::vector<torch::Tensor> grads;
    grads.reserve(bucket.last - bucket.first);
    for (size_t i = bucket.first; i < bucket.last; ++i) grads.push_back(std::move(held_[i]));
    mutex_.Unlock();
    Status status;
    try {
      {
        TimelineSpan fuse(timeline_, "FUSE", "comm", kCommThread, step, static_cast<int64_t>(b));
        for (size_t i = bucket.first; i < bucket.last; ++i) {
          torch::Tensor& grad = grads[i - bucket.first];
          if (grad.defined()) {
            staged_[i].copy_(grad);
          } else {
            staged_[i].zero_();  // no gradient on this rank: contribute zeros
          }
        }
        grads.clear();  // the incoming gradients are not needed any more
      }
      TimelineSpan reduce(timeline_, "ALLREDUCE", "comm", kCommThread, step,
                          static_cast<int64_t>(b));
      status = fusion_.ReduceBucket(b, spans_);
    } catch (const std::exception& e) {
      status = Status::Internal(e.what());
    }
    mutex_.Lock();
    if (!status.ok()) {
      if (error_.ok()) {
        error_ = status.WithContext("gradient bucket " + std::to_string(b + 1) + " of " +
                                    std::to_string(plan_.size()));
      }
      next_bucket_ = plan_.size();  // nothing more this step: the Collective is unusable
    } else {
      ++next_bucket_;
    }
    if (next_bucket_ >= plan_.size()) done_.notify_all();
  }
  mutex_.Unlock();
}

Status GradientOverlap::Finish() {
  int64_t step = 0;
  {
    MutexLock lock(mutex_);
    if (!armed_) {
      return error_.ok() ? Status::FailedPrecondition("gradient overlap: Finish without BeginStep")
                         : error_;
    }
    backward_done_ = true;
    wake_.notify_all();
    done_.wait(mutex_, [this]() REQUIRES(mutex_) { return next_bucket_ >= plan_.size(); });
    armed_ = false;
    step = step_;
    for (torch::Tensor& h : held_) h = torch::Tensor();
    if (!error_.ok()) return error_;
  }
  torch::NoGradGuard no_grad;
  for (size_t b = 0; b < plan_.size(); ++b) {
    TimelineSpan unfuse(timeline_, "UNFUSE", "comm", kMainThread, step, static_cast<int64_t>(b));
    for (size_t i = plan_[b].first; i < plan_[b].last; ++i) {
      torch::Tensor& grad = params_[i].mutable_grad();
      if (grad.defined()) {
        grad.copy_(staged_[i]);
      } else {
        grad = staged_[i].clone();
      }
    }
  }
  return Status::Ok();
}

}  // namespace dljob::trainer
