// GradientOverlap: gradient averaging that overlaps communication with backward (Horovod's and
// DDP's scheme, without a negotiation round).
//
// Construction registers a hook on every parameter (torch::Tensor::register_hook) and starts one
// communication thread. Per step the Trainer calls BeginStep(), runs loss.backward() and then
// Finish():
//   - a hook fires when backward has computed a parameter's gradient, before AccumulateGrad adds
//     it to param.grad(); it only keeps a reference to that incoming gradient and marks the
//     parameter ready (cheap, so backward is not slowed);
//   - the communication thread reduces the FusedAllreducer's buckets strictly in plan order
//     (bucket 0, 1, ...), each as soon as all its parameters are ready: it copies the held
//     gradients into persistent reduction buffers (FUSE) and reduces them over all ranks
//     (FusedAllreducer::ReduceBucket: ALLREDUCE; a mean or, with FusionOptions::average off as
//     the Trainer runs it, a sum of gradients backward already divided by the world size). Every
//     rank builds the same plan from the same parameter list, so every rank issues the same
//     collectives in the same order, whatever order its hooks fire in;
//   - Finish() tells the thread that backward is over, waits for the remaining buckets and copies
//     the reduced gradients into param.grad() (UNFUSE). A parameter that got no gradient this step
//     is reduced as zeros (so every rank still makes the same calls) and its param.grad() is set to
//     the average of the other ranks' gradients (zeros when no rank had one).
//
// Parameters are given in reduction order: the Trainer passes them in reverse registration order,
// roughly the order backward produces them, so early buckets can start while backward goes on.
//
// REQUIRES: parameters are float32 CPU tensors; gradients are zeroed before each backward (as
// Optimizer::zero_grad does); one backward per BeginStep (a second gradient for the same
// parameter in one step is an error from Finish). The averaged gradient replaces param.grad().
// Hooks that fire outside BeginStep..Finish (a backward the Trainer did not start) are ignored.
//
// Threads and the Collective: between BeginStep() and the return of Finish() the Collective (and
// the FusedAllreducer) belong to the communication thread; the caller must not use them. MPI must
// therefore be initialised with at least MPI_THREAD_SERIALIZED (main.cc asks for
// MPI_THREAD_MULTIPLE); the mutex hand-over orders the two threads' MPI calls.
//
// Errors: a failed reduction on the communication thread is kept and returned by Finish() (and by
// every later BeginStep/Finish: the Collective is unusable). The destructor stops the thread
// after the bucket it is reducing, if any, joins it and removes the hooks; a destructor running
// while other ranks never join that bucket blocks like any collective (the stall detector covers
// it).
//
// Ownership: borrows the FusedAllreducer (and its Collective) and an optional Timeline; they must
// outlive this object. The parameters are shared handles (torch::Tensor). BeginStep and Finish
// are called from one thread (the training loop); the hooks may run on any thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <torch/types.h>

#include "base/mutex.h"
#include "base/status.h"
#include "images/trainer/comm/fused_allreduce.h"
#include "images/trainer/comm/timeline.h"

namespace dljob::trainer {

class GradientOverlap {
 public:
  // Errors: a parameter that is not a float32 CPU tensor (InvalidArgument naming its index).
  static Result<std::unique_ptr<GradientOverlap>> Create(std::vector<torch::Tensor> params,
                                                         FusedAllreducer& fusion,
                                                         Timeline* timeline = nullptr);
  ~GradientOverlap();
  GradientOverlap(const GradientOverlap&) = delete;
  GradientOverlap& operator=(const GradientOverlap&) = delete;

  // Arms the hooks for the backward of `step` (a label for the timeline). Errors: a failure of an
  // earlier step.
  Status BeginStep(int64_t step);
  // REQUIRES: BeginStep was called and backward has returned. Waits for every bucket; on success
  // every parameter's grad() holds the mean over all ranks.
  Status Finish();

  size_t buckets() const { return plan_.size(); }

 private:
  GradientOverlap(std::vector<torch::Tensor> params, FusedAllreducer& fusion, Timeline* timeline);
  void OnGradient(size_t index, const torch::Tensor& grad);
  void CommLoop();
  bool BucketReady(size_t bucket) const REQUIRES(mutex_);

  std::vector<torch::Tensor> params_;
  FusedAllreducer& fusion_;
  Timeline* timeline_;
  std::vector<torch::Tensor> staged_;  // persistent reduction buffers, one per parameter
  std::vector<FloatSpan> spans_;       // over staged_
  std::vector<Bucket> plan_;
  std::vector<size_t> bucket_of_;  // parameter -> bucket
  std::vector<unsigned> hook_handles_;

  Mutex mutex_;
  std::condition_variable_any wake_;               // to the communication thread
  std::condition_variable_any done_;               // to Finish
  bool armed_ GUARDED_BY(mutex_) = false;          // a step is in progress
  bool backward_done_ GUARDED_BY(mutex_) = false;  // Finish was called
  bool stop_ GUARDED_BY(mutex_) = false;
  int64_t step_ GUARDED_BY(mutex_) = 0;
  size_t next_bucket_ GUARDED_BY(mutex_) = 0;           // buckets before it are reduced
  std::vector<torch::Tensor> held_ GUARDED_BY(mutex_);  // this step's incoming gradients
  std::vector<char> seen_ GUARDED_BY(mutex_);           // a gradient arrived this step
  std::vector<size_t> counts_;                          // elements per parameter
  Status error_ GUARDED_BY(mutex_);                     // sticky
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace dljob::trainer
