// Property tests of the queue core over random clusters and traces (fixed seeds): every job ends
// in a finite trace, quotas hold at every start, backfill never delays the head's reservation,
// preemption takes whole gangs and only for a job that then starts, and the same input gives the
// same decisions.
#include <map>
#include <random>
#include <set>
#include <sstream>

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

TEST(JobQueueProperty, EveryJobEndsInAFiniteTrace) {
  for (const char* placement : {"first-fit", "dljob"}) {
    auto policy = Policy(placement);
    for (uint32_t seed = 1; seed <= 40; ++seed) {
      RandomTrace t = MakeTrace(seed, false);
      for (const Variant& v : kVariants) {
        SCOPED_TRACE(std::string(placement) + " " + v.name + " seed " + std::to_string(seed));
        JobQueue q(t.queues, *policy, OptionsOf(v, seed % 2));
        q.SetNodes(t.nodes);
        auto out = queue_testing::Replay(
            q, t.jobs,
            [](const JobQueue&, const Decision&, int64_t, const std::set<std::string>&) {});
        for (const JobRequest& j : t.jobs) EXPECT_TRUE(out[j.name].end) << j.name << " never ended";
        EXPECT_EQ(q.pending_count() + q.running_count(), 0u);
      }
    }
  }
}

// After every pass: the queue's nodes count exactly the running jobs' workers (so a preempted
// gang left as a whole), never more than a node has; each preemption's beneficiary started in
// the same pass.
TEST(JobQueueProperty, PreemptionTakesWholeGangsAndOnlyForAJobThatStarts) {
  auto policy = Policy("first-fit");
  int preemptions = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    RandomTrace t = MakeTrace(seed, seed % 2);
    std::map<std::string, JobRequest> by_name;
    for (const JobRequest& j : t.jobs) by_name[j.name] = j;
    for (const Variant& v : kVariants) {
      if (!v.preemption) continue;
      SCOPED_TRACE(std::string(v.name) + " seed " + std::to_string(seed));
      JobQueue q(t.queues, *policy, OptionsOf(v, false));
      q.SetNodes(t.nodes);
      std::map<std::string, Placement> placed;
      queue_testing::Replay(
          q, t.jobs,
          [&](const JobQueue& queue, const Decision& d, int64_t,
              const std::set<std::string>& running) {
            std::set<std::string> started;
            for (const StartAction& s : d.start) started.insert(s.job);
            for (const PreemptAction& p : d.preempt) {
              ++preemptions;
              EXPECT_TRUE(started.count(p.for_job)) << p.job << " for " << p.for_job;
              EXPECT_TRUE(running.count(p.job)) << p.job;
              placed.erase(p.job);
            }
            for (const StartAction& s : d.start) placed[s.job] = s.placement;
            for (auto it = placed.begin(); it != placed.end();) {
              it = running.count(it->first) || started.count(it->first) ? std::next(it)
                                                                        : placed.erase(it);
            }
            std::map<std::string, int64_t> used;
            for (const auto& [name, p] : placed) {
              EXPECT_EQ(static_cast<int64_t>(p.worker_nodes.size()), by_name[name].gang.workers);
              for (const std::string& n : p.worker_nodes) {
                used[n] += by_name[name].gang.per_worker.gpus;
              }
            }
            for (const Node& n : queue.nodes()) {
              EXPECT_EQ(n.used.gpus, used[n.name]) << n.name;
              EXPECT_LE(n.used.gpus, n.allocatable.gpus) << n.name;
            }
          });
    }
  }
  EXPECT_GT(preemptions, 20);  // the traces do exercise preemption
}

TEST(JobQueueProperty, QuotasHoldAndBorrowingTakesOnlyIdleQuota) {
  auto policy = Policy("first-fit");
  int borrowed_starts = 0;
  for (uint32_t seed = 1; seed <= 80; ++seed) {
    RandomTrace t = MakeTrace(seed, true);
    std::map<std::string, JobRequest> by_name;
    for (const JobRequest& j : t.jobs) by_name[j.name] = j;
    // Half the traces put c in a cohort of its own: it borrows from no one and lends to no one.
    if (seed % 2) t.queues[2].cohort = "solo";
    std::map<std::string, QueueQuota> quota;
    std::map<std::string, std::string> cohort_of;  // queue -> cohort
    std::map<std::string, int64_t> cohort_nominal;
    for (const QueueSpec& s : t.queues) {
      quota[s.name] = s.quotas.at("");
      cohort_of[s.name] = s.cohort;
      cohort_nominal[s.cohort] += quota[s.name].nominal;
    }
    for (const Variant& v : kVariants) {
      SCOPED_TRACE(std::string(v.name) + " seed " + std::to_string(seed));
      JobQueue q(t.queues, *policy, OptionsOf(v, seed % 3 == 0));
      q.SetNodes(t.nodes);
      queue_testing::Replay(
          q, t.jobs,
          [&](const JobQueue&, const Decision& d, int64_t, const std::set<std::string>& running) {
            std::map<std::string, int64_t> used, cohort_used;
            auto add = [&](const std::string& job, int sign) {
              const int64_t g = sign * GangGpus(by_name[job].gang);
              used[by_name[job].queue] += g;
              cohort_used[cohort_of[by_name[job].queue]] += g;
            };
            for (const std::string& r : running) add(r, +1);
            // Replay the pass in its order: each preemption just before its beneficiary starts.
            for (const StartAction& s : d.start) {
              for (const PreemptAction& p : d.preempt) {
                if (p.for_job == s.job) add(p.job, -1);
              }
              const std::string& queue = by_name[s.job].queue;
              const int64_t g = GangGpus(by_name[s.job].gang);
              EXPECT_LE(used[queue] + g, quota[queue].nominal + quota[queue].borrowing_limit)
                  << s.job;
              if (used[queue] + g > quota[queue].nominal) {
                ++borrowed_starts;
                const std::string& cohort = cohort_of[queue];
                EXPECT_LE(cohort_used[cohort] + g, cohort_nominal[cohort])
                    << s.job << " borrowed non-idle quota of cohort \"" << cohort << "\"";
              }
              add(s.job, +1);
            }
          });
    }
  }
  EXPECT_GT(borrowed_starts, 20);  // the traces do borrow
}

