// MpiStallWatchdog: ends a job whose ranks wait in a collective that some rank never joins, and
// says which rank and where, instead of hanging forever.
//
// One per rank. Its thread, every heartbeat period (comm/stall_detector.h), sends this rank's
// progress (from a WatchedCollective) to every other rank and takes in theirs, and checks whether
// this rank has been waiting in one collective for longer than the timeout. If so it decides who
// is missing (FindMissingRanks), prints FormatStallMessage to stderr and calls
// MPI_Abort(MPI_COMM_WORLD, exit_code), which makes mpirun end every rank.
//
// The side channel. Heartbeats are small point-to-point messages (MPI_Isend/MPI_Irecv, tested,
// never waited for) on a communicator of their own, duplicated from the world at Start, sent from
// the watchdog's thread; so MPI must be initialised with MPI_THREAD_MULTIPLE. Why this one:
//   + it goes wherever MPI goes (several nodes, any transport MPI picked) with no addresses, ports
//     or shared directories to configure; progress files in a shared directory would only work
//     on one node or a shared filesystem, and a UDP/TCP channel of our own would need address
//     discovery and firewall rules;
//   + a rank that is stopped, killed or cut off falls silent on it, and a live rank keeps beating
//     while its main thread is blocked in MPI;
//   - MPI_THREAD_MULTIPLE costs a little locking inside MPI on every call (only when the detector
//     is on: --stall_timeout=0 keeps MPI_THREAD_FUNNELED);
//   - every rank beats to every other rank: W*(W-1) messages of ~100 bytes per period, fine for
//     the tens of ranks these jobs run (a ring or tree would scale further but name fewer
//     ranks);
//   - if the MPI library itself wedges (holds its lock forever) heartbeats stop too; every rank
//     then looks silent, and the message says so rather than naming the wrong one.
// Any rank that stalls reports; several ranks may each print their view before the job ends.
//
// Stop (or the destructor) ends the thread after a farewell exchange that completes every
// heartbeat message in flight, so MPI_Finalize finds none pending. REQUIRES: all ranks Start and
// Stop at the same points of the program; MPI initialised with MPI_THREAD_MULTIPLE; the
// WatchedCollective outlives the watchdog. Start and Stop are called from the main thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <thread>
#include <vector>

#include <mpi.h>

#include "base/mutex.h"
#include "base/status.h"
#include "images/trainer/comm/watched_collective.h"

namespace dljob::trainer {

class MpiStallWatchdog {
 public:
  // Collective over `world` (duplicates it). `timeout_seconds` > 0.
  static Result<std::unique_ptr<MpiStallWatchdog>> Start(MPI_Comm world,
                                                         const WatchedCollective& progress,
                                                         double timeout_seconds, int exit_code);
  ~MpiStallWatchdog();

  MpiStallWatchdog(const MpiStallWatchdog&) = delete;
  MpiStallWatchdog& operator=(const MpiStallWatchdog&) = delete;

  // Ends the thread (see above). Idempotent.
  void Stop();

 private:
  struct Wire;  // a heartbeat on the wire
  struct Peer;

  MpiStallWatchdog(MPI_Comm comm, const WatchedCollective& progress, double timeout_seconds,
                   int exit_code);
  void Run();
  void Beat(bool farewell);
  void Receive();
  void CheckStall();
  void Farewell();

  MPI_Comm comm_;
  const WatchedCollective& progress_;
  double timeout_seconds_;
  int exit_code_;
  int rank_ = 0;
  int size_ = 1;
  std::vector<Peer> peers_;  // owned by the watchdog thread once it runs
  std::chrono::steady_clock::time_point started_;
  Mutex mutex_;
  std::condition_variable_any wake_;
  bool stop_ GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace dljob::trainer
