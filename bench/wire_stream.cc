#include "bench/wire_stream.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <sstream>

#include "base/errno_status.h"
#include "bench/mpi_parameters.h"

namespace dljob::bench {
namespace {

constexpr int kAcceptTimeoutMs = 60'000;

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// "10.0.0.0/8" -> whether `ipv4` lies in it; false when the item does not parse.
bool InSubnet(uint32_t ipv4, const std::string& cidr) {
  const size_t slash = cidr.find('/');
  in_addr net{};
  if (inet_pton(AF_INET, cidr.substr(0, slash).c_str(), &net) != 1) return false;
  int bits = 0;
  try {
    size_t used = 0;
    bits = std::stoi(cidr.substr(slash + 1), &used);
    if (used != cidr.size() - slash - 1) return false;
  } catch (const std::exception&) {
    return false;
  }
  if (bits < 0 || bits > 32) return false;
  const uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
  return (ipv4 & mask) == (ntohl(net.s_addr) & mask);
}

Status SetNonBlocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return ErrnoStatus("fcntl", "");
  return Status::Ok();
}

std::string Endpoint(const sockaddr_in& a) {
  return FormatIpv4(ntohl(a.sin_addr.s_addr)) + ":" + std::to_string(ntohs(a.sin_port));
}

}  // namespace

uint64_t RingAllreduceBytesPerRank(uint64_t bytes, int ranks) {
  const auto p = static_cast<uint64_t>(ranks);
  // bytes * 2 (p - 1) / p without overflow for any buffer a machine can hold.
  return bytes / p * 2 * (p - 1) + bytes % p * 2 * (p - 1) / p;
}

bool MatchesInterfaceList(const InterfaceAddress& a, const std::string& list) {
  std::stringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    item = Trim(item);
    if (item.empty()) continue;
    if (item.find('/') != std::string::npos ? InSubnet(a.ipv4, item) : item == a.name) return true;
  }
  return false;
}

Result<InterfaceAddress> ChooseInterface(const std::vector<InterfaceAddress>& interfaces,
                                         const std::string& include, const std::string& exclude) {
  const bool by_include = !Trim(include).empty();
  for (const InterfaceAddress& a : interfaces) {
    if (by_include ? MatchesInterfaceList(a, include) : !MatchesInterfaceList(a, exclude)) return a;
  }
  std::string seen;
  for (const InterfaceAddress& a : interfaces) {
    seen += (seen.empty() ? "" : ", ") + a.name + " " + FormatIpv4(a.ipv4);
  }
  return Status::NotFound("no IPv4 interface " +
                          (by_include ? "matches btl_tcp_if_include \"" + include + "\""
                                      : "is left by btl_tcp_if_exclude \"" + exclude + "\"") +
                          " (interfaces: " + (seen.empty() ? "none" : seen) + ")");
}

Result<std::vector<InterfaceAddress>> LocalInterfaces() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return ErrnoStatus("getifaddrs", "");
  std::vector<InterfaceAddress> out;
  for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    if ((i->ifa_flags & IFF_UP) == 0) continue;
    const auto* in = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    out.push_back({i->ifa_name, ntohl(in->sin_addr.s_addr)});
  }
  freeifaddrs(list);
  return out;
}

std::string FormatIpv4(uint32_t ipv4) {
  in_addr a{htonl(ipv4)};
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a, text, sizeof(text));
  return text;
}