// A random cluster mid-run: jobs running since random times (some without a time limit) and a
// queue of pending jobs. A pass with backfill must leave the head's reservation no later than
// it was: once the backfilled jobs run, the head alone still gets a reservation at or before it.
TEST(JobQueueProperty, BackfillNeverDelaysTheHeadsReservation) {
  for (const char* placement : {"first-fit", "best-fit", "dljob"}) {
    auto policy = Policy(placement);
    int checked = 0, backfilled = 0;
    for (uint32_t seed = 1; seed <= 300; ++seed) {
      SCOPED_TRACE(std::string(placement) + " seed " + std::to_string(seed));
      std::mt19937 rng(seed);
      RandomTrace t = MakeTrace(seed, false);
      const int64_t now = 1000;
      // Fill the cluster: a greedy pass over half the jobs.
      QueueOptions greedy;
      greedy.backfill = Backfill::kGreedy;
      greedy.preemption = false;
      JobQueue filler({UnlimitedQueue()}, *policy, greedy);
      filler.SetNodes(t.nodes);
      std::vector<JobSnapshot> snapshot;
      std::map<std::string, JobRequest> by_name;
      for (size_t i = 0; i < t.jobs.size(); ++i) {
        JobRequest r = t.jobs[i];
        r.queue = kDefaultQueue;
        if (rng() % 2)
          r.time_limit.reset();
        else
          r.time_limit = 1 + rng() % 500;
        by_name[r.name] = r;
        if (i % 2 == 0) {
          ASSERT_TRUE(filler.AddPending(r).ok());
        } else {
          snapshot.push_back({r, {}, std::nullopt, 0});
        }
      }
      for (const StartAction& s : filler.Schedule(0).start) {
        JobSnapshot running{by_name[s.job], {}, s.placement, now - int64_t(rng() % 400)};
        snapshot.push_back(running);
      }
      QueueOptions easy;
      easy.preemption = false;
      Result<Decision> d1 =
          ScheduleSnapshot({UnlimitedQueue()}, snapshot, filler.nodes(), now, *policy, easy);
      ASSERT_TRUE(d1.ok()) << d1.status().message();
      if (!d1->reservation) continue;
      const std::string head = d1->reservation->job;
      // The head alone, with the backfilled jobs running.
      std::vector<JobSnapshot> after;
      std::vector<Node> nodes = filler.nodes();
      for (const JobSnapshot& s : snapshot) {
        if (s.placement || s.request.name == head) after.push_back(s);
      }
      for (const StartAction& s : d1->start) {
        backfilled += s.backfilled;  // the others started ahead of the head
        after.push_back({by_name[s.job], {}, s.placement, now});
        for (const std::string& n : s.placement.worker_nodes) {
          for (Node& node : nodes) {
            if (node.name != n) continue;
            node.used.gpus += by_name[s.job].gang.per_worker.gpus;
            node.used.cpu_milli += by_name[s.job].gang.per_worker.cpu_milli;
            node.used.memory_mib += by_name[s.job].gang.per_worker.memory_mib;
            node.used.pods += 1;
          }
        }
      }
      Result<Decision> d2 = ScheduleSnapshot({UnlimitedQueue()}, after, nodes, now, *policy, easy);
      ASSERT_TRUE(d2.ok()) << d2.status().message();
      ASSERT_TRUE(d2->reservation) << head;
      EXPECT_EQ(d2->reservation->job, head);
      if (d1->reservation->time) {
        ASSERT_TRUE(d2->reservation->time) << head << " lost its reservation time";
        EXPECT_LE(*d2->reservation->time, *d1->reservation->time) << head;
      }
      ++checked;
    }
    EXPECT_GT(checked, 100) << placement;
    EXPECT_GT(backfilled, 50) << placement;
  }
}

std::string Trace(const Decision& d) {
  std::ostringstream out;
  for (const PreemptAction& p : d.preempt) out << "-" << p.job << ">" << p.for_job << " ";
  for (const StartAction& s : d.start) {
    out << "+" << s.job << "@";
    for (const std::string& n : s.placement.worker_nodes) out << n << ",";
    out << " ";
  }
  return out.str();
}

TEST(JobQueueProperty, SameInputSameDecisionsWithOrWithoutExplanations) {
  auto policy = Policy("dljob");
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    RandomTrace t = MakeTrace(seed, seed % 2);
    for (const Variant& v : kVariants) {
      std::vector<std::string> runs[3];
      for (int run = 0; run < 3; ++run) {
        JobQueue q(t.queues, *policy, OptionsOf(v, run == 2));
        q.SetNodes(t.nodes);
        queue_testing::Replay(
            q, t.jobs,
            [&](const JobQueue&, const Decision& d, int64_t now, const std::set<std::string>&) {
              runs[run].push_back(std::to_string(now) + ": " + Trace(d));
            });
      }
      EXPECT_EQ(runs[0], runs[1]) << v.name << " seed " << seed;
      EXPECT_EQ(runs[0], runs[2]) << v.name << " seed " << seed;
    }
  }
}

}  // namespace
}  // namespace dljob::scheduler
