#include "cli/terminal_observer.h"

namespace dljob {

TerminalObserver::TerminalObserver(std::ostream& out, std::ostream& err, const Clock& clock,
                                   Options options)
    : out_(out),
      err_(err),
      clock_(clock),
      options_(options),
      line_(err, options.tty, "progress: "),
      started_(clock.MonotonicNow()) {}

void TerminalObserver::Draw() {
  if (!have_job_) return;
  auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(clock_.MonotonicNow() - started_);
  std::optional<std::chrono::seconds> eta;
  const auto& t = last_.status.throughput;
  if (t && t->total_steps) eta = eta_.Remaining(*t->total_steps);
  line_.Show(FormatProgress(last_, elapsed, eta, options_.width ? options_.width - 1 : 0));
}

void TerminalObserver::OnOutput(int rank, bool is_stderr, std::string_view line) {
  if (options_.quiet) return;
  line_.Clear();
  std::ostream& dest = is_stderr ? err_ : out_;
  if (rank < 0)
    dest << "[mpirun] ";
  else if (options_.tag_ranks)
    dest << "[" << rank << "] ";
  dest << line << "\n" << std::flush;
  if (options_.tty) Draw();
}

void TerminalObserver::OnUpdate(const DLJob& job) {
  last_ = job;
  have_job_ = true;
  const auto& t = job.status.throughput;
  if (t && t->step) eta_.Observe(*t->step, clock_.MonotonicNow());
  if (options_.tty) {
    Draw();
    return;
  }
  auto now = clock_.MonotonicNow();
  if (job.status.phase != last_printed_phase_ || now - last_plain_ >= options_.plain_interval) {
    last_printed_phase_ = job.status.phase;
    last_plain_ = now;
    Draw();
  }
}

void TerminalObserver::OnNotice(std::string_view message) {
  line_.Clear();
  err_ << "note: " << message << "\n" << std::flush;
  if (options_.tty) Draw();
}

void TerminalObserver::Finish() { line_.Clear(); }

}  // namespace dljob
