#include "images/trainer/comm/mpi_stall_watchdog.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>

#include "images/trainer/comm/mpi_collective.h"
#include "images/trainer/comm/stall_detector.h"

namespace dljob::trainer {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kTag = 7;
constexpr int64_t kBeat = 1;
constexpr int64_t kFarewell = 2;

double Since(Clock::time_point t, Clock::time_point now) {
  return std::chrono::duration<double>(now - t).count();
}

}  // namespace

struct MpiStallWatchdog::Wire {
  int64_t kind = 0;
  int64_t collectives = 0;
  int64_t step = 0;
  int64_t waiting = 0;
  char what[96] = {0};
};

struct MpiStallWatchdog::Peer {
  Wire in;
  Wire out;
  MPI_Request recv = MPI_REQUEST_NULL;
  MPI_Request send = MPI_REQUEST_NULL;
  bool farewell_sent = false;
  bool farewell_heard = false;
  bool heard = false;
  ProgressRecord last;
  Clock::time_point heard_at{};
};

Result<std::unique_ptr<MpiStallWatchdog>> MpiStallWatchdog::Start(MPI_Comm world,
                                                                  const WatchedCollective& progress,
                                                                  double timeout_seconds,
                                                                  int exit_code) {
  int level = 0;
  MPI_Query_thread(&level);
  if (level != MPI_THREAD_MULTIPLE) {
    return Status::FailedPrecondition(
        "the stall detector needs MPI initialised with MPI_THREAD_MULTIPLE");
  }
  MPI_Comm comm = MPI_COMM_NULL;
  if (Status s = MpiStatus("MPI_Comm_dup", MPI_Comm_dup(world, &comm)); !s.ok()) return s;
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  std::unique_ptr<MpiStallWatchdog> watchdog(
      new MpiStallWatchdog(comm, progress, timeout_seconds, exit_code));
  watchdog->thread_ = std::thread(&MpiStallWatchdog::Run, watchdog.get());
  return watchdog;
}

MpiStallWatchdog::MpiStallWatchdog(MPI_Comm comm, const WatchedCollective& progress,
                                   double timeout_seconds, int exit_code)
    : comm_(comm),
      progress_(progress),
      timeout_seconds_(timeout_seconds),
      exit_code_(exit_code),
      started_(Clock::now()) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  peers_.resize(static_cast<size_t>(size_));  // fixed from here: requests point into it
}

MpiStallWatchdog::~MpiStallWatchdog() { Stop(); }

void MpiStallWatchdog::Stop() {
  {
    MutexLock lock(mutex_);
    if (stop_) return;
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  MPI_Comm_free(&comm_);
}

void MpiStallWatchdog::Run() {
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    Peer& p = peers_[static_cast<size_t>(r)];
    MPI_Irecv(&p.in, sizeof(Wire), MPI_BYTE, r, kTag, comm_, &p.recv);
  }
  const auto period = std::chrono::duration<double>(HeartbeatSeconds(timeout_seconds_));
  while (true) {
    Receive();
    Beat(/*farewell=*/false);
    CheckStall();
    MutexLock lock(mutex_);
    if (wake_.wait_for(mutex_, period, [this]() REQUIRES(mutex_) { return stop_; })) break;
  }
  // A rank unwinding from an exception is about to abort the job: no farewell to wait for.
  if (std::uncaught_exceptions() == 0) Farewell();
}

// Sends this rank's record to every peer whose previous message has left (one in flight each).
void MpiStallWatchdog::Beat(bool farewell) {
  const WatchedCollective::Progress now = progress_.Snapshot();
  for (int r = 0; r < size_; ++r) {
    Peer& p = peers_[static_cast<size_t>(r)];
    if (r == rank_ || p.farewell_sent) continue;
    int done = 1;
    if (p.send != MPI_REQUEST_NULL) MPI_Test(&p.send, &done, MPI_STATUS_IGNORE);
    if (!done) continue;
    p.out = Wire{farewell ? kFarewell : kBeat,
                 now.record.collectives,
                 now.record.step,
                 now.record.waiting ? 1 : 0,
                 {0}};
    std::strncpy(p.out.what, now.record.what.c_str(), sizeof(p.out.what) - 1);
    MPI_Isend(&p.out, sizeof(Wire), MPI_BYTE, r, kTag, comm_, &p.send);
    p.farewell_sent = farewell;
  }
}

void MpiStallWatchdog::Receive() {
  for (int r = 0; r < size_; ++r) {
    Peer& p = peers_[static_cast<size_t>(r)];
    while (p.recv != MPI_REQUEST_NULL) {
      int done = 0;
      MPI_Test(&p.recv, &done, MPI_STATUS_IGNORE);
      if (!done) break;
      p.heard = true;
      p.heard_at = Clock::now();
      p.in.what[sizeof(p.in.what) - 1] = '\0';
      p.last = ProgressRecord{r, p.in.collectives, p.in.waiting != 0, p.in.step, p.in.what};
      if (p.in.kind == kFarewell) {
        p.farewell_heard = true;  // the peer sends nothing more: do not post another receive
        break;
      }
      MPI_Irecv(&p.in, sizeof(Wire), MPI_BYTE, r, kTag, comm_, &p.recv);
    }
  }
}

void MpiStallWatchdog::CheckStall() {
  const WatchedCollective::Progress self = progress_.Snapshot();
  if (!self.record.waiting) return;
  const Clock::time_point now = Clock::now();
  const double waited = Since(self.since, now);
  if (waited < timeout_seconds_) return;
  std::vector<PeerStatus> peers(static_cast<size_t>(size_));
  for (size_t r = 0; r < peers.size(); ++r) {
    const Peer& p = peers_[r];
    peers[r] = PeerStatus{p.heard, p.last, Since(p.heard ? p.heard_at : started_, now)};
  }
  const double silence = SilenceLimitSeconds(timeout_seconds_);
  const std::vector<MissingRank> missing = FindMissingRanks(self.record, peers, silence);
  if (DecideStall(waited, timeout_seconds_, silence, !missing.empty()) ==
      StallDecision::kKeepWaiting) {
    return;
  }
  const std::string message = FormatStallMessage(self.record, waited, missing);
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, exit_code_);
}

// Every heartbeat in flight is matched before MPI_Comm_free: each rank sends a farewell after
// its last beat and keeps receiving until every peer's farewell has arrived. Peers that never
// say goodbye (they failed) are given up on after a deadline.
void MpiStallWatchdog::Farewell() {
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(std::max(10.0, 2 * timeout_seconds_)));
  while (Clock::now() < deadline) {
    Receive();
    Beat(/*farewell=*/true);
    bool finished = true;
    for (int r = 0; r < size_; ++r) {
      Peer& p = peers_[static_cast<size_t>(r)];
      if (r == rank_) continue;
      int sent = 1;
      if (p.send != MPI_REQUEST_NULL) MPI_Test(&p.send, &sent, MPI_STATUS_IGNORE);
      finished = finished && p.farewell_sent && sent && p.farewell_heard;
    }
    if (finished) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::fprintf(stderr,
               "dljob-train: warning: rank %d: some ranks did not finish together; "
               "exiting without waiting for them\n",
               rank_);
  for (Peer& p : peers_) {
    if (p.recv == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&p.recv);
    MPI_Request_free(&p.recv);
  }
}

}  // namespace dljob::trainer
