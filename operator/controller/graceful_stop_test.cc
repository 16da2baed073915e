// The pods' entrypoints (graceful_stop.h) run for real under /bin/sh, as the kubelet runs a pod's
// command (expanded first, KubeletExpanded), with stand-ins: a "server" (sshd's place) that starts
// one "rank" (a process with OMPI_COMM_WORLD_RANK in its environment, as Open MPI's ranks have)
// and one bystander (orted's place, which must not be signalled).
#include "operator/controller/graceful_stop.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testing/command.h"

namespace dljob::controller {
namespace {

using ::dljob::testing::Background;
using ::dljob::testing::ReadFile;
using ::dljob::testing::TempDir;
using ::dljob::testing::WaitFor;

// What the kubelet does to each word of a container's command before it runs it (Kubernetes'
// expansion of dependent variables): `$$` is `$`, `$(NAME)` is NAME's value in `vars` (left as
// written when NAME is not there), any other `$` stays.
std::vector<std::string> KubeletExpanded(const std::vector<std::string>& command,
                                         const std::map<std::string, std::string>& vars = {}) {
  std::vector<std::string> out;
  for (const std::string& word : command) {
    std::string expanded;
    for (size_t i = 0; i < word.size(); ++i) {
      if (word[i] != '$' || i + 1 == word.size()) {
        expanded += word[i];
      } else if (word[i + 1] == '$') {
        expanded += '$';
        ++i;
      } else if (size_t close = word.find(')', i + 2); word[i + 1] == '(' && close != word.npos) {
        std::string name = word.substr(i + 2, close - i - 2);
        auto it = vars.find(name);
        expanded += it != vars.end() ? it->second : "$(" + name + ")";
        i = close;
      } else {
        expanded += word[i];
      }
    }
    out.push_back(std::move(expanded));
  }
  return out;
}

TEST(KubeletExpanded, FollowsKubernetesRules) {
  EXPECT_EQ(KubeletExpanded({"a$$b", "$(X)/$(Y)", "$(", "$x", "end$"}, {{"X", "1"}}),
            (std::vector<std::string>{"a$b", "1/$(Y)", "$(", "$x", "end$"}));
}

// The rank records the SIGTERM it gets, takes a while to "write its checkpoint", records that it
// finished and exits 143; the bystander records any SIGTERM. Both write "ready" when their trap
// is set.
std::string ServerScript(const std::string& dir) {
  return "OMPI_COMM_WORLD_RANK=0 sh -c 'trap \"echo term >> " + dir +
         "/rank; sleep 1; echo saved >> " + dir + "/rank; exit 143\" TERM; echo ready > " + dir +
         "/rank; while :; do sleep 0.1; done' &\n"
         "sh -c 'trap \"echo term >> " +
         dir + "/bystander; exit 1\" TERM; echo ready > " + dir +
         "/bystander; while :; do sleep 0.1; done' &\n"
         "wait\n";
}

// Runs the worker entrypoint over ServerScript with `env`, sends it SIGTERM once both stand-ins
// are ready, and expects it to end 143 only after the rank has finished, the bystander untouched.
void ExpectTheRankStoppedAndTheRestSpared(const TempDir& dir,
                                          const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv =
      KubeletExpanded(WorkerEntrypoint({"/bin/sh", "-c", ServerScript(dir.path())}));
  ASSERT_EQ(argv[0], "/bin/sh");
  Background worker(argv, env, dir.path() + "/out", dir.path() + "/err");
  ASSERT_TRUE(WaitFor(
      [&] {
        return ReadFile(dir.path() + "/rank") == "ready\n" &&
               ReadFile(dir.path() + "/bystander") == "ready\n";
      },
      30000))
      << ReadFile(dir.path() + "/err");
  worker.Signal(SIGTERM);
  EXPECT_EQ(worker.Wait(30000), 143) << ReadFile(dir.path() + "/err");
  // Read at once: the worker ended only after the rank had finished.
  EXPECT_EQ(ReadFile(dir.path() + "/rank"), "ready\nterm\nsaved\n")
      << ReadFile(dir.path() + "/err");
  EXPECT_EQ(ReadFile(dir.path() + "/bystander"), "ready\n") << "only ranks are signalled";
}  // ~Background kills what is left (the bystander) with the process group.

TEST(WorkerEntrypoint, StopsTheRanksWaitsForThemAndSparesTheRest) {
  TempDir dir;
  ExpectTheRankStoppedAndTheRestSpared(dir, {});
}

// A job's image may have little besides a shell.
TEST(WorkerEntrypoint, FindsTheRanksWithOnlyAShellTrAndSleep) {
  TempDir dir;
  const std::string bin = dir.path() + "/bin";
  ASSERT_EQ(::mkdir(bin.c_str(), 0755), 0);
  for (const char* tool : {"sh", "tr", "sleep"}) {
    const std::string from = "/usr/bin/" + std::string(tool);
    const std::string real = ::access(from.c_str(), X_OK) == 0 ? from : "/bin/" + std::string(tool);
    ASSERT_EQ(::symlink(real.c_str(), (bin + "/" + tool).c_str()), 0) << tool;
  }
  ExpectTheRankStoppedAndTheRestSpared(dir, {{"PATH", bin}});
}

TEST(WorkerEntrypoint, WithoutRanksStopsAtOnce) {
  TempDir dir;
  Background worker(
      KubeletExpanded(WorkerEntrypoint(
          {"/bin/sh", "-c", "echo up > " + dir.path() + "/up; while :; do sleep 0.1; done"})),
      {}, dir.path() + "/out", dir.path() + "/err");
  ASSERT_TRUE(WaitFor([&] { return ReadFile(dir.path() + "/up") == "up\n"; }, 30000));
  worker.Signal(SIGTERM);
  EXPECT_EQ(worker.Wait(30000), 143) << ReadFile(dir.path() + "/err");
}

TEST(WorkerEntrypoint, AServerThatEndsEndsTheWorkerWithItsStatus) {
  TempDir dir;
  Background worker(KubeletExpanded(WorkerEntrypoint({"/bin/sh", "-c", "exit 5"})), {},
                    dir.path() + "/out", dir.path() + "/err");
  EXPECT_EQ(worker.Wait(30000), 5);
}

// SIGTERM does not reach mpirun's stand-in: it ends when it is done (here: told to by a file),
// and the launcher ends with its status.
TEST(LauncherEntrypoint, OutlivesSigtermAndEndsWithMpirunsStatus) {
  TempDir dir;
  std::string go = dir.path() + "/go";
  Background launcher(
      KubeletExpanded(LauncherEntrypoint({"/bin/sh", "-c",
                                          "echo up > " + dir.path() + "/up; while [ ! -e " + go +
                                              " ]; do sleep 0.1; done; exit 7"})),
      {}, dir.path() + "/out", dir.path() + "/err");
  ASSERT_TRUE(WaitFor([&] { return ReadFile(dir.path() + "/up") == "up\n"; }, 30000));
  launcher.Signal(SIGTERM);
  launcher.Signal(SIGTERM);
  std::ofstream(go) << "go\n";
  EXPECT_EQ(launcher.Wait(30000), 7) << ReadFile(dir.path() + "/err");
}

}  // namespace
}  // namespace dljob::controller
