// Elastic jobs' invariants over random clusters and traces (queue_test_util.h's MakeTrace with
// half the multi-worker jobs made elastic), for every queue variant, with and without quotas:
// an elastic job always runs between its min and max workers, every start and resize places the
// whole gang at its size, no node's GPUs and no queue's quota are ever over-committed, a job is
// never both shrunk and suspended, and a job grows only when nothing waits (so no reservation is
// ever delayed by a grow).
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "scheduler/queue/job_queue.h"
#include "scheduler/queue/queue_test_util.h"

namespace dljob::scheduler {
namespace {

using queue_testing::kVariants;
using queue_testing::MakeTrace;
using queue_testing::OptionsOf;
using queue_testing::Policy;
using queue_testing::RandomTrace;
using queue_testing::Variant;

// Half the jobs of two or more workers become elastic from a quarter of their workers (at least
// one) up to all of them.
void MakeElastic(RandomTrace& t) {
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    JobRequest& j = t.jobs[i];
    if (i % 2 == 0 && j.gang.workers >= 2) {
      j.elastic = ElasticRange{std::max<int64_t>(1, j.gang.workers / 4), j.gang.workers};
    }
  }
}

TEST(ElasticProperty, SizesQuotasAndNodesHoldOverRandomTraces) {
  auto policy = Policy("first-fit");
  int64_t grows = 0, shrinks = 0, elastic_starts_below_max = 0;
  for (uint32_t seed = 1; seed <= 120; ++seed) {
    const bool quotas = seed % 2 == 0;
    RandomTrace t = MakeTrace(seed, quotas);
    MakeElastic(t);
    std::map<std::string, JobRequest> by_name;
    for (const JobRequest& j : t.jobs) by_name[j.name] = j;
    std::map<std::string, QueueQuota> quota;
    for (const QueueSpec& s : t.queues) quota[s.name] = s.quotas.at("");
    for (const Variant& v : kVariants) {
      SCOPED_TRACE(std::string(v.name) + " seed " + std::to_string(seed));
      QueueOptions options = OptionsOf(v, seed % 3 == 0);
      options.grow_after = 20;
      JobQueue q(t.queues, *policy, options);
      q.SetNodes(t.nodes);
      std::map<std::string, Placement> placed;  // the running jobs, as the decisions left them
      auto check_size = [&](const std::string& job, const Placement& p) {
        const JobRequest& r = by_name[job];
        const auto n = static_cast<int64_t>(p.worker_nodes.size());
        const int64_t min = r.elastic ? r.elastic->min_workers : r.gang.workers;
        EXPECT_GE(n, min) << job;
        EXPECT_LE(n, r.gang.workers) << job;
      };
      queue_testing::Replay(
          q, t.jobs,
          [&](const JobQueue& queue, const Decision& d, int64_t,
              const std::set<std::string>& running) {
            for (auto it = placed.begin(); it != placed.end();) {
              it = running.count(it->first) ? std::next(it) : placed.erase(it);
            }
            std::set<std::string> suspended;
            for (const PreemptAction& p : d.preempt) {
              suspended.insert(p.job);
              placed.erase(p.job);
            }
            bool grew = false;
            for (const ResizeAction& r : d.resize) {
              EXPECT_FALSE(suspended.count(r.job)) << r.job << " both shrunk and suspended";
              EXPECT_EQ(static_cast<int64_t>(r.placement.worker_nodes.size()), r.to_workers);
              EXPECT_NE(r.from_workers, r.to_workers);
              ASSERT_TRUE(placed.count(r.job)) << r.job << " resized but not running";
              EXPECT_EQ(static_cast<int64_t>(placed[r.job].worker_nodes.size()), r.from_workers);
              check_size(r.job, r.placement);
              if (r.to_workers > r.from_workers) {
                grew = true;
                ++grows;
                // A grow keeps every worker where it was.
                const std::vector<std::string>& before = placed[r.job].worker_nodes;
                EXPECT_TRUE(
                    std::equal(before.begin(), before.end(), r.placement.worker_nodes.begin()));
              } else {
                ++shrinks;
                EXPECT_FALSE(r.for_job.empty());
              }
              placed[r.job] = r.placement;
            }
            for (const StartAction& s : d.start) {
              check_size(s.job, s.placement);
              const JobRequest& r = by_name[s.job];
              if (r.elastic &&
                  static_cast<int64_t>(s.placement.worker_nodes.size()) < r.gang.workers) {
                ++elastic_starts_below_max;
              }
              placed[s.job] = s.placement;
            }
            if (grew) {  // nothing waits, so no reservation can be delayed
              EXPECT_EQ(queue.pending_count(), 0u);
              EXPECT_FALSE(d.reservation);
            }
            // The queue's nodes count exactly the placements, within what each node has.
            std::map<std::string, int64_t> node_used;
            std::map<std::string, int64_t> queue_used;
            for (const auto& [job, p] : placed) {
              const int64_t w = by_name[job].gang.per_worker.gpus;
              for (const std::string& n : p.worker_nodes) node_used[n] += w;
              const int64_t g = w * static_cast<int64_t>(p.worker_nodes.size());
              queue_used[by_name[job].queue] += g;
            }
            for (const Node& n : queue.nodes()) {
              EXPECT_EQ(n.used.gpus, node_used[n.name]) << n.name;
              EXPECT_LE(n.used.gpus, n.allocatable.gpus) << n.name;
            }
            for (const auto& [name, used] : queue_used) {
              EXPECT_LE(used, quota[name].nominal + quota[name].borrowing_limit) << name;
            }
          });
    }
  }
  // The traces do exercise every rule.
  EXPECT_GT(grows, 30);  // a grow needs the very GPUs it takes idle for grow_after
  EXPECT_GT(shrinks, 20);
  EXPECT_GT(elastic_starts_below_max, 50);
}

// Rigid traces give the same decisions with elastic support in the queue as the same trace
// whose jobs carry a range of one size (min = max): an elastic range of one size is rigid.
TEST(ElasticProperty, ARangeOfOneSizeIsRigid) {
  auto policy = Policy("first-fit");
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    RandomTrace t = MakeTrace(seed, seed % 2 == 0);
    RandomTrace fixed = t;
    for (JobRequest& j : fixed.jobs) j.elastic = ElasticRange{j.gang.workers, j.gang.workers};
    for (const Variant& v : kVariants) {
      SCOPED_TRACE(std::string(v.name) + " seed " + std::to_string(seed));
      std::vector<std::string> logs[2];
      for (int k = 0; k < 2; ++k) {
        JobQueue q(t.queues, *policy, OptionsOf(v, true));
        q.SetNodes(t.nodes);
        queue_testing::Replay(
            q, k == 0 ? t.jobs : fixed.jobs,
            [&](const JobQueue&, const Decision& d, int64_t now, const std::set<std::string>&) {
              EXPECT_TRUE(d.resize.empty());
              for (const StartAction& s : d.start) {
                logs[k].push_back(std::to_string(now) + " start " + s.job);
              }
              for (const PreemptAction& p : d.preempt) {
                logs[k].push_back(std::to_string(now) + " " + p.reason);
              }
            });
      }
      EXPECT_EQ(logs[0], logs[1]);
    }
  }
}

}  // namespace
}  // namespace dljob::scheduler
