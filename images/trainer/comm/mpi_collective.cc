#include "images/trainer/comm/mpi_collective.h"

#include <algorithm>
#include <climits>
#include <string>

namespace dljob::trainer {

Status MpiStatus(const char* operation, int mpi_error) {
  if (mpi_error == MPI_SUCCESS) return Status::Ok();
  char text[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  MPI_Error_string(mpi_error, text, &length);
  return Status::Unavailable(std::string(operation) + ": " + std::string(text, length));
}

Result<std::unique_ptr<MpiCollective>> MpiCollective::Create(MPI_Comm comm) {
  MPI_Comm dup = MPI_COMM_NULL;
  if (Status s = MpiStatus("MPI_Comm_dup", MPI_Comm_dup(comm, &dup)); !s.ok()) return s;
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(dup, &rank);
  MPI_Comm_size(dup, &size);
  return std::unique_ptr<MpiCollective>(new MpiCollective(dup, rank, size));
}

MpiCollective::~MpiCollective() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

Status MpiCollective::AllreduceSum(float* data, size_t count) {
  while (count > 0) {
    int chunk = static_cast<int>(std::min<size_t>(count, INT_MAX));
    int rc = MPI_Allreduce(MPI_IN_PLACE, data, chunk, MPI_FLOAT, MPI_SUM, comm_);
    if (rc != MPI_SUCCESS) return MpiStatus("MPI_Allreduce", rc);
    data += chunk;
    count -= static_cast<size_t>(chunk);
  }
  return Status::Ok();
}

Status MpiCollective::Broadcast(float* data, size_t count, int root) {
  if (root < 0 || root >= size_) {
    return Status::InvalidArgument("broadcast: root " + std::to_string(root) + " is not a rank of " +
                                   std::to_string(size_));
  }
  while (count > 0) {
    int chunk = static_cast<int>(std::min<size_t>(count, INT_MAX));
    int rc = MPI_Bcast(data, chunk, MPI_FLOAT, root, comm_);
    if (rc != MPI_SUCCESS) return MpiStatus("MPI_Bcast", rc);
    data += chunk;
    count -= static_cast<size_t>(chunk);
  }
  return Status::Ok();
}

Status MpiCollective::Barrier() { return MpiStatus("MPI_Barrier", MPI_Barrier(comm_)); }

}  // namespace dljob::trainer
