#include "images/trainer/comm/mpi_collective.h"

#include <algorithm>
#include <climits>
#include <deque>
#include <string>

#include "images/trainer/comm/half.h"

namespace dljob::trainer {

Status MpiStatus(const char* operation, int mpi_error) {
  if (mpi_error == MPI_SUCCESS) return Status::Ok();
  char text[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  MPI_Error_string(mpi_error, text, &length);
  return Status::Unavailable(std::string(operation) + ": " + std::string(text, length));
}

namespace {

// The MPI_User_function of half_sum_: inout[i] = in[i] + inout[i], in float, rounded to half.
void AddHalvesOp(void* in, void* inout, int* len, MPI_Datatype* /*type*/) {
  AddHalves(static_cast<const uint16_t*>(in), static_cast<uint16_t*>(inout),
            static_cast<size_t>(*len));
}

}  // namespace

Status MpiCollective::CreateHalfSum() {
  if (Status s = MpiStatus("MPI_Type_contiguous", MPI_Type_contiguous(2, MPI_BYTE, &half_type_));
      !s.ok()) {
    return s;
  }
  if (Status s = MpiStatus("MPI_Type_commit", MPI_Type_commit(&half_type_)); !s.ok()) return s;
  return MpiStatus("MPI_Op_create", MPI_Op_create(&AddHalvesOp, /*commute=*/1, &half_sum_));
}

Result<std::unique_ptr<MpiCollective>> MpiCollective::Create(MPI_Comm comm,
                                                             MpiCollectiveOptions options) {
  if (options.max_in_flight < 1) {
    return Status::InvalidArgument("mpi collective: max_in_flight must be >= 1");
  }
  MPI_Comm dup = MPI_COMM_NULL;
  if (Status s = MpiStatus("MPI_Comm_dup", MPI_Comm_dup(comm, &dup)); !s.ok()) return s;
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(dup, &rank);
  MPI_Comm_size(dup, &size);
  std::unique_ptr<MpiCollective> c(new MpiCollective(dup, rank, size, options));
  if (Status s = c->CreateHalfSum(); !s.ok()) return s.WithContext("mpi collective");
  return c;
}

MpiCollective::~MpiCollective() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || comm_ == MPI_COMM_NULL) return;
  for (auto& [id, request] : pending_) MPI_Wait(&request, MPI_STATUS_IGNORE);
  if (half_sum_ != MPI_OP_NULL) MPI_Op_free(&half_sum_);
  if (half_type_ != MPI_DATATYPE_NULL) MPI_Type_free(&half_type_);
  MPI_Comm_free(&comm_);
}

Status MpiCollective::AllreduceSum(float* data, size_t count) {
  if (data == nullptr && count > 0) return Status::InvalidArgument("allreduce: null buffer");
  const size_t segment = options_.segment_bytes / sizeof(float);
  if (segment > 0 && count > segment) return AllreduceSegmented(data, count, segment);
  return AllreduceWhole(data, count);
}

Status MpiCollective::AllreduceWhole(float* data, size_t count) {
  while (count > 0) {
    int chunk = static_cast<int>(std::min<size_t>(count, INT_MAX));
    int rc = MPI_Allreduce(MPI_IN_PLACE, data, chunk, MPI_FLOAT, MPI_SUM, comm_);
    if (rc != MPI_SUCCESS) return MpiStatus("MPI_Allreduce", rc);
    data += chunk;
    count -= static_cast<size_t>(chunk);
  }
  return Status::Ok();
}

// Blocking segments, or up to max_in_flight in flight, waiting for the oldest before the next.
Status MpiCollective::AllreduceSegmented(float* data, size_t count, size_t segment) {
  segment = std::min<size_t>(segment, INT_MAX);
  if (options_.max_in_flight == 1) {
    for (size_t offset = 0; offset < count; offset += segment) {
      Status s = AllreduceWhole(data + offset, std::min(segment, count - offset));
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }
  std::deque<uint64_t> in_flight;
  Status failure;
  for (size_t offset = 0; offset < count && failure.ok(); offset += segment) {
    if (in_flight.size() >= static_cast<size_t>(options_.max_in_flight)) {
      failure = Wait(in_flight.front());
      in_flight.pop_front();
      if (!failure.ok()) break;
    }
    Result<uint64_t> id = StartAllreduceSum(data + offset, std::min(segment, count - offset));
    if (!id.ok()) {
      failure = id.status();
      break;
    }
    in_flight.push_back(*id);
  }
  for (uint64_t id : in_flight) {
    Status s = Wait(id);
    if (failure.ok()) failure = s;
  }
  return failure;
}

Result<uint64_t> MpiCollective::StartAllreduceSum(float* data, size_t count) {
  if (data == nullptr && count > 0) return Status::InvalidArgument("allreduce: null buffer");
  if (count > INT_MAX) {
    return Status::InvalidArgument(
        "allreduce: a non-blocking allreduce holds at most INT_MAX "
        "elements, got " +
        std::to_string(count));
  }
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm_,
                          &request);
  if (rc != MPI_SUCCESS) return MpiStatus("MPI_Iallreduce", rc);
  const uint64_t id = next_request_++;
  pending_.emplace_back(id, request);
  return id;
}

