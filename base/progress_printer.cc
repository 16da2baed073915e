#include "base/progress_printer.h"

#include <algorithm>
#include <cstdio>

#include "base/human_format.h"

namespace dljob {

std::string FormatProgressLine(std::string_view label, uint64_t done, uint64_t total, double rate,
                               ProgressUnit unit, bool bar, std::string_view suffix) {
  const int pct = total ? static_cast<int>(done * 100 / total) : 100;
  std::string line(label);
  line += "  ";
  if (bar) {
    const int filled = std::clamp(pct / 5, 0, 20);
    line += "[" + std::string(filled, '#') + std::string(20 - filled, '-') + "]  ";
  }
  char buf[64];
  if (unit == ProgressUnit::kBytes) {
    line += HumanBytes(done) + "/" + HumanBytes(total);
    std::snprintf(buf, sizeof buf, "  %d%%  ", pct);
    line += buf + HumanBytes(static_cast<uint64_t>(rate)) + "/s";
  } else {
    std::snprintf(buf, sizeof buf, "%llu/%llu records  %d%%  %.0f records/s",
                  static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                  pct, rate);
    line += buf;
  }
  if (rate > 0 && done < total) {
    line += "  ETA " + ClockDuration(std::chrono::seconds(
                           static_cast<int64_t>(static_cast<double>(total - done) / rate + 0.5)));
  }
  line += suffix;
  return line;
}

StatusLine::StatusLine(std::ostream& out, bool tty, std::string plain_prefix)
    : out_(out), tty_(tty), plain_prefix_(std::move(plain_prefix)) {}

void StatusLine::Show(std::string_view text) {
  if (tty_) {
    out_ << "\r\033[K" << text << std::flush;
    shown_ = true;
  } else {
    out_ << plain_prefix_ << text << "\n" << std::flush;
  }
}

void StatusLine::Clear() {
  if (!shown_) return;
  out_ << "\r\033[K" << std::flush;
  shown_ = false;
}

void StatusLine::Keep() {
  if (!shown_) return;
  out_ << "\n" << std::flush;
  shown_ = false;
}

ProgressPrinter::ProgressPrinter(std::ostream& out, bool tty, const Clock& clock,
                                 ProgressOptions options)
    : clock_(clock), options_(options) {
  line_.emplace(out, tty);
}

ProgressPrinter::ProgressPrinter(std::function<void(const std::string&)> sink, const Clock& clock,
                                 ProgressOptions options)
    : sink_(std::move(sink)), clock_(clock), options_(options) {}

void ProgressPrinter::Start(const std::string& label) {
  label_ = label;
  start_ = clock_.MonotonicNow();
  last_draw_.reset();
  last_tenth_ = 0;
}

void ProgressPrinter::Update(const std::string& label, uint64_t done, uint64_t total,
                             std::string_view suffix) {
  if (label != label_) Start(label);
  const Clock::MonotonicTime now = clock_.MonotonicNow();
  if (done == 0 && total > 0) return;  // the start: nothing to show yet
  const double secs = std::chrono::duration<double>(now - start_).count();
  const double rate = secs > 0 ? static_cast<double>(done) / secs : 0;
  const bool tty = line_ && line_->tty();
  if (tty) {
    if (done < total && last_draw_ && now - *last_draw_ < options_.redraw_interval) return;
    last_draw_ = now;
    line_->Show(FormatProgressLine(label_, done, total, rate, options_.unit, true, suffix));
    if (done >= total) line_->Keep();
    return;
  }
  const int tenth = total ? static_cast<int>(std::min<uint64_t>(done * 10 / total, 10)) : 10;
  if (tenth > last_tenth_ || (done == total && last_tenth_ <= 10)) {
    last_tenth_ = done == total ? 11 : tenth;  // the final line once
    const std::string text =
        FormatProgressLine(label_, done, total, rate, options_.unit, false, suffix);
    if (line_) {
      line_->Show(text);
    } else {
      sink_(text);
    }
  }
}

}  // namespace dljob
