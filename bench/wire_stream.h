// The raw TCP stream baseline of bench/allreduce_bench: what the wire allows for the bytes a ring
// allreduce moves, measured with plain sockets in the same run as the MPI methods.
//
// Contract. TcpRing connects every rank to the next one (rank + 1 mod p) and accepts one
// connection from the previous one, over IPv4 TCP, on the address ChooseInterface picks with Open
// MPI's own interface rules (btl_tcp_if_include / btl_tcp_if_exclude), so the stream crosses the
// same interface as MPI's TCP transport; the listening addresses are exchanged with MPI_Allgather.
// Exchange(bytes) then sends `bytes` to the next rank while it receives `bytes` from the previous
// one, both at once (full duplex: for two ranks both directions of one link are busy, as in an
// allreduce), from one thread that polls non-blocking sockets, as MPI's progress engine does.
// Writes and reads go straight from the caller's send buffer and into its receive buffer, as
// large as the kernel takes (no staging copy, no framing); the buffers are reused cyclically
// when `bytes` exceeds them. Socket buffers are left to the kernel's autotuning (Open MPI's
// default: btl_tcp_sndbuf = btl_tcp_rcvbuf = 0), Nagle is off (btl_tcp_use_nagle = 0).
//
// What it leaves out on purpose: the reduction, the step-by-step dependencies of a ring, message
// headers and matching. Its time is a floor for an allreduce over the same link, not a target an
// allreduce can reach exactly; allreduce_bench prints each method as a ratio to it.
//
// Errors: system-call failures come back as a Status naming the call and the peer. Ownership:
// TcpRing owns its two sockets and closes them when destroyed. Thread-compatible; Open() is
// collective over the communicator and must be called by every rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <mpi.h>

#include "base/status.h"

namespace dljob::bench {

// Bytes each rank sends (and receives) in one ring allreduce of `bytes` over `ranks` ranks:
// 2 (p - 1) / p x bytes (a reduce-scatter and an allgather of p - 1 steps, 1/p of the buffer
// each), rounded down; 0 for one rank. REQUIRES: ranks >= 1.
uint64_t RingAllreduceBytesPerRank(uint64_t bytes, int ranks);

// One IPv4 address of a network interface, as getifaddrs lists it.
struct InterfaceAddress {
  std::string name;   // "eth0"
  uint32_t ipv4 = 0;  // host byte order
  bool operator==(const InterfaceAddress&) const = default;
};

// Whether `a` matches a list in the syntax of Open MPI's btl_tcp_if_include/exclude:
// comma-separated interface names ("eth0") or IPv4 subnets in CIDR form ("10.0.0.0/8").
// Blanks around items are ignored; an unparsable subnet matches nothing. Pure.
bool MatchesInterfaceList(const InterfaceAddress& a, const std::string& list);

// The first of `interfaces` (in the order given, the kernel's) that Open MPI's TCP transport
// would use: one matching `include` when it is not empty, else one not matching `exclude`.
// NotFound, naming the lists and the addresses seen, when none qualifies. Pure.
Result<InterfaceAddress> ChooseInterface(const std::vector<InterfaceAddress>& interfaces,
                                         const std::string& include, const std::string& exclude);

// The IPv4 addresses of this host's interfaces that are up (getifaddrs).
Result<std::vector<InterfaceAddress>> LocalInterfaces();

// "a.b.c.d" of a host-order IPv4 address.
std::string FormatIpv4(uint32_t ipv4);

// Sends `bytes` on `send_fd` from `send` while receiving `bytes` on `recv_fd` into `recv`, both
// non-blocking sockets, polled from this thread until both directions are done. Each buffer is
// `buffer_bytes` long and used cyclically (byte i of the stream is byte i mod buffer_bytes).
// `send_fd` and `recv_fd` may be the same socket. REQUIRES: buffer_bytes > 0 when bytes > 0.
Status StreamBothWays(int send_fd, int recv_fd, const char* send, char* recv, size_t buffer_bytes,
                      uint64_t bytes);

class TcpRing {
 public:
  // Collective over `comm` (every rank calls it): listens on `local_ipv4` (an ephemeral port),
  // allgathers the addresses, connects to the next rank and accepts the previous one.
  // REQUIRES: comm has at least 2 ranks.
  static Result<std::unique_ptr<TcpRing>> Open(MPI_Comm comm, uint32_t local_ipv4);
  ~TcpRing();
  TcpRing(const TcpRing&) = delete;
  TcpRing& operator=(const TcpRing&) = delete;

  // StreamBothWays over this rank's two connections: `bytes` to the next rank, `bytes` from the
  // previous one.
  Status Exchange(const char* send, char* recv, size_t buffer_bytes, uint64_t bytes);

 private:
  TcpRing(int to_next, int from_previous) : to_next_(to_next), from_previous_(from_previous) {}

  int to_next_;
  int from_previous_;
};

// The interface lists Open MPI's TCP transport uses in this process: the MCA parameters
// btl_tcp_if_include and btl_tcp_if_exclude (MpiParameter, bench/mpi_parameters.h), or Open MPI's
// defaults ("" and "127.0.0.1/8,sppp") when the transport is not loaded. REQUIRES: MPI is
// initialised.
struct MpiTcpInterfaces {
  std::string include;
  std::string exclude;
};
MpiTcpInterfaces ReadMpiTcpInterfaces();

}  // namespace dljob::bench
