#include "operator/controller/graceful_stop.h"

#include <string_view>

namespace dljob::controller {
namespace {

// POSIX sh (dash, busybox, bash). `ranks` walks /proc for this shell's descendants (a process
// may vanish under it: every read tolerates that), then keeps those with OMPI_COMM_WORLD_RANK in
// their environment, read with the shell's own `read` (and `tr` for the NULs). `alive` treats a
// zombie as gone. A second SIGTERM changes nothing.
constexpr char kWorkerScript[] = R"sh("$@" &
server=$!
ranks() {
  tree=" $$ "
  grew=1
  while [ -n "$grew" ]; do
    grew=
    for status in /proc/[0-9]*/status; do
      pid=${status#/proc/}
      pid=${pid%/status}
      case $tree in *" $pid "*) continue ;; esac
      ppid=
      while read -r key value; do
        if [ "$key" = PPid: ]; then ppid=$value; break; fi
      done 2>/dev/null <"$status"
      case $tree in *" $ppid "*) tree="$tree$pid " grew=1 ;; esac
    done
  done
  for pid in $tree; do
    [ "$pid" = "$$" ] && continue
    tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ" | {
      while IFS= read -r kv || [ -n "$kv" ]; do
        case $kv in OMPI_COMM_WORLD_RANK=*) echo "$pid"; break ;; esac
      done
    }
  done
}
alive() {
  state=
  while read -r key value; do
    if [ "$key" = State: ]; then state=$value; break; fi
  done 2>/dev/null <"/proc/$1/status"
  [ -n "$state" ] && [ "${state%% *}" != Z ]
}
stop() {
  trap '' TERM
  pids=$(ranks)
  [ -z "$pids" ] || kill -TERM $pids 2>/dev/null
  while [ -n "$pids" ]; do
    left=
    for pid in $pids; do alive "$pid" && left="$left $pid"; done
    pids=$left
    [ -z "$pids" ] || sleep 1
  done
  kill -TERM "$server" 2>/dev/null
  wait "$server" 2>/dev/null
  exit 143
}
trap stop TERM
wait "$server"
)sh";

constexpr char kLauncherScript[] = R"sh(trap '' TERM
"$@" &
wait $!
)sh";

// The kubelet expands a container's command before it runs it: `$(NAME)` becomes the value of the
// container's variable NAME, and `$$` becomes `$`. Every `$` of the script is doubled, so that
// what the shell gets is the script as written. (Unescaped, `$$` reached the shell as `$`: the
// worker looked for the ranks under a process named "$", found none, and stopped sshd at once.)
std::string EscapedForKubernetes(std::string_view script) {
  std::string out;
  for (char c : script) {
    if (c == '$') out += '$';
    out += c;
  }
  return out;
}

std::vector<std::string> Entrypoint(const char* script, const char* name,
                                    const std::vector<std::string>& argv) {
  std::vector<std::string> out = {"/bin/sh", "-c", EscapedForKubernetes(script), name};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

}  // namespace

std::vector<std::string> WorkerEntrypoint(const std::vector<std::string>& server) {
  return Entrypoint(kWorkerScript, "dljob-worker", server);
}

std::vector<std::string> LauncherEntrypoint(const std::vector<std::string>& mpirun) {
  return Entrypoint(kLauncherScript, "dljob-launcher", mpirun);
}

}  // namespace dljob::controller
