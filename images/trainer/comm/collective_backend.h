// CollectiveBackend: one way the ranks of a job can talk (MPI, NCCL), with an Enabled() check
// saying whether it can run on this machine now; CollectiveRegistry: the backends a binary has,
// in the order --collective=auto tries them (Horovod orders its ops the same way: NCCL first for
// GPU tensors, MPI as the catch-all; tests register fakes or a loopback).
//
// Which backends exist is decided at build time inside the backend files
// (comm/builtin_backends.h); nothing above them knows whether NCCL was compiled in. The choice
// is made before MPI starts (so a refused --collective=nccl exits like any usage error), and
// Create runs after.
//
// Ownership: the registry owns its backends; Choose returns a pointer into it. Not thread-safe:
// choose and create from the main thread.
#pragma once

#include <memory>
#include <vector>

#include <mpi.h>

#include "base/status.h"
#include "images/trainer/choices.h"
#include "images/trainer/comm/collective.h"

namespace dljob::trainer {

class CollectiveBackend {
 public:
  virtual ~CollectiveBackend() = default;

  // The --collective value that names it (never kAuto).
  virtual CollectiveChoice kind() const = 0;
  // OK when it can run here now; otherwise FailedPrecondition naming --collective=<name> and
  // saying why. May ask the hardware (NCCL asks the CUDA runtime) and keep the answer for Create.
  virtual Status Enabled() = 0;
  // This rank's Collective over the ranks of `world`; every rank calls it. `local_rank` is this
  // process's rank on its node (it picks the device). REQUIRES: Enabled() returned OK; MPI is
  // initialised and stays so while the result lives.
  virtual Result<std::unique_ptr<Collective>> Create(MPI_Comm world, int local_rank) = 0;
};
using CollectiveBackendPtr = std::unique_ptr<CollectiveBackend>;

class CollectiveRegistry {
 public:
  // Appends `backend`; kAuto tries the backends in the order they were added.
  void Add(CollectiveBackendPtr&& backend);

  // The backend for `choice`. kAuto: the first backend whose Enabled() is OK. A named backend:
  // that one if its Enabled() is OK, else its reason. Enabled() is asked of the candidates only,
  // in order, stopping at the first that is OK: --collective=mpi never touches the CUDA runtime.
  // Errors: FailedPrecondition (no such backend in this binary, or it cannot run here).
  Result<CollectiveBackend*> Choose(CollectiveChoice choice);

  // The registered kinds, in order.
  std::vector<CollectiveChoice> kinds() const;

 private:
  std::vector<CollectiveBackendPtr> backends_;
};

}  // namespace dljob::trainer
