#include "images/trainer/comm/hierarchical_collective.h"

#include <algorithm>
#include <cstring>

#include "images/trainer/comm/mpi_collective.h"

namespace dljob::trainer {

HierarchicalCollective::HierarchicalCollective(std::unique_ptr<Collective> world,
                                               std::unique_ptr<Collective> local,
                                               std::unique_ptr<Collective> cross,
                                               size_t chunk_floats)
    : world_(std::move(world)),
      local_(std::move(local)),
      cross_(std::move(cross)),
      chunk_floats_(std::max<size_t>(chunk_floats, 1)) {}

std::string HierarchicalCollective::name() const {
  return world_->name() + "-hierarchical(" + std::to_string(cross_->size()) + "x" +
         std::to_string(local_->size()) + ")";
}

Status HierarchicalCollective::AllreduceSum(float* data, size_t count) {
  if (data == nullptr && count > 0) return Status::InvalidArgument("allreduce: null buffer");
  for (size_t offset = 0; offset < count; offset += chunk_floats_) {
    Status s = AllreduceChunk(data + offset, std::min(chunk_floats_, count - offset));
    if (!s.ok()) return s.WithContext("hierarchical allreduce");
  }
  return Status::Ok();
}

Status HierarchicalCollective::AllreduceChunk(float* data, size_t count) {
  const auto ranks = static_cast<size_t>(local_->size());
  if (ranks == 1) return cross_->AllreduceSum(data, count);
  const size_t block = (count + ranks - 1) / ranks;
  const size_t padded = block * ranks;
  // Reduce-scatter reads from `data` itself when no padding is needed.
  const float* send = data;
  if (padded != count) {
    padded_.resize(padded);
    std::memcpy(padded_.data(), data, count * sizeof(float));
    std::fill(padded_.begin() + static_cast<ptrdiff_t>(count), padded_.end(), 0.0f);
    send = padded_.data();
  }
  block_.resize(block);
  if (Status s = local_->ReduceScatterSum(send, block_.data(), block); !s.ok()) {
    return s.WithContext("local reduce-scatter");
  }
  if (cross_->size() > 1) {
    if (Status s = cross_->AllreduceSum(block_.data(), block); !s.ok()) {
      return s.WithContext("cross-node allreduce");
    }
  }
  float* gathered = padded != count ? padded_.data() : data;
  if (Status s = local_->Allgather(block_.data(), block, gathered); !s.ok()) {
    return s.WithContext("local allgather");
  }
  if (gathered != data) std::memcpy(data, gathered, count * sizeof(float));
  return Status::Ok();
}

Status HierarchicalCollective::Broadcast(float* data, size_t count, int root) {
  return world_->Broadcast(data, count, root);
}

Status HierarchicalCollective::Allgather(const float* send, size_t count, float* recv) {
  return world_->Allgather(send, count, recv);
}

Status HierarchicalCollective::AllgatherBytes(const void* send, size_t bytes, void* recv) {
  return world_->AllgatherBytes(send, bytes, recv);
}

Status HierarchicalCollective::Barrier() { return world_->Barrier(); }

Status HierarchicalCollective::ReduceSum(float* data, size_t count, int root) {
  return world_->ReduceSum(data, count, root);
}

Status HierarchicalCollective::ReduceScatterSum(const float* send, float* recv, size_t block) {
  return world_->ReduceScatterSum(send, recv, block);
}

Status HierarchicalCollective::AllreduceSumHalf(uint16_t* data, size_t count) {
  return world_->AllreduceSumHalf(data, count);
}

namespace {

// Frees a communicator made by MPI_Comm_split* when it goes out of scope (the MpiCollectives
// keep duplicates of their own).
struct CommGuard {
  MPI_Comm comm = MPI_COMM_NULL;
  ~CommGuard() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

}  // namespace

Result<std::unique_ptr<Collective>> MakeHierarchicalMpiCollective(MPI_Comm world, int local_size) {
  int rank = 0;
  int size = 0;
  if (Status s = MpiStatus("MPI_Comm_rank", MPI_Comm_rank(world, &rank)); !s.ok()) return s;
  if (Status s = MpiStatus("MPI_Comm_size", MPI_Comm_size(world, &size)); !s.ok()) return s;
  if (local_size < 0) {
    return Status::InvalidArgument(
        "--hierarchical_local_size must be >= 0 (0: ranks that share "
        "a node), got " +
        std::to_string(local_size));
  }
  if (local_size > 0 && size % local_size != 0) {
    return Status::InvalidArgument(
        "--hierarchical_local_size=" + std::to_string(local_size) + " does not divide the " +
        std::to_string(size) +
        " ranks into equal nodes; pass a divisor of the world size, or 0 "
        "to group the ranks that share a node");
  }
  CommGuard local;
  int rc = local_size == 0
               ? MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local.comm)
               : MPI_Comm_split(world, rank / local_size, rank, &local.comm);
  if (rc != MPI_SUCCESS) return MpiStatus("MPI_Comm_split (local ranks)", rc);
  int local_rank = 0;
  int ranks_here = 0;
  MPI_Comm_rank(local.comm, &local_rank);
  MPI_Comm_size(local.comm, &ranks_here);
  // Every rank learns the smallest and largest node, so all fail or succeed together.
  int extremes[2] = {-ranks_here, ranks_here};
  rc = MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_INT, MPI_MAX, world);
  if (rc != MPI_SUCCESS) return MpiStatus("MPI_Allreduce (node sizes)", rc);
  if (-extremes[0] != extremes[1]) {
    return Status::InvalidArgument(
        "hierarchical allreduce needs the same number of ranks on every node, but nodes have " +
        std::to_string(-extremes[0]) + " to " + std::to_string(extremes[1]) +
        " ranks; place the ranks evenly, or set --hierarchical_local_size to simulate equal nodes");
  }
  CommGuard cross;
  rc = MPI_Comm_split(world, local_rank, rank, &cross.comm);
  if (rc != MPI_SUCCESS) return MpiStatus("MPI_Comm_split (cross-node ranks)", rc);
  auto world_collective = MpiCollective::Create(world);
  if (!world_collective.ok()) return world_collective.status();
  auto local_collective = MpiCollective::Create(local.comm);
  if (!local_collective.ok()) return local_collective.status();
  auto cross_collective = MpiCollective::Create(cross.comm);
  if (!cross_collective.ok()) return cross_collective.status();
  return std::unique_ptr<Collective>(new HierarchicalCollective(
      std::move(*world_collective), std::move(*local_collective), std::move(*cross_collective)));
}

}  // namespace dljob::trainer
