// The pure parts of memory_cgroup.h: finding the memory cgroup and its mount, reading oom_kill.
// (The cgroup itself is exercised by advise_e2e_test's real run.)
#include "cli/advise/memory_cgroup.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace dljob::advise
