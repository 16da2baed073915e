// TerminalObserver: what `dljob submit` shows while a job runs.
//
// Job output goes to `out` as it arrives, each line prefixed with its rank ("[1] …", "[mpirun] …")
// when the job has more than one rank. On a terminal, a live progress line (progress.h) sits
// below the output on `err` and is redrawn in place; otherwise a plain progress line is printed
// when the phase changes and at most every `plain_interval` while the step advances. Both are
// drawn by base/progress_printer.h's StatusLine. Notices go
// to `err` as "note: …". Elapsed time and the ETA read the injected Clock. Used from the
// submitting thread only; the streams and the clock must outlive the observer.
#pragma once

#include <chrono>
#include <ostream>
#include <string>

#include "base/clock.h"
#include "base/progress_printer.h"
#include "cli/backend/backend.h"
#include "cli/progress.h"

namespace dljob {

class TerminalObserver : public JobObserver {
 public:
  struct Options {
    bool tty = false;    // err is a terminal: redraw the progress line in place
    bool quiet = false;  // don't echo job output
    bool tag_ranks = true;
    size_t width = 0;  // terminal columns, 0 = unknown
    std::chrono::seconds plain_interval{10};
  };
  TerminalObserver(std::ostream& out, std::ostream& err, const Clock& clock, Options options);

  void OnOutput(int rank, bool is_stderr, std::string_view line) override;
  void OnUpdate(const DLJob& job) override;
  void OnNotice(std::string_view message) override;
  // Removes the progress line, leaving the terminal clean for the summary.
  void Finish();

 private:
  void Draw();

  std::ostream& out_;
  std::ostream& err_;
  const Clock& clock_;
  Options options_;
  StatusLine line_;  // on err_
  DLJob last_;
  bool have_job_ = false;
  JobPhase last_printed_phase_ = JobPhase::kUnset;
  Clock::MonotonicTime started_;
  Clock::MonotonicTime last_plain_{};
  EtaEstimator eta_;
};

}  // namespace dljob
