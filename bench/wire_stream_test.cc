#include "bench/wire_stream.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

namespace dljob::bench {
namespace {

TEST(RingAllreduceBytesPerRankTest, IsTwoTimesPMinusOneOverPOfTheBufferRoundedDown) {
  for (int p = 1; p <= 9; ++p) {
    for (uint64_t bytes = 0; bytes <= 1000; ++bytes) {
      ASSERT_EQ(RingAllreduceBytesPerRank(bytes, p), 2 * (p - 1) * bytes / p)
          << bytes << " bytes, " << p << " ranks";
    }
  }
  EXPECT_EQ(RingAllreduceBytesPerRank(102'228'128, 2), 102'228'128u);  // ResNet-50, 2 ranks
  EXPECT_EQ(RingAllreduceBytesPerRank(102'228'128, 4), 153'342'192u);
}

TEST(RingAllreduceBytesPerRankTest, DoesNotOverflowForHugeBuffers) {
  const uint64_t bytes = (uint64_t{1} << 62) + 12345;
  for (int p : {2, 3, 7, 1024}) {
    const auto expected =
        static_cast<uint64_t>(static_cast<unsigned __int128>(bytes) * 2 *
                              static_cast<unsigned>(p - 1) / static_cast<unsigned>(p));
    EXPECT_EQ(RingAllreduceBytesPerRank(bytes, p), expected) << p << " ranks";
  }
}

uint32_t Ip(const char* text) {
  in_addr a{};
  EXPECT_EQ(inet_pton(AF_INET, text, &a), 1) << text;
  return ntohl(a.s_addr);
}

TEST(MatchesInterfaceListTest, NamesAndSubnetsAsOpenMpiReadsThem) {
  const InterfaceAddress eth0{"eth0", Ip("10.213.1.7")};
  const struct {
    const char* list;
    bool matches;
  } cases[] = {
      {"", false},
      {"eth0", true},
      {"eth", false},  // names match whole
      {"eth1,eth0", true},
      {" eth1 , eth0 ", true},
      {"10.213.1.0/24", true},
      {"10.213.0.0/24", false},
      {"10.213.0.0/16", true},
      {"10.213.1.7/32", true},
      {"10.213.1.6/32", false},
      {"0.0.0.0/0", true},
      {"127.0.0.1/8,sppp", false},
      {"10.213.1.0/33", false},  // unparsable subnets match nothing
      {"10.213.1.0/x", false},
      {"10.213.1/24", false},
      {"10.213.1.0/24x", false},
  };
  for (const auto& c : cases) EXPECT_EQ(MatchesInterfaceList(eth0, c.list), c.matches) << c.list;
}

const std::vector<InterfaceAddress> kHost = {
    {"lo", Ip("127.0.0.1")},
    {"eth0", Ip("192.0.2.2")},
    {"dljob0", Ip("10.213.0.1")},
    {"veth-pod", Ip("10.231.0.2")},
};

TEST(ChooseInterfaceTest, WithOpenMpisDefaultsTakesTheFirstNonLoopbackAddress) {
  Result<InterfaceAddress> a = ChooseInterface(kHost, "", "127.0.0.1/8,sppp");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(*a, kHost[1]);
}

TEST(ChooseInterfaceTest, IncludeWinsOverExcludeByNameOrSubnet) {
  for (const char* include : {"veth-pod", "10.231.0.0/24", "eth9,10.231.0.0/16"}) {
    Result<InterfaceAddress> a = ChooseInterface(kHost, include, "127.0.0.1/8,sppp");
    ASSERT_TRUE(a.ok()) << include << ": " << a.status().message();
    EXPECT_EQ(*a, kHost[3]) << include;
  }
  Result<InterfaceAddress> lo = ChooseInterface(kHost, "lo", "127.0.0.1/8,sppp");
  ASSERT_TRUE(lo.ok());
  EXPECT_EQ(*lo, kHost[0]);
}

TEST(ChooseInterfaceTest, ExcludeSkipsEveryMatch) {
  Result<InterfaceAddress> a = ChooseInterface(kHost, "", "lo,eth0,10.213.0.0/16");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, kHost[3]);
}

TEST(ChooseInterfaceTest, NoneLeftIsNotFoundNamingTheListAndTheInterfaces) {
  Result<InterfaceAddress> a = ChooseInterface(kHost, "ib0", "");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(a.status().message(),
            "no IPv4 interface matches btl_tcp_if_include \"ib0\" (interfaces: lo 127.0.0.1, "
            "eth0 192.0.2.2, dljob0 10.213.0.1, veth-pod 10.231.0.2)");
  Result<InterfaceAddress> b = ChooseInterface({}, "", "127.0.0.1/8");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(),
            "no IPv4 interface is left by btl_tcp_if_exclude \"127.0.0.1/8\" (interfaces: none)");
}

