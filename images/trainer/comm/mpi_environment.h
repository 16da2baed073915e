// MpiEnvironment: owns the process's MPI initialisation.
//
// Create exactly one, in main, before any MPI call; MPI is finalised when it is destroyed. It
// asks for MPI_THREAD_FUNNELED (only the main thread talks to MPI; LibTorch's intra-op threads
// never do), or MPI_THREAD_MULTIPLE when a second thread must talk to MPI too (the stall
// watchdog's heartbeats, comm/mpi_stall_watchdog.h; the gradient overlap's communication
// thread, comm/gradient_overlap.h, which needs only MPI_THREAD_SERIALIZED). A program started
// without mpirun runs as a single rank (MPI singleton init).
//
// Not copyable or movable. Not thread-safe: construct and destroy on the main thread.
#pragma once

#include <memory>

#include "base/status.h"

namespace dljob::trainer {

class MpiEnvironment {
 public:
  // Initialises MPI. Fails if MPI was already initialised or the thread level is unavailable.
  static Result<std::unique_ptr<MpiEnvironment>> Create(int* argc, char*** argv,
                                                        bool thread_multiple = false);
  ~MpiEnvironment();

  MpiEnvironment(const MpiEnvironment&) = delete;
  MpiEnvironment& operator=(const MpiEnvironment&) = delete;

  // This process's rank in MPI_COMM_WORLD, and the number of ranks.
  int world_rank() const { return world_rank_; }
  int world_size() const { return world_size_; }

 private:
  MpiEnvironment() = default;

  int world_rank_ = 0;
  int world_size_ = 1;
};

// Ends every rank of the job (MPI_Abort on the world communicator) with `exit_code`. For
// unexpected failures on one rank while others may be blocked in a collective, where returning
// from main would hang in MPI_Finalize. REQUIRES: MPI is initialised.
[[noreturn]] void AbortAllRanks(int exit_code);

// The rank this process will have, read from the launcher's environment before MPI is
// initialised (Open MPI's OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK); 0 when not launched by
// mpirun. Used to print flag errors once rather than once per rank.
int RankFromEnvironment();

// The rank among the processes on this node (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID); 0
// when unknown. Used to pick a GPU per rank.
int LocalRankFromEnvironment();

}  // namespace dljob::trainer
