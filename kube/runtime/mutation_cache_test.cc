// MutationCache: a pass reads its own write back until the informer's copy catches up.
#include "kube/runtime/mutation_cache.h"

#include <gtest/gtest.h>

namespace dljob::kube {
namespace {

nlohmann::json Job(const std::string& rv, const std::string& phase) {
  return {{"metadata", {{"namespace", "ns"}, {"name", "a"}, {"resourceVersion", rv}}},
          {"status", {{"phase", phase}}}};
}

TEST(MutationCacheTest, AWriteIsReadBackUntilTheCacheCatchesUp) {
  MutationCache cache;
  EXPECT_EQ(cache.Newer("ns/a", Job("7", "Queued")), Job("7", "Queued"));  // nothing written
  cache.Wrote(Job("8", "Scheduled"));
  EXPECT_EQ(cache.size(), 1u);
  // The informer still has version 7: the pass starts from what the write returned.
  EXPECT_EQ(cache.Newer("ns/a", Job("7", "Queued")), Job("8", "Scheduled"));
  EXPECT_EQ(cache.Newer("ns/a", Job("7", "Queued")), Job("8", "Scheduled"));
  // Version 8 arrived: the cache is the truth again, and the entry goes.
  EXPECT_EQ(cache.Newer("ns/a", Job("8", "Scheduled")), Job("8", "Scheduled"));
  EXPECT_EQ(cache.size(), 0u);
}

TEST(MutationCacheTest, ANewerVersionFromSomeoneElseWins) {
  MutationCache cache;
  cache.Wrote(Job("8", "Scheduled"));
  // Another writer's version 12 came through the watch: ours is older, forgotten.
  EXPECT_EQ(cache.Newer("ns/a", Job("12", "Running")), Job("12", "Running"));
  EXPECT_EQ(cache.size(), 0u);
  // 10 > 9 as numbers, not as strings.
  cache.Wrote(Job("10", "Running"));
  EXPECT_EQ(cache.Newer("ns/a", Job("9", "Scheduled")), Job("10", "Running"));
}

TEST(MutationCacheTest, VersionsThatAreNotNumbersNeverCountAsNewer) {
  MutationCache cache;
  cache.Wrote(Job("abc", "Scheduled"));
  EXPECT_EQ(cache.size(), 0u);
  cache.Wrote(Job("8", "Scheduled"));
  EXPECT_EQ(cache.Newer("ns/a", Job("x7", "Queued")), Job("x7", "Queued"));
  EXPECT_EQ(cache.size(), 0u);
}

TEST(MutationCacheTest, ObservedTellsTheEventOfTheWriteItselfAndForgetsIt) {
  MutationCache cache;
  EXPECT_FALSE(cache.Observed(Job("8", "Scheduled")));  // nothing written
  cache.Wrote(Job("8", "Scheduled"));
  EXPECT_FALSE(cache.Observed(Job("7", "Queued")));  // an older event: still behind
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_TRUE(cache.Observed(Job("8", "Scheduled")));  // our write came back
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_FALSE(cache.Observed(Job("8", "Scheduled")));  // once
  // Someone else's newer version: not ours, and ours is forgotten all the same.
  cache.Wrote(Job("9", "Running"));
  EXPECT_FALSE(cache.Observed(Job("10", "Running")));
  EXPECT_EQ(cache.size(), 0u);
}

TEST(MutationCacheTest, ForgetDropsADeletedObject) {
  MutationCache cache;
  cache.Wrote(Job("8", "Scheduled"));
  cache.Forget("ns/a");
  EXPECT_EQ(cache.Newer("ns/a", Job("7", "Queued")), Job("7", "Queued"));
}

}  // namespace
}  // namespace dljob::kube
