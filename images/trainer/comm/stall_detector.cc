#include "images/trainer/comm/stall_detector.h"

#include <algorithm>
#include <cstdio>

namespace dljob::trainer {
namespace {

std::string Seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof(text), s < 10 ? "%.1f s" : "%.0f s", s);
  return text;
}

std::string Where(const ProgressRecord& r) {
  std::string where = r.step > 0 ? "at step " + std::to_string(r.step) : "before training";
  if (r.what.empty()) return where;
  return where + (r.waiting ? " in " : " after ") + r.what;
}

std::string Describe(const MissingRank& m) {
  const std::string rank = "rank " + std::to_string(m.rank);
  switch (m.reason) {
    case MissingReason::kNeverHeard:
      return rank + " has not joined and has sent no heartbeat in " +
             Seconds(m.status.silent_seconds) + " (not started, stopped, or unreachable)";
    case MissingReason::kSilent:
      return rank + " has sent no heartbeat for " + Seconds(m.status.silent_seconds) +
             " (stopped, killed or unreachable; last heard " + Where(m.status.last) + ")";
    case MissingReason::kNotJoined:
      break;
  }
  return rank + " has not joined (last heard " + Seconds(m.status.silent_seconds) + " ago, " +
         Where(m.status.last) + ")";
}

}  // namespace

std::vector<MissingRank> FindMissingRanks(const ProgressRecord& self,
                                          const std::vector<PeerStatus>& peers,
                                          double silence_limit_seconds) {
  std::vector<MissingRank> missing;
  for (size_t r = 0; r < peers.size(); ++r) {
    if (static_cast<int>(r) == self.rank) continue;
    const PeerStatus& p = peers[r];
    MissingRank m{static_cast<int>(r), MissingReason::kNotJoined, p};
    if (!p.heard) {
      m.reason = MissingReason::kNeverHeard;
    } else if (p.silent_seconds > silence_limit_seconds) {
      m.reason = MissingReason::kSilent;
    } else if (p.last.collectives >= self.collectives) {
      continue;  // joined this collective (or passed it, as a broadcast's root may) and alive
    }
    missing.push_back(std::move(m));
  }
  return missing;
}

StallDecision DecideStall(double waited_seconds, double timeout_seconds,
                          double silence_limit_seconds, bool anyone_missing) {
  if (waited_seconds < timeout_seconds) return StallDecision::kKeepWaiting;
  if (anyone_missing || waited_seconds >= timeout_seconds + silence_limit_seconds) {
    return StallDecision::kGiveUp;
  }
  return StallDecision::kKeepWaiting;
}

std::string FormatStallMessage(const ProgressRecord& self, double waited_seconds,
                               const std::vector<MissingRank>& missing) {
  std::string text = "dljob-train: rank " + std::to_string(self.rank) + " waited " +
                     Seconds(waited_seconds) + " in " +
                     (self.what.empty() ? std::string("a collective") : self.what);
  if (self.step > 0) text += " (step " + std::to_string(self.step) + ")";
  text += ": ";
  if (missing.empty()) {
    text +=
        "every rank has joined and is alive, yet the collective does not finish (check the "
        "network and the MPI transport)";
  }
  for (size_t i = 0; i < missing.size(); ++i) {
    if (i > 0) text += "; ";
    text += Describe(missing[i]);
  }
  return text + "; exiting";
}

double HeartbeatSeconds(double timeout_seconds) {
  return std::clamp(timeout_seconds / 5, 0.05, 1.0);
}

double SilenceLimitSeconds(double timeout_seconds) { return 3 * HeartbeatSeconds(timeout_seconds); }

}  // namespace dljob::trainer