Status StreamBothWays(int send_fd, int recv_fd, const char* send, char* recv, size_t buffer_bytes,
                      uint64_t bytes) {
  uint64_t sent = 0;
  uint64_t received = 0;
  while (sent < bytes || received < bytes) {
    bool progress = false;
    // As much as the kernel takes, up to the end of the buffer: one call per buffer wrap at most.
    if (sent < bytes) {
      const size_t at = sent % buffer_bytes;
      const size_t n = static_cast<size_t>(std::min<uint64_t>(bytes - sent, buffer_bytes - at));
      const ssize_t w = ::send(send_fd, send + at, n, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w > 0) {
        sent += static_cast<uint64_t>(w);
        progress = true;
      } else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return ErrnoStatus("send to the next rank", "");
      }
    }
    if (received < bytes) {
      const size_t at = received % buffer_bytes;
      const size_t n = static_cast<size_t>(std::min<uint64_t>(bytes - received, buffer_bytes - at));
      const ssize_t r = ::recv(recv_fd, recv + at, n, MSG_DONTWAIT);
      if (r > 0) {
        received += static_cast<uint64_t>(r);
        progress = true;
      } else if (r == 0) {
        return Status::Unavailable("receive from the previous rank: connection closed after " +
                                   std::to_string(received) + " of " + std::to_string(bytes) +
                                   " bytes");
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return ErrnoStatus("receive from the previous rank", "");
      }
    }
    if (progress) continue;
    // Neither direction could move: sleep until one can.
    pollfd fds[2] = {{send_fd, static_cast<short>(sent < bytes ? POLLOUT : 0), 0},
                     {recv_fd, static_cast<short>(received < bytes ? POLLIN : 0), 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return ErrnoStatus("poll", "");
  }
  return Status::Ok();
}

Result<std::unique_ptr<TcpRing>> TcpRing::Open(MPI_Comm comm, uint32_t local_ipv4) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // Every rank reaches the allgather whatever happened before it (a rank that fails to listen
  // sends port 0), so no rank waits there forever for one that gave up.
  Status failure;
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in self{};
  self.sin_family = AF_INET;
  self.sin_addr.s_addr = htonl(local_ipv4);
  socklen_t len = sizeof(self);
  if (listener < 0) {
    failure = ErrnoStatus("socket", "");
  } else if (::bind(listener, reinterpret_cast<sockaddr*>(&self), sizeof(self)) != 0) {
    failure = ErrnoStatus("bind", Endpoint(self));
  } else if (::listen(listener, 4) != 0 ||
             ::getsockname(listener, reinterpret_cast<sockaddr*>(&self), &len) != 0) {
    failure = ErrnoStatus("listen", Endpoint(self));
  }
  if (!failure.ok()) self.sin_port = 0;
  std::vector<sockaddr_in> all(static_cast<size_t>(size));
  MPI_Allgather(&self, sizeof(self), MPI_BYTE, all.data(), sizeof(self), MPI_BYTE, comm);
  for (int r = 0; r < size && failure.ok(); ++r) {
    if (all[static_cast<size_t>(r)].sin_port == 0) {
      failure = Status::Unavailable("rank " + std::to_string(r) + " could not listen");
    }
  }
  int to_next = -1;
  int from_previous = -1;
  if (failure.ok()) {
    // connect() completes against the peer's listen backlog, so every rank connects first and
    // accepts second without waiting for the others.
    const sockaddr_in& next = all[static_cast<size_t>((rank + 1) % size)];
    to_next = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (to_next < 0 ||
        ::connect(to_next, reinterpret_cast<const sockaddr*>(&next), sizeof(next)) != 0) {
      failure = ErrnoStatus("connect to the next rank", Endpoint(next));
    } else {
      // Bounded, so a rank whose previous rank failed to connect gives up instead of hanging.
      pollfd ready = {listener, POLLIN, 0};
      const int polled = ::poll(&ready, 1, kAcceptTimeoutMs);
      if (polled > 0) from_previous = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (polled == 0) {
        failure = Status::Unavailable("the previous rank did not connect within " +
                                      std::to_string(kAcceptTimeoutMs / 1000) + " s");
      } else if (from_previous < 0) {
        failure = ErrnoStatus("accept from the previous rank", Endpoint(self));
      }
    }
  }
  if (listener >= 0) ::close(listener);
  const int one = 1;
  for (int fd : {to_next, from_previous}) {
    if (!failure.ok() || fd < 0) break;
    if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
      failure = ErrnoStatus("setsockopt TCP_NODELAY", "");
    } else {
      failure = SetNonBlocking(fd);
    }
  }
  // Every rank learns whether all connected, so none goes on to stream with a rank that did not.
  int all_ok = failure.ok() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, comm);
  if (failure.ok() && all_ok == 0) failure = Status::Unavailable("another rank failed to connect");
  if (!failure.ok()) {
    if (to_next >= 0) ::close(to_next);
    if (from_previous >= 0) ::close(from_previous);
    return failure.WithContext("raw TCP ring on " + FormatIpv4(local_ipv4));
  }
  return std::unique_ptr<TcpRing>(new TcpRing(to_next, from_previous));
}

TcpRing::~TcpRing() {
  ::close(to_next_);
  ::close(from_previous_);
}

Status TcpRing::Exchange(const char* send, char* recv, size_t buffer_bytes, uint64_t bytes) {
  return StreamBothWays(to_next_, from_previous_, send, recv, buffer_bytes, bytes);
}

MpiTcpInterfaces ReadMpiTcpInterfaces() {
  return {MpiParameter("btl_tcp_if_include").value_or(""),
          MpiParameter("btl_tcp_if_exclude").value_or("127.0.0.1/8,sppp")};
}

}  // namespace dljob::bench
