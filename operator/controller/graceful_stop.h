// How a job's pods stop, so that its ranks can finish a checkpoint when the pods are deleted
// (a restart, suspend, the job's deletion, a node drain).
//
// The kubelet stops a container by sending SIGTERM to its PID 1 and, after the pod's
// terminationGracePeriodSeconds, SIGKILL to everything left. The ranks are never PID 1: a
// worker's PID 1 is sshd (the ranks are children of Open MPI's orted, started over SSH), and the
// launcher's is mpirun. Left as they are, a worker's sshd exits at once and takes its ranks with
// it, and mpirun answers SIGTERM by killing every rank within about two seconds. So each runs
// under a small POSIX shell entrypoint:
//
//   worker    runs the server (sshd) in the background. On SIGTERM it sends SIGTERM to the MPI
//             ranks among its descendants (the processes whose environment has
//             OMPI_COMM_WORLD_RANK) and to nothing else, waits until they have exited, then stops
//             the server and exits 143. A worker with no ranks running stops at once.
//   launcher  runs mpirun and exits with its status, ignoring SIGTERM: mpirun ends when the ranks
//             do (the workers' SIGTERM reached them), so it must not kill them first.
//
// Either is cut short by the kubelet's SIGKILL at the end of the grace period. Pure functions;
// thread-safe. The scripts need only /bin/sh, /proc, tr and sleep (a job's image may lack more:
// dljob/trainer:cpu has no grep).
#pragma once

#include <string>
#include <vector>

namespace dljob::controller {

// ["/bin/sh", "-c", <worker script>, "dljob-worker", server...]
std::vector<std::string> WorkerEntrypoint(const std::vector<std::string>& server);
// ["/bin/sh", "-c", <launcher script>, "dljob-launcher", mpirun...]
std::vector<std::string> LauncherEntrypoint(const std::vector<std::string>& mpirun);

}  // namespace dljob::controller
