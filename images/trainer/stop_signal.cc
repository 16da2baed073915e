#include "images/trainer/stop_signal.h"

#include <signal.h>

#include <csignal>

namespace dljob::trainer {
namespace {

volatile std::sig_atomic_t stop_requested = 0;  // NOLINT: written by the signal handler only

extern "C" void OnStopSignal(int /*signal*/) { stop_requested = 1; }

}  // namespace

void InstallStopSignal() {
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // a blocking call in flight (MPI, a read) goes on
  sigaction(SIGTERM, &action, nullptr);
}

bool StopRequested() { return stop_requested != 0; }

}  // namespace dljob::trainer
