#include "operator/controller/admission.h"

#include <algorithm>
#include <set>
#include <utility>

#include "base/time_format.h"

namespace dljob::controller {

std::string WaitReason(scheduler::WaitCause cause) {
  using scheduler::WaitCause;
  switch (cause) {
    case WaitCause::kNoQueue:
      return "Inadmissible";
    case WaitCause::kQuota:
      return "QuotaExceeded";
    case WaitCause::kRoom:
    case WaitCause::kNeverFits:
      return "Unschedulable";
    case WaitCause::kPreempted:
      return "Preempted";
    case WaitCause::kBehind:
    case WaitCause::kNotConsidered:
      break;
  }
  return "WaitingInQueue";
}

std::string EstimateSentence(const scheduler::StartEstimate& estimate) {
  if (!estimate.time) return "; estimated start " + estimate.assumption;
  return "; estimated start " + FormatRfc3339(WallTime(std::chrono::seconds(*estimate.time))) +
         ", " + estimate.assumption;
}

AdmissionBook::AdmissionBook(kube::Duration admission_ttl, kube::Duration restate_after,
                             double restates_per_second)
    : admission_ttl_(admission_ttl),
      restate_after_(restate_after),
      restates_per_second_(restates_per_second) {}

Admission AdmissionBook::Get(const std::string& key) const {
  MutexLock lock(mu_);
  auto it = book_.find(key);
  if (it == book_.end()) return Admission{};
  Admission a = it->second;
  if (auto told = told_.find(key); told != told_.end()) {
    a.message = told->second.message;
    a.estimate = told->second.estimate;
  }
  return a;
}

std::optional<WallTime> AdmissionBook::RestateDue() const {
  MutexLock lock(mu_);
  return restate_due_;
}

std::map<std::string, Admission> AdmissionBook::All() const {
  MutexLock lock(mu_);
  return book_;
}

bool AdmissionBook::Lapsed(const Admission& a, WallTime now) const {
  return a.verdict == Verdict::kAdmitted && now - a.since > admission_ttl_;
}

std::vector<std::string> AdmissionBook::Record(const scheduler::Decision& decision,
                                               const std::vector<std::string>& running,
                                               const std::vector<std::string>& leaving,
                                               WallTime now) {
  MutexLock lock(mu_);
  std::map<std::string, Admission> next;
  std::map<std::string, Told> told;
  std::set<std::string> changed;
  restate_due_.reset();
  const auto spread = std::chrono::duration_cast<kube::Duration>(std::chrono::duration<double>(
      static_cast<double>(decision.waiting.size()) / restates_per_second_));
  const kube::Duration period = std::max(restate_after_, spread);
  auto keep = [&](const std::string& key, Admission a) REQUIRES(mu_) {
    auto it = book_.find(key);
    auto last = told_.find(key);
    bool wake = it == book_.end() || last == told_.end() || it->second.verdict != a.verdict ||
                it->second.reason != a.reason ||
                it->second.placement.worker_nodes.size() != a.placement.worker_nodes.size();
    if (!wake && last->second.message != a.message) {
      const WallTime due = last->second.at + period;
      wake = now >= due;
      if (!wake && (!restate_due_ || due < *restate_due_)) restate_due_ = due;
    }
    if (wake) {
      changed.insert(key);
      told[key] = {now, a.message, a.estimate};
    } else {
      told[key] = last->second;
    }
    next[key] = std::move(a);
  };
  auto old = [&](const std::string& key) REQUIRES(mu_) {
    auto it = book_.find(key);
    return it == book_.end() ? Admission{} : it->second;
  };
  for (const std::string& key : leaving) keep(key, old(key));
  for (const std::string& key : running) {
    Admission a = old(key);
    if (a.verdict != Verdict::kPreempt && a.verdict != Verdict::kAdmitted) {
      a = Admission{Verdict::kAdmitted, "", "", {}, now};
    }
    keep(key, std::move(a));
  }
  for (const scheduler::WaitingJob& w : decision.waiting) {
    if (w.cause == scheduler::WaitCause::kPreempted) continue;  // in decision.preempt
    Admission a = old(w.job);
    if (a.verdict == Verdict::kPreempt) {  // not suspended yet: it still holds its GPUs
      keep(w.job, std::move(a));
      continue;
    }
    Admission waiting{Verdict::kWaiting, WaitReason(w.cause), w.reason, {}, now};
    if (auto e = estimates_.find(w.job); e != estimates_.end()) {
      waiting.estimate = e->second;
      waiting.message += EstimateSentence(e->second);
    }
    keep(w.job, std::move(waiting));
  }
  for (const scheduler::PreemptAction& p : decision.preempt) {
    keep(p.job, Admission{Verdict::kPreempt, "Preempted", p.reason, {}, now});
  }
  for (const scheduler::StartAction& s : decision.start) {
    keep(s.job, Admission{Verdict::kAdmitted, "", "", s.placement, now});
  }
  for (const scheduler::ResizeAction& r : decision.resize) {
    keep(r.job, Admission{Verdict::kAdmitted, "Resized", r.reason, r.placement, now});
  }
  for (const auto& [key, a] : book_) {
    if (!next.count(key) && a.verdict != Verdict::kUnknown) changed.insert(key);
  }
  book_ = std::move(next);
  told_ = std::move(told);
  return {changed.begin(), changed.end()};
}

void AdmissionBook::SetEstimates(std::map<std::string, scheduler::StartEstimate> estimates) {
  MutexLock lock(mu_);
  estimates_ = std::move(estimates);
}

void AdmissionBook::Preempted(const std::string& key, const std::string& message) {
  MutexLock lock(mu_);
  auto it = book_.find(key);
  if (it == book_.end() || it->second.verdict != Verdict::kPreempt) return;
  it->second = Admission{Verdict::kWaiting, "Preempted", message, {}, it->second.since};
  told_[key].message = message;  // the reconciler's own words: shown as they are
  told_[key].estimate.reset();
}

}  // namespace dljob::controller
