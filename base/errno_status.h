// ErrnoStatus: a failed system call as a Status, written once for every caller that talks to the
// operating system (the filesystem seam, env.h; sockets; processes).
//
// The message names what failed, on what, and the system's reason: `cannot open "/x/y": No such
// file or directory`. The code follows the errno: ENOENT is kNotFound, EEXIST kAlreadyExists,
// anything else kUnavailable (the environment failed, not the caller's input). Pure; thread-safe.
#pragma once

#include <cerrno>
#include <string>

#include "base/status.h"

namespace dljob {

// `<what> "<path>": <strerror(err)>`, or `<what>: <strerror(err)>` when `path` is empty.
// REQUIRES: err != 0. Pass errno explicitly when other calls may have run since the failure.
Status ErrnoStatus(const std::string& what, const std::string& path, int err = errno);

}  // namespace dljob
