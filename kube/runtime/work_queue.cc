#include "kube/runtime/work_queue.h"

#include <algorithm>

namespace dljob::kube {

WorkQueue::WorkQueue(const Clock& clock, WorkQueueOptions options, HandoutObserver on_handout)
    : clock_(clock), options_(options), on_handout_(std::move(on_handout)) {}

void WorkQueue::AddLocked(const std::string& key, Lane lane, std::optional<WallTime> ready) {
  if (shutting_down_) return;
  const bool follow_up = lane == Lane::kFollowUp;
  if (dirty_.count(key) && (!follow_up || follow_up_.count(key))) return;
  if (dirty_.insert(key).second && on_handout_) {
    ready_since_.emplace(key, ready.value_or(clock_.Now()));
  }
  if (follow_up) follow_up_.insert(key);
  EraseWaitingLocked(key);  // ready now; a pending delayed add would only repeat it
  retrying_.erase(key);
  if (processing_.count(key)) return;  // Done() puts it back
  PushLocked(key);
}

void WorkQueue::PushLocked(const std::string& key) {
  if (follow_up_.count(key)) {
    auto [it, fresh] = follow_up_rank_.emplace(key, next_rank_);
    if (fresh) ++next_rank_;
    follow_ups_.emplace(it->second, key);
  } else {
    queue_.push_back(key);
  }
  cv_.notify_one();
}

void WorkQueue::Add(const std::string& key, Lane lane) {
  MutexLock lock(mu_);
  AddLocked(key, lane);
}

void WorkQueue::AddAfter(const std::string& key, Duration delay) {
  if (delay <= Duration::zero()) return Add(key);
  MutexLock lock(mu_);
  if (shutting_down_ || dirty_.count(key)) return;
  WallTime due = clock_.Now() + delay;
  auto [it, inserted] = waiting_.emplace(key, due);
  if (!inserted) {
    if (it->second <= due) return;  // the earliest pending time wins
    due_order_.erase({it->second, key});
    it->second = due;
  }
  due_order_.emplace(due, key);
  cv_.notify_all();  // a sleeping Get() may need to wake earlier
}

void WorkQueue::AddRateLimited(const std::string& key) {
  Duration delay;
  {
    MutexLock lock(mu_);
    int n = failures_[key]++;
    delay = options_.base_delay;
    for (int i = 0; i < n && delay < options_.max_delay; ++i) delay *= 2;
    delay = std::min(delay, options_.max_delay);
  }
  AddAfter(key, delay);
  MutexLock lock(mu_);
  if (waiting_.count(key)) retrying_.insert(key);  // a retry is work under way: a follow-up
}

void WorkQueue::Forget(const std::string& key) {
  MutexLock lock(mu_);
  failures_.erase(key);
}

void WorkQueue::ForgetOrder(const std::string& key) {
  MutexLock lock(mu_);
  follow_up_rank_.erase(key);  // an entry still in the lane keeps its place until handed out
}

int WorkQueue::Failures(const std::string& key) const {
  MutexLock lock(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

void WorkQueue::EraseWaitingLocked(const std::string& key) {
  auto it = waiting_.find(key);
  if (it == waiting_.end()) return;
  due_order_.erase({it->second, key});
  waiting_.erase(it);
}

void WorkQueue::PromoteDueLocked() {
  const WallTime now = clock_.Now();
  while (!due_order_.empty() && due_order_.begin()->first <= now) {
    auto [due, key] = *due_order_.begin();
    due_order_.erase(due_order_.begin());
    waiting_.erase(key);
    Lane lane = retrying_.erase(key) ? Lane::kFollowUp : Lane::kNormal;
    AddLocked(key, lane, due);
  }
}

bool WorkQueue::LiveLocked(const std::string& key, bool follow_up) const {
  return dirty_.count(key) && !processing_.count(key) &&
         follow_up_.count(key) == (follow_up ? 1 : 0);
}

void WorkQueue::TrimLocked() {
  while (!follow_ups_.empty() && !LiveLocked(follow_ups_.begin()->second, true)) {
    follow_ups_.erase(follow_ups_.begin());
  }
  while (!queue_.empty() && !LiveLocked(queue_.front(), false)) queue_.pop_front();
}

std::optional<WorkQueue::Handout> WorkQueue::PopLocked() {
  TrimLocked();
  const bool follow_up = !follow_ups_.empty() && (queue_.empty() || streak_ < kFollowUpStreak);
  if (!follow_up && queue_.empty()) return std::nullopt;
  streak_ = follow_up ? streak_ + 1 : 0;
  Handout out{"", WallTime{}, follow_up ? Lane::kFollowUp : Lane::kNormal};
  if (follow_up) {
    out.key = follow_ups_.begin()->second;
    follow_ups_.erase(follow_ups_.begin());
  } else {
    out.key = std::move(queue_.front());
    queue_.pop_front();
  }
  const std::string& key = out.key;
  processing_.insert(key);
  dirty_.erase(key);
  follow_up_.erase(key);
  if (auto it = ready_since_.find(key); it != ready_since_.end()) {
    out.ready = it->second;
    ready_since_.erase(it);
  }
  return out;
}

std::optional<std::string> WorkQueue::HandOut(std::optional<Handout> handout) {
  if (!handout) return std::nullopt;
  if (on_handout_) on_handout_(handout->key, handout->ready, handout->lane);
  return std::move(handout->key);
}

std::optional<std::string> WorkQueue::Get() {
  std::optional<Handout> handout;
  {
    MutexLock lock(mu_);
    handout = GetLocked();
  }
  return HandOut(std::move(handout));
}

std::optional<WorkQueue::Handout> WorkQueue::GetLocked() {
  while (true) {
    if (shutting_down_) return std::nullopt;
    PromoteDueLocked();
    if (std::optional<Handout> handout = PopLocked()) return handout;
    if (due_order_.empty()) {
      cv_.wait(mu_);
      continue;
    }
    const WallTime next = due_order_.begin()->first;
    auto sleep = std::chrono::duration_cast<Duration>(next - clock_.Now());
    cv_.wait_for(mu_, std::clamp(sleep, Duration(1), options_.poll));
  }
}

std::optional<std::string> WorkQueue::TryGet() {
  std::optional<Handout> handout;
  {
    MutexLock lock(mu_);
    if (shutting_down_) return std::nullopt;
    PromoteDueLocked();
    handout = PopLocked();
  }
  return HandOut(std::move(handout));
}

void WorkQueue::Done(const std::string& key) {
  MutexLock lock(mu_);
  processing_.erase(key);
  if (dirty_.count(key) && !shutting_down_) PushLocked(key);
}

void WorkQueue::ShutDown() {
  MutexLock lock(mu_);
  shutting_down_ = true;
  cv_.notify_all();
}

bool WorkQueue::ShuttingDown() const {
  MutexLock lock(mu_);
  return shutting_down_;
}

size_t WorkQueue::Len() const {
  MutexLock lock(mu_);
  size_t n = 0;
  for (const std::string& key : dirty_) n += processing_.count(key) ? 0 : 1;
  return n;
}

size_t WorkQueue::Ordered() const {
  MutexLock lock(mu_);
  return follow_up_rank_.size();
}

}  // namespace dljob::kube