TEST(LocalInterfacesTest, ListsLoopback) {
  Result<std::vector<InterfaceAddress>> all = LocalInterfaces();
  ASSERT_TRUE(all.ok()) << all.status().message();
  bool loopback = false;
  for (const InterfaceAddress& a : *all) loopback |= a.ipv4 == Ip("127.0.0.1");
  EXPECT_TRUE(loopback);
}

// A connected pair of non-blocking TCP sockets over 127.0.0.1 (port bound to 0).
std::pair<int, int> ConnectedPair() {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(listen(listener, 1), 0);
  EXPECT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int a = socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_EQ(connect(a, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const int b = accept(listener, nullptr, nullptr);
  close(listener);
  for (int fd : {a, b}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return {a, b};
}

std::vector<char> Pattern(size_t n, int seed) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<char>((i * 131 + static_cast<size_t>(seed)) % 251);
  return v;
}

// Two "ranks" as threads, each sending to the other while receiving: every byte lands at its
// offset modulo the buffer, in both directions, with one socket per direction or one for both.
TEST(StreamBothWaysTest, MovesEveryByteBothWaysAtOnceThroughCyclicBuffers) {
  constexpr size_t kBuffer = 3 << 20;  // more than the socket buffers hold, so both must poll
  const uint64_t bytes = 3 * kBuffer + kBuffer / 2 + 7;  // wraps, and ends mid-buffer
  for (bool one_socket : {false, true}) {
    SCOPED_TRACE(one_socket ? "one socket for both directions" : "one socket per direction");
    auto [a_to_b, b_from_a] = ConnectedPair();
    auto [b_to_a, a_from_b] = one_socket ? std::pair{b_from_a, a_to_b} : ConnectedPair();
    const std::vector<char> a_send = Pattern(kBuffer, 1);
    const std::vector<char> b_send = Pattern(kBuffer, 2);
    std::vector<char> a_recv(kBuffer, 0);
    std::vector<char> b_recv(kBuffer, 0);
    Status b_status;
    std::thread b([&, b_to_a = b_to_a, b_from_a = b_from_a]() {
      b_status = StreamBothWays(b_to_a, b_from_a, b_send.data(), b_recv.data(), kBuffer, bytes);
    });
    Status a_status =
        StreamBothWays(a_to_b, a_from_b, a_send.data(), a_recv.data(), kBuffer, bytes);
    b.join();
    EXPECT_TRUE(a_status.ok()) << a_status.message();
    EXPECT_TRUE(b_status.ok()) << b_status.message();
    EXPECT_TRUE(a_recv == b_send);
    EXPECT_TRUE(b_recv == a_send);
    // Nothing more than `bytes` was sent: the sockets hold no extra byte.
    char extra = 0;
    EXPECT_EQ(recv(a_from_b, &extra, 1, MSG_DONTWAIT), -1);
    EXPECT_EQ(recv(b_from_a, &extra, 1, MSG_DONTWAIT), -1);
    for (int fd : {a_to_b, b_from_a}) close(fd);
    if (!one_socket) {
      close(b_to_a);
      close(a_from_b);
    }
  }
}

TEST(StreamBothWaysTest, ZeroBytesTouchesNothing) {
  EXPECT_TRUE(StreamBothWays(-1, -1, nullptr, nullptr, 0, 0).ok());
}

TEST(StreamBothWaysTest, APeerThatStopsSendingEarlyIsUnavailableWithTheCount) {
  auto [a, b] = ConnectedPair();
  ASSERT_EQ(send(b, "abc", 3, 0), 3);
  ASSERT_EQ(shutdown(b, SHUT_WR), 0);  // b still reads, so a's sends go through
  std::vector<char> out(8, 'x');
  std::vector<char> in(8, 0);
  Status s = StreamBothWays(a, a, out.data(), in.data(), out.size(), 8);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "receive from the previous rank: connection closed after 3 of 8 bytes");
  EXPECT_EQ(std::string(in.data(), 3), "abc");
  close(a);
  close(b);
}

}  // namespace
}  // namespace dljob::bench
