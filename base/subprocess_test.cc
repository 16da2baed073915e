// RunProcess against real programs (/bin/sh and coreutils): the e2e tier (base/CMakeLists.txt).
#include "base/subprocess.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace dljob {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

ProcessSpec Shell(const std::string& script) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  return spec;
}

TEST(RunProcess, ExitStatusStdoutAndStderr) {
  auto r = RunProcess(Shell("echo out; echo err >&2; exit 3"), RealClock());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->signal, 0);
  EXPECT_FALSE(r->timed_out);
  EXPECT_FALSE(r->succeeded());
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_EQ(r->Describe(), "exited with status 3");

  r = RunProcess(Shell("printf 'a\\0b'"), RealClock());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->succeeded());
  EXPECT_EQ(r->out, std::string("a\0b", 3));  // bytes, not C strings
}

TEST(RunProcess, EnvironmentIsAddedToThisProcesss) {
  ASSERT_EQ(setenv("DLJOB_SUBPROCESS_KEPT", "kept", 1), 0);
  ASSERT_EQ(setenv("DLJOB_SUBPROCESS_REPLACED", "old", 1), 0);
  ProcessSpec spec = Shell(
      "echo \"$DLJOB_SUBPROCESS_KEPT $DLJOB_SUBPROCESS_REPLACED $DLJOB_SUBPROCESS_NEW\"; "
      "env | grep -c '^DLJOB_SUBPROCESS_REPLACED='");
  spec.env = {{"DLJOB_SUBPROCESS_REPLACED", "new value"}, {"DLJOB_SUBPROCESS_NEW", "x=y"}};
  auto r = RunProcess(spec, RealClock());
  unsetenv("DLJOB_SUBPROCESS_KEPT");
  unsetenv("DLJOB_SUBPROCESS_REPLACED");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->out, "kept new value x=y\n1\n");  // replaced, not listed twice
}

TEST(RunProcess, TimeoutKillsTheChild) {
  ProcessSpec spec = Shell("echo started; exec sleep 30");
  spec.timeout = milliseconds(300);
  auto r = RunProcess(spec, RealClock());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->signal, SIGKILL);
  EXPECT_EQ(r->exit_code, -1);
  EXPECT_EQ(r->out, "started\n");
  EXPECT_EQ(r->Describe(), "timed out and was killed");
}

TEST(RunProcess, MissingOrUnrunnableCommandIsAnError) {
  ProcessSpec spec;
  spec.argv = {"dljob-no-such-command-anywhere", "x"};
  auto r = RunProcess(spec, RealClock());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(),
            "cannot run \"dljob-no-such-command-anywhere\": No such file or directory");

  spec.argv = {"/nonexistent/dir/plugin"};
  r = RunProcess(spec, RealClock());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);

  std::string dir = ::testing::TempDir();
  std::string file = dir + "/dljob_not_executable.sh";
  std::ofstream(file) << "#!/bin/sh\necho hi\n";
  chmod(file.c_str(), 0644);
  spec.argv = {file};
  r = RunProcess(spec, RealClock());
  std::filesystem::remove(file);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Permission denied"), std::string::npos)
      << r.status().message();

  EXPECT_EQ(RunProcess(ProcessSpec{}, RealClock()).status().code(), StatusCode::kInvalidArgument);
}

TEST(RunProcess, StdinIsDevNullUnlessInherited) {
  auto r = RunProcess(Shell("cat; echo end"), RealClock());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "end\n");
}

TEST(RunProcess, StderrCanStayThisProcesss) {
  ProcessSpec spec = Shell("echo to-terminal >&2; echo out");
  spec.capture_stderr = false;
  auto r = RunProcess(spec, RealClock());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "");
}

TEST(RunProcess, OutputPastTheLimitIsCountedAndDropped) {
  ProcessSpec spec = Shell("head -c 300000 /dev/zero; head -c 70000 /dev/zero >&2");
  spec.max_output = 1000;
  auto r = RunProcess(spec, RealClock());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->succeeded());  // never blocked on a full pipe
  EXPECT_EQ(r->out.size(), 1000u);
  EXPECT_EQ(r->out_dropped, 299000u);
  EXPECT_EQ(r->err.size(), 1000u);
  EXPECT_EQ(r->err_dropped, 69000u);
}

// The mask bit of `signal` in the line "<field>:\t<hex>" of /proc/<pid>/status text.
bool StatusMaskHas(const std::string& status, const std::string& field, int signal) {
  size_t at = status.find(field + ":\t");
  if (at == std::string::npos) return true;  // fails the test's EXPECT_FALSE
  unsigned long long mask = std::stoull(status.substr(at + field.size() + 2), nullptr, 16);
  return (mask >> (signal - 1)) & 1u;
}

TEST(RunProcess, BlockedAndIgnoredSignalsAreNotHandedOn) {
  // The operator blocks SIGTERM for sigwait and the CLI ignores SIGPIPE; a child must not keep
  // either, or it could neither be stopped nor see a closed pipe.
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &term, &old), 0);
  struct sigaction ignore = {}, old_pipe = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old_pipe);
  ProcessSpec spec;
  spec.argv = {"grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"};
  auto r = RunProcess(spec, RealClock());
  sigaction(SIGPIPE, &old_pipe, nullptr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(StatusMaskHas(r->out, "SigBlk", SIGTERM)) << r->out;
  EXPECT_FALSE(StatusMaskHas(r->out, "SigIgn", SIGPIPE)) << r->out;
}

TEST(RunProcess, DoesNotWaitForAGrandchildHoldingThePipes) {
  ProcessSpec spec = Shell("sleep 20 & echo $!");
  spec.timeout = seconds(15);
  auto r = RunProcess(spec, RealClock());
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->out.empty());
  pid_t grandchild = static_cast<pid_t>(std::stol(r->out));
  kill(grandchild, SIGKILL);   // ours to stop: it was started by this test's shell
  EXPECT_FALSE(r->timed_out);  // returned when the shell ended, not after 15 s
  EXPECT_TRUE(r->succeeded());
}

}  // namespace
}  // namespace dljob
