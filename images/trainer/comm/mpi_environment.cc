#include "images/trainer/comm/mpi_environment.h"

#include <cstdlib>
#include <string>

#include <mpi.h>

namespace dljob::trainer {
namespace {

int IntFromEnv(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    char* end = nullptr;
    long parsed = std::strtol(value, &end, 10);
    if (*end == '\0' && parsed >= 0) return static_cast<int>(parsed);
  }
  return 0;
}

}  // namespace

Result<std::unique_ptr<MpiEnvironment>> MpiEnvironment::Create(int* argc, char*** argv,
                                                               bool thread_multiple) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return Status::FailedPrecondition("MPI is already initialised");
  const int wanted = thread_multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED;
  int provided = 0;
  if (MPI_Init_thread(argc, argv, wanted, &provided) != MPI_SUCCESS) {
    return Status::Unavailable("MPI_Init_thread failed");
  }
  std::unique_ptr<MpiEnvironment> env(new MpiEnvironment());
  if (provided < wanted) {
    // Appended piece by piece: GCC 12 inlines a long chain of `std::string&& + const char*` into
    // memcpy calls whose bounds it misjudges (-Warray-bounds / -Wstringop-overflow at -O2).
    std::string message = "MPI does not provide ";
    message += thread_multiple ? "MPI_THREAD_MULTIPLE" : "MPI_THREAD_FUNNELED";
    message += " (got level " + std::to_string(provided) + ")";
    if (thread_multiple) message += "; run with --stall_timeout=0 --overlap_backward=false";
    return Status::Unavailable(std::move(message));
  }
  // Errors on the world communicator come back as codes (turned into Status) rather than
  // aborting the job from inside MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &env->world_rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &env->world_size_);
  return env;
}

MpiEnvironment::~MpiEnvironment() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void AbortAllRanks(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

int RankFromEnvironment() { return IntFromEnv({"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}); }

int LocalRankFromEnvironment() {
  return IntFromEnv({"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"});
}

}  // namespace dljob::trainer
