// memory_cgroup.h: the pure parsers, and real cgroups — a process capped at 64 MiB that wants
// 200 MiB is OOM-killed and the cgroup says so; an uncapped one's peak is measured. Where this
// machine has no writable cgroup v1 memory controller, Probe must say why instead.
#include "cli/advise/memory_cgroup.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "testing/command.h"

namespace dljob::advise {
namespace {

TEST(MemoryCgroup, PathFromProcSelfCgroup) {
  EXPECT_EQ(MemoryCgroupPath("9:name=systemd:/\n4:memory:/process_api/b94c\n0::/\n"),
            "/process_api/b94c");
  EXPECT_EQ(MemoryCgroupPath("5:cpuacct,memory:/a/b\n"), "/a/b");
  EXPECT_EQ(MemoryCgroupPath("0::/user.slice\n"), std::nullopt);  // cgroup v2 only
  EXPECT_EQ(MemoryCgroupPath(""), std::nullopt);
}

TEST(MemoryCgroup, MountFromProcMounts) {
  const std::string mounts =
      "tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0\n"
      "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n"
      "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
      "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";
  EXPECT_EQ(MemoryCgroupMount(mounts), "/sys/fs/cgroup/memory");
  EXPECT_EQ(MemoryCgroupMount("cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n"), std::nullopt);
}

TEST(MemoryCgroup, OomKillCount) {
  EXPECT_EQ(OomKillCount("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n"), 3);
  EXPECT_EQ(OomKillCount("oom_kill_disable 0\nunder_oom 0\n"), 0);
  EXPECT_EQ(OomKillCount(""), 0);
}

bool HasMemoryControllerV1() {
  std::ifstream in("/proc/self/cgroup");
  std::stringstream text;
  text << in.rdbuf();
  return MemoryCgroupPath(text.str()).has_value();
}

TEST(MemoryCgroup, RealCapAndPeak) {
  Result<MemoryCgroups> cgroups = MemoryCgroups::Probe();
  if (!HasMemoryControllerV1() || geteuid() != 0) {
    // Not root, or cgroup v2 only: Probe refuses and says why (advise then runs without the
    // memory axis).
    ASSERT_FALSE(cgroups.ok());
    EXPECT_NE(cgroups.status().message().find("cgroup"), std::string::npos);
    return;
  }
  ASSERT_TRUE(cgroups.ok()) << cgroups.status().message();
  const std::vector<std::string> hog = {"python3", "-c", "b = bytearray(200 << 20); print(len(b))"};
  const std::string name = "dljob-test-" + std::to_string(getpid());
  {
    Result<std::unique_ptr<MemoryCgroup>> capped = cgroups->Create(name, 64 << 20, RealClock());
    ASSERT_TRUE(capped.ok()) << capped.status().message();
    dljob::testing::CommandResult r = dljob::testing::RunCommand((*capped)->Wrap(hog));
    EXPECT_EQ(r.exit_code, 128 + 9) << r.out << r.err;
    EXPECT_TRUE((*capped)->OutOfMemoryKilled());
    ASSERT_TRUE((*capped)->PeakBytes().has_value());
    EXPECT_LE(*(*capped)->PeakBytes(), int64_t{64} << 20);
  }
  {
    Result<std::unique_ptr<MemoryCgroup>> free = cgroups->Create(name, std::nullopt, RealClock());
    ASSERT_TRUE(free.ok()) << free.status().message();
    dljob::testing::CommandResult r = dljob::testing::RunCommand((*free)->Wrap(hog));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "209715200\n");
    EXPECT_FALSE((*free)->OutOfMemoryKilled());
    ASSERT_TRUE((*free)->PeakBytes().has_value());
    EXPECT_GE(*(*free)->PeakBytes(), int64_t{200} << 20);
  }
}

}  // namespace
}  // namespace dljob::advise
