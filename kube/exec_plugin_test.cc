// ExecTokenSource over a scripted fetch (no processes: the unit tier). The real plugin, run
// through HttpApi, is in exec_plugin_loopback_test.cc.
#include "kube/exec_plugin.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/testing/fake_clock.h"

namespace dljob::kube {
namespace {

using dljob::testing::FakeClock;
using std::chrono::minutes;
using std::chrono::seconds;

// A fetch that hands out "token-1", "token-2", … expiring `ttl` after the clock's now (no expiry
// when ttl is zero), or fails while `fail` is set. Counts its runs.
struct ScriptedPlugin {
  FakeClock& clock;
  Clock::Duration ttl{};
  bool fail = false;
  int runs = 0;

  ExecTokenSource::Fetch Fetch() {
    return [this]() -> Result<ExecCredential> {
      ++runs;
      if (fail) return Status::Unavailable("plugin failed " + std::to_string(runs));
      ExecCredential c;
      c.token = "token-" + std::to_string(runs);
      if (ttl != Clock::Duration::zero()) c.expiration = clock.Now() + ttl;
      return c;
    };
  }
};

TEST(ExecTokenSource, KeptUntilItsExpiryThenFetchedAgain) {
  FakeClock clock;
  ScriptedPlugin plugin{clock, minutes(15)};
  ExecTokenSource source(plugin.Fetch(), clock);
  EXPECT_EQ(plugin.runs, 0);  // lazily: the first Token() runs it
  EXPECT_EQ(*source.Token(), "token-1");
  clock.Advance(minutes(15) - seconds(1));
  EXPECT_EQ(*source.Token(), "token-1");
  EXPECT_EQ(plugin.runs, 1);
  clock.Advance(seconds(1));  // the expiry itself: expired
  EXPECT_EQ(*source.Token(), "token-2");
  EXPECT_EQ(*source.Token(), "token-2");
  EXPECT_EQ(plugin.runs, 2);
}

TEST(ExecTokenSource, NoExpiryIsKeptUntilTheServerRefusesIt) {
  FakeClock clock;
  ScriptedPlugin plugin{clock};
  ExecTokenSource source(plugin.Fetch(), clock);
  EXPECT_EQ(*source.Token(), "token-1");
  clock.Advance(std::chrono::hours(24 * 365));
  EXPECT_EQ(*source.Token(), "token-1");
  source.Invalidate("token-0");  // an older token: someone refreshed already
  EXPECT_EQ(*source.Token(), "token-1");
  source.Invalidate("token-1");
  EXPECT_EQ(*source.Token(), "token-2");
  EXPECT_EQ(plugin.runs, 2);
}

TEST(ExecTokenSource, AFirstCredentialIsUsedUntilItExpires) {
  FakeClock clock;
  ScriptedPlugin plugin{clock, minutes(1)};
  ExecCredential first;
  first.token = "from-make-api";
  first.expiration = clock.Now() + minutes(5);
  ExecTokenSource source(plugin.Fetch(), clock, first);
  EXPECT_EQ(*source.Token(), "from-make-api");
  clock.Advance(minutes(5));
  EXPECT_EQ(*source.Token(), "token-1");
}

TEST(ExecTokenSource, AFailureIsReturnedAndNotKept) {
  FakeClock clock;
  ScriptedPlugin plugin{clock};
  plugin.fail = true;
  ExecTokenSource source(plugin.Fetch(), clock);
  auto t = source.Token();
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "plugin failed 1");
  EXPECT_EQ(source.Token().status().message(), "plugin failed 2");  // tried again
  plugin.fail = false;
  EXPECT_EQ(*source.Token(), "token-3");
}

// Callers that arrive while the plugin runs wait for that run and share its outcome, a token or
// an error: the plugin runs once, not once per caller.
class ExecTokenSourceConcurrency : public ::testing::TestWithParam<bool> {};

TEST_P(ExecTokenSourceConcurrency, OneRunServesEveryWaitingCaller) {
  const bool fail = GetParam();
  FakeClock clock;
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> runs{0};
  ExecTokenSource source(
      [&]() -> Result<ExecCredential> {
        ++runs;
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return release; });
        if (fail) return Status::Unavailable("denied");
        return ExecCredential{"shared", std::nullopt, "", ""};
      },
      clock);
  constexpr int kCallers = 8;
  std::vector<std::string> got(kCallers);
  std::vector<std::thread> threads;
  auto call = [&](int i) {
    auto t = source.Token();
    got[i] = t.ok() ? *t : t.status().message();
  };
  threads.emplace_back(call, 0);
  while (runs.load() == 0) std::this_thread::yield();  // the first caller is in the plugin
  for (int i = 1; i < kCallers; ++i) threads.emplace_back(call, i);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let them queue on the run
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kCallers; ++i) EXPECT_EQ(got[i], fail ? "denied" : "shared") << i;
  EXPECT_EQ(runs.load(), 1);
}

INSTANTIATE_TEST_SUITE_P(SuccessAndFailure, ExecTokenSourceConcurrency, ::testing::Bool());

}  // namespace
}  // namespace dljob::kube