Status MpiCollective::Wait(uint64_t id) {
  auto it =
      std::find_if(pending_.begin(), pending_.end(), [id](const auto& p) { return p.first == id; });
  if (it == pending_.end()) {
    return Status::InvalidArgument("wait: unknown request " + std::to_string(id));
  }
  MPI_Request request = it->second;
  pending_.erase(it);
  return MpiStatus("MPI_Wait (allreduce)", MPI_Wait(&request, MPI_STATUS_IGNORE));
}

Status MpiCollective::Broadcast(float* data, size_t count, int root) {
  if (root < 0 || root >= size_) {
    return Status::InvalidArgument("broadcast: root " + std::to_string(root) +
                                   " is not a rank of " + std::to_string(size_));
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

Status MpiCollective::Allgather(const float* send, size_t count, float* recv) {
  if ((send == nullptr || recv == nullptr) && count > 0) {
    return Status::InvalidArgument("allgather: null buffer");
  }
  if (count > static_cast<size_t>(INT_MAX)) {
    return Status::InvalidArgument("allgather: at most INT_MAX elements per rank, got " +
                                   std::to_string(count));
  }
  if (count == 0) return Status::Ok();
  int rc = MPI_Allgather(send, static_cast<int>(count), MPI_FLOAT, recv, static_cast<int>(count),
                         MPI_FLOAT, comm_);
  return MpiStatus("MPI_Allgather", rc);
}

Status MpiCollective::AllgatherBytes(const void* send, size_t bytes, void* recv) {
  if ((send == nullptr || recv == nullptr) && bytes > 0) {
    return Status::InvalidArgument("allgather (bytes): null buffer");
  }
  if (bytes > static_cast<size_t>(INT_MAX)) {
    return Status::InvalidArgument("allgather (bytes): at most INT_MAX bytes per rank, got " +
                                   std::to_string(bytes));
  }
  if (bytes == 0) return Status::Ok();
  int rc = MPI_Allgather(send, static_cast<int>(bytes), MPI_BYTE, recv, static_cast<int>(bytes),
                         MPI_BYTE, comm_);
  return MpiStatus("MPI_Allgather", rc);
}

Status MpiCollective::ReduceSum(float* data, size_t count, int root) {
  if (root < 0 || root >= size_) {
    return Status::InvalidArgument("reduce: root " + std::to_string(root) + " is not a rank of " +
                                   std::to_string(size_));
  }
  if (data == nullptr && count > 0) return Status::InvalidArgument("reduce: null buffer");
  while (count > 0) {
    int chunk = static_cast<int>(std::min<size_t>(count, INT_MAX));
    // The root sums in place; the others only send (their receive buffer is not used).
    int rc = rank_ == root ? MPI_Reduce(MPI_IN_PLACE, data, chunk, MPI_FLOAT, MPI_SUM, root, comm_)
                           : MPI_Reduce(data, nullptr, chunk, MPI_FLOAT, MPI_SUM, root, comm_);
    if (rc != MPI_SUCCESS) return MpiStatus("MPI_Reduce", rc);
    data += chunk;
    count -= static_cast<size_t>(chunk);
  }
  return Status::Ok();
}

Status MpiCollective::ReduceScatterSum(const float* send, float* recv, size_t block) {
  if ((send == nullptr || recv == nullptr) && block > 0) {
    return Status::InvalidArgument("reduce-scatter: null buffer");
  }
  if (block > static_cast<size_t>(INT_MAX)) {
    return Status::InvalidArgument("reduce-scatter: at most INT_MAX elements per rank, got " +
                                   std::to_string(block));
  }
  if (block == 0) return Status::Ok();
  int rc = MPI_Reduce_scatter_block(send, recv, static_cast<int>(block), MPI_FLOAT, MPI_SUM, comm_);
  return MpiStatus("MPI_Reduce_scatter_block", rc);
}

Status MpiCollective::AllreduceSumHalf(uint16_t* data, size_t count) {
  if (data == nullptr && count > 0) return Status::InvalidArgument("allreduce (fp16): null buffer");
  size_t segment = options_.segment_bytes / sizeof(uint16_t);
  if (segment == 0) segment = count;
  segment = std::min<size_t>(segment, INT_MAX);
  for (size_t offset = 0; offset < count; offset += segment) {
    const int n = static_cast<int>(std::min(segment, count - offset));
    int rc = MPI_Allreduce(MPI_IN_PLACE, data + offset, n, half_type_, half_sum_, comm_);
    if (rc != MPI_SUCCESS) return MpiStatus("MPI_Allreduce (fp16)", rc);
  }
  return Status::Ok();
}

Status MpiCollective::Barrier() { return MpiStatus("MPI_Barrier", MPI_Barrier(comm_)); }

}  // namespace dljob::trainer
