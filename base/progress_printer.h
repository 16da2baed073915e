// The one progress printer of the project: how far a long count (records packed or verified,
// bytes copied) has got, shown to the person waiting for it.
//
// On a terminal the printer keeps one line redrawn in place, at most every `redraw_interval`,
// and ends it with a newline once `done` reaches `total`:
//
//   pack train  [#########-----------]  27000/60000 records  45%  13500 records/s  ETA 0:02
//
// Anywhere else (a pipe, a log file, a job observer's notices) it writes the same line without
// the bar once per tenth of the total, and once more at the end:
//
//   cache  1.0 GiB/2.0 GiB  50%  100.0 MiB/s  ETA 0:10
//
// StatusLine is the drawing underneath: one status line on a stream, redrawn in place on a
// terminal (and cleared when other output must go where it is), printed as plain lines otherwise.
// `dljob submit`'s job progress line (cli/terminal_observer.h) draws through it too.
//
// Time comes from the injected Clock (base/clock.h; its monotonic reading), so tests drive the
// rate and the redraw throttle with a FakeClock. The stream and the clock are borrowed and must
// outlive the printer. Not thread-safe: one thread calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "base/clock.h"

namespace dljob {

enum class ProgressUnit { kRecords, kBytes };

// The progress line for `done` of `total` at `rate` units per second; no newline. With `bar`, a
// 20-column bar follows the label. `suffix` ends the line (e.g. "  3/10 objects"). Pure.
std::string FormatProgressLine(std::string_view label, uint64_t done, uint64_t total, double rate,
                               ProgressUnit unit, bool bar, std::string_view suffix = "");

class StatusLine {
 public:
  // `plain_prefix` starts every plain line (not a terminal): e.g. "progress: ".
  StatusLine(std::ostream& out, bool tty, std::string plain_prefix = "");

  // Terminal: replaces the shown line with `text` (no newline). Otherwise: prefix, text, newline.
  void Show(std::string_view text);
  // Terminal: erases the shown line, so other output can be written where it was.
  void Clear();
  // Terminal: keeps the shown line on screen, ending it with a newline.
  void Keep();
  bool tty() const { return tty_; }

 private:
  std::ostream& out_;
  const bool tty_;
  const std::string plain_prefix_;
  bool shown_ = false;
};

struct ProgressOptions {
  ProgressUnit unit = ProgressUnit::kRecords;
  std::chrono::milliseconds redraw_interval{100};  // terminal only
};

class ProgressPrinter {
 public:
  // Draws on `out`: a redrawn bar line when `tty`, a plain line per tenth otherwise.
  ProgressPrinter(std::ostream& out, bool tty, const Clock& clock, ProgressOptions options = {});
  // Hands each plain line (a line per tenth, no newline) to `sink`, e.g. as an observer's notice.
  ProgressPrinter(std::function<void(const std::string&)> sink, const Clock& clock,
                  ProgressOptions options = {});

  // Starts a count under `label` now: its own start time (for the rate) and tenths.
  void Start(const std::string& label);
  // `done` of `total` under `label`; a label not yet started is started first. A call with
  // done == 0 (and total > 0) shows nothing.
  void Update(const std::string& label, uint64_t done, uint64_t total,
              std::string_view suffix = "");

 private:
  std::optional<StatusLine> line_;                // a stream
  std::function<void(const std::string&)> sink_;  // or a sink of plain lines
  const Clock& clock_;
  const ProgressOptions options_;
  std::string label_;
  Clock::MonotonicTime start_;
  std::optional<Clock::MonotonicTime> last_draw_;  // terminal: the last redraw
  int last_tenth_ = 0;                             // 11 once the final line is out
};

}  // namespace dljob
