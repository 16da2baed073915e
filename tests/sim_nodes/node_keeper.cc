// See node_keeper.h.
#include "tests/sim_nodes/node_keeper.h"

#include <algorithm>

#include "base/time_format.h"
#include "kube/object_fields.h"

namespace dljob::sim_nodes {
namespace {

using SteadyClock = std::chrono::steady_clock;

const kube::Resource kNamespaces{"", "v1", "namespaces", false, "Namespace"};

std::string NodeNow() { return FormatRfc3339(std::chrono::system_clock::now()); }
std::string LeaseNow() { return FormatRfc3339Micros(std::chrono::system_clock::now()); }

Status Failed(const std::string& what, const kube::ApiError& error) {
  return Status::Unavailable(what + ": " + error.ToString());
}

}  // namespace

Status ParallelFor(int n, int threads, const std::function<Status(int)>& fn) {
  std::vector<Status> results(n, Status::Ok());
  std::atomic<int> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, std::min(threads, n)); ++t) {
    pool.emplace_back([&] {
      // After a failure no new item starts: against a server that is gone, each would spend its
      // own retries first (minutes for 1,000 nodes).
      for (int i = next++; i < n && !failed; i = next++) {
        results[i] = fn(i);
        if (!results[i].ok()) failed = true;
      }
    });
  }
  for (std::thread& t : pool) t.join();
  for (Status& s : results) {
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

NodeKeeper::NodeKeeper(kube::Api& api, Options options) : api_(api), options_(std::move(options)) {
  for (int i = 0; i < options_.table.count; ++i) names_.push_back(NodeName(options_.table, i));
  uids_.resize(names_.size());
}

NodeKeeper::~NodeKeeper() { Stop(); }

Status NodeKeeper::Register() {
  registered_at_ = NodeNow();
  const int threads = std::max(1, options_.threads) * 2;  // registration is all round trips
  Status nodes = ParallelFor(options_.table.count, threads, [&](int i) -> Status {
    const std::string& name = names_[i];
    kube::ApiResult<Json> created =
        api_.Create(kube::resources::kNodes, "", NodeObject(options_.table, i, registered_at_));
    if (created.ok()) {
      uids_[i] = kube::UidOf(*created);
      return Status::Ok();
    }
    if (!created.error().IsAlreadyExists())
      return Failed("registering node " + name, created.error());
    // A node left by an earlier run (--keep-nodes): Ready again from now on.
    kube::ApiResult<Json> patched =
        api_.MergePatch(kube::resources::kNodes, "", name,
                        NodeHeartbeatPatch(registered_at_, registered_at_), "status");
    if (!patched.ok()) return Failed("taking over node " + name, patched.error());
    uids_[i] = kube::UidOf(*patched);
    return Status::Ok();
  });
  if (!nodes.ok()) return nodes;

  auto lease = [&](int i) -> kube::ApiResult<Json> {
    return api_.Create(kube::resources::kLeases, kLeaseNamespace,
                       NodeLease(names_[i], uids_[i], options_.lease_seconds, LeaseNow()));
  };
  kube::ApiResult<Json> first = lease(0);
  if (!first.ok() && first.error().IsNotFound()) {  // a server without kube-node-lease
    Json ns = {
        {"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kLeaseNamespace}}}};
    kube::ApiResult<Json> made = api_.Create(kNamespaces, "", ns);
    if (!made.ok() && !made.error().IsAlreadyExists()) {
      return Failed(std::string("creating namespace ") + kLeaseNamespace, made.error());
    }
  }
  return ParallelFor(options_.table.count, threads, [&](int i) -> Status {
    kube::ApiResult<Json> made = (i == 0 && first.ok()) ? first : lease(i);
    if (made.ok()) return Status::Ok();
    if (!made.error().IsAlreadyExists()) {
      return Failed("creating the lease of node " + names_[i], made.error());
    }
    kube::ApiResult<Json> renewed = api_.MergePatch(kube::resources::kLeases, kLeaseNamespace,
                                                    names_[i], LeaseRenewPatch(LeaseNow()));
    return renewed.ok() ? Status::Ok()
                        : Failed("renewing the lease of node " + names_[i], renewed.error());
  });
}

void NodeKeeper::Start() {
  {
    MutexLock lock(mu_);
    stop_ = false;
  }
  start_ = SteadyClock::now();
  const int threads = std::max(1, std::min(options_.threads, options_.table.count));
  for (int t = 0; t < threads; ++t) threads_.emplace_back([this, t] { RenewLoop(t); });
}

void NodeKeeper::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void NodeKeeper::RenewLoop(int thread) {
  const int count = options_.table.count;
  const int threads = static_cast<int>(std::max(1, std::min(options_.threads, count)));
  const auto period = options_.renew_period;
  // Heartbeats go with every `ratio`-th renewal of a node, staggered by node.
  const long ratio =
      std::max<long>(1, options_.status_period / std::max(period, decltype(period)(1)));
  for (long round = 1;; ++round) {
    for (int i = thread; i < count; i += threads) {
      const SteadyClock::time_point due = start_ + period * i / count + period * round;
      {
        MutexLock lock(mu_);
        while (!stop_ && SteadyClock::now() < due) wake_.wait_until(mu_, due);
        if (stop_) return;
        max_late_seconds_ = std::max(
            max_late_seconds_, std::chrono::duration<double>(SteadyClock::now() - due).count());
      }
      kube::ApiResult<Json> renewed = api_.MergePatch(kube::resources::kLeases, kLeaseNamespace,
                                                      names_[i], LeaseRenewPatch(LeaseNow()));
      if (renewed.ok()) {
        ++renewals_;
      } else {
        NoteFailure("renewing the lease of " + names_[i], renewed.error());
      }
      if ((round + i) % ratio != 0) continue;
      const std::string now = NodeNow();
      kube::ApiResult<Json> beat =
          api_.MergePatch(kube::resources::kNodes, "", names_[i],
                          NodeHeartbeatPatch(registered_at_, now), "status");
      if (beat.ok()) {
        ++heartbeats_;
      } else {
        NoteFailure("posting the status of " + names_[i], beat.error());
      }
    }
  }
}

void NodeKeeper::NoteFailure(const std::string& what, const kube::ApiError& error) {
  ++failures_;
  MutexLock lock(mu_);
  last_error_ = what + ": " + error.ToString();
}

Status NodeKeeper::Deregister() {
  const int threads = std::max(1, options_.threads) * 2;
  Status leases = ParallelFor(options_.table.count, threads, [&](int i) -> Status {
    kube::ApiResult<Json> gone = api_.Delete(kube::resources::kLeases, kLeaseNamespace, names_[i]);
    if (gone.ok() || gone.error().IsNotFound()) return Status::Ok();
    return Failed("deleting the lease of node " + names_[i], gone.error());
  });
  Status nodes = ParallelFor(options_.table.count, threads, [&](int i) -> Status {
    kube::ApiResult<Json> gone = api_.Delete(kube::resources::kNodes, "", names_[i]);
    if (gone.ok() || gone.error().IsNotFound()) return Status::Ok();
    return Failed("deleting node " + names_[i], gone.error());
  });
  return leases.ok() ? nodes : leases;
}

NodeKeeper::Stats NodeKeeper::stats() const {
  Stats s;
  s.renewals = renewals_;
  s.heartbeats = heartbeats_;
  s.failures = failures_;
  MutexLock lock(mu_);
  s.max_late_seconds = max_late_seconds_;
  s.last_error = last_error_;
  return s;
}

}  // namespace dljob::sim_nodes
