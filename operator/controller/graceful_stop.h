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
// Either is cut short by the kubelet's SIGKILL at the end of the grace period. The scripts need
// only /bin/sh, /proc, tr and sleep (a job's image may have little more).
//
// Each is a pod's `command`, which the kubelet expands before it runs it (`$(NAME)` and `$$`):
// the script is escaped for that, so the container runs it as written; the arguments after the
// name (the server's, mpirun's with the user's command) are passed as given, expanded as any
// pod's command is. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace dljob::controller {

// ["/bin/sh", "-c", <worker script, escaped>, "dljob-worker", server...]
std::vector<std::string> WorkerEntrypoint(const std::vector<std::string>& server);
// ["/bin/sh", "-c", <launcher script, escaped>, "dljob-launcher", mpirun...]
std::vector<std::string> LauncherEntrypoint(const std::vector<std::string>& mpirun);

}  // namespace dljob::controller
