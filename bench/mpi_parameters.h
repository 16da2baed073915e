// MpiParameter: the value of one of Open MPI's MCA parameters (btl_tcp_links, coll_tuned_*, ...)
// as this process's MPI reports it through the MPI tool interface (MPI_T), so --mca flags,
// OMPI_MCA_* variables and parameter files all count. For benchmarks that print the settings
// they ran under. REQUIRES: MPI is initialised. Thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dljob::bench {

// The value as text ("65536", "self,tcp", "true"); nullopt when MPI_T knows no such parameter
// (a component that is not loaded registers none) or its type is not a number, bool or string.
std::optional<std::string> MpiParameter(const std::string& name);

// Sets an integer parameter (e.g. coll_tuned_allreduce_algorithm) for what this process creates
// from now on (a communicator made after it, say); false when MPI_T cannot write it.
bool SetMpiIntParameter(const std::string& name, int value);

// "name=value" for each of `names` MPI_T knows, joined by spaces.
std::string DescribeMpiParameters(const std::vector<std::string>& names);

}  // namespace dljob::bench
