// The stall detector's decisions: who is missing from a collective, and what to tell the user.
//
// Every rank keeps a ProgressRecord of itself (WatchedCollective, comm/watched_collective.h) and
// sends it to every other rank as a heartbeat over a side channel that does not depend on the
// collective that may be stuck (MpiStallWatchdog, comm/mpi_stall_watchdog.h). When a rank has
// waited in one collective longer than the stall timeout, it looks at the last record it has
// from each peer:
//   - a peer that has entered fewer collectives than this rank has not joined this one (it is
//     computing, stuck elsewhere, or issuing a different sequence of collectives);
//   - a peer silent for longer than the silence limit is stopped, dead or cut off, wherever it
//     was;
//   - a peer never heard from at all is reported as such.
// If nobody is missing (every peer joined and is alive) the wait continues for one more silence
// limit before giving up, so that a peer that stopped just before its heartbeat is recognised.
//
// Pure functions of their arguments; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dljob::trainer {

struct ProgressRecord {
  int rank = 0;
  int64_t collectives = 0;  // collective operations entered so far
  bool waiting = false;     // inside collective number `collectives` now
  int64_t step = 0;         // training step (0: before training)
  std::string what;         // e.g. "allreduce of gradient bucket 3 of 7"
};

struct PeerStatus {
  bool heard = false;           // any heartbeat received
  ProgressRecord last;          // the latest record, when heard
  double silent_seconds = 0.0;  // since the latest heartbeat (since starting, if never heard)
};

enum class MissingReason { kNotJoined, kSilent, kNeverHeard };

struct MissingRank {
  int rank = 0;
  MissingReason reason = MissingReason::kNotJoined;
  PeerStatus status;
};

// REQUIRES: self.waiting; peers[r] describes rank r (the entry for self.rank is ignored).
std::vector<MissingRank> FindMissingRanks(const ProgressRecord& self,
                                          const std::vector<PeerStatus>& peers,
                                          double silence_limit_seconds);

enum class StallDecision { kKeepWaiting, kGiveUp };

StallDecision DecideStall(double waited_seconds, double timeout_seconds,
                          double silence_limit_seconds, bool anyone_missing);

// "dljob-train: rank 0 waited 30 s in allreduce of gradient bucket 3 of 7 (step 120): rank 1 has
// not joined (last heard 0.4 s ago, at step 119 after allreduce of loss); exiting"
std::string FormatStallMessage(const ProgressRecord& self, double waited_seconds,
                               const std::vector<MissingRank>& missing);

// Heartbeat period for a stall timeout: a fifth of it, between 50 ms and 1 s.
double HeartbeatSeconds(double timeout_seconds);
// Silence that marks a peer as stopped: three heartbeat periods.
double SilenceLimitSeconds(double timeout_seconds);

}  // namespace dljob::trainer
