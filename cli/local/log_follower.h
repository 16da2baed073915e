// Printing a local job's log, optionally following it as it grows (dljob logs [-f] [--rank R]).
//
// Reads whole lines only, so a line being written is never printed in halves. With a rank filter
// only that rank's lines are printed, without their tag (as `kubectl logs` prints one pod).
// Following ends once `finished` returns true and the file has no more complete lines; between
// reads that found nothing new it waits 200 ms on `clock`.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "cli/backend/backend.h"

namespace dljob {

Status FollowLog(const std::string& path, const LogOptions& options,
                 const std::function<bool()>& finished, Clock& clock, std::ostream& out);

}  // namespace dljob
