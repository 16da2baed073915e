// ThreadRanks: a test fake of `world` ranks in one process, one thread per rank, each holding its
// own values (unlike IdenticalRanksCollective, which plays ranks that all hold the same ones).
//
// ThreadRanks owns the shared state and one Collective per rank; Run(fn) calls fn(rank, its
// Collective) on `world` threads and joins them. Each operation meets the other ranks at a
// std::barrier, reads their buffers and meets them again before returning, so every buffer stays
// valid while others read it. AllreduceSum adds in rank order, so every rank gets bit-identical
// sums. Implemented: AllreduceSum, Broadcast, Allgather, AllgatherBytes, Barrier (the others use
// Collective's defaults). Mismatched sizes across ranks fail on every rank alike. It counts the
// byte allgathers and the bytes each rank sent through them.
//
// Header-only, for tests. Each rank's Collective is used by its own thread only.
#pragma once

#include <barrier>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "images/trainer/comm/collective.h"

namespace dljob::trainer {

class ThreadRanks {
 public:
  explicit ThreadRanks(int world) : world_(world), barrier_(world), slots_(world), sizes_(world) {
    for (int r = 0; r < world; ++r) ranks_.push_back(std::make_unique<Rank>(*this, r));
  }

  Collective& rank(int r) { return *ranks_[static_cast<size_t>(r)]; }
  int64_t allgather_bytes_calls(int r) const { return ranks_[static_cast<size_t>(r)]->calls(); }
  int64_t allgather_bytes_sent(int r) const { return ranks_[static_cast<size_t>(r)]->bytes(); }

  // Runs fn(rank, collective) for every rank, each on its own thread; returns when all are done.
  void Run(const std::function<void(int, Collective&)>& fn) {
    std::vector<std::thread> threads;
    for (int r = 0; r < world_; ++r) threads.emplace_back([&fn, this, r] { fn(r, rank(r)); });
    for (std::thread& t : threads) t.join();
  }

 private:
  class Rank : public Collective {
   public:
    Rank(ThreadRanks& group, int rank) : group_(group), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return group_.world_; }
    std::string name() const override { return "thread-ranks"; }

    Status AllgatherBytes(const void* send, size_t bytes, void* recv) override {
      ++calls_;
      bytes_ += static_cast<int64_t>(bytes);
      Status s = Post(send, bytes);
      if (s.ok()) {
        for (int r = 0; r < size(); ++r) {
          if (bytes > 0) {
            std::memcpy(static_cast<char*>(recv) + static_cast<size_t>(r) * bytes,
                        group_.slots_[static_cast<size_t>(r)], bytes);
          }
        }
      }
      group_.barrier_.arrive_and_wait();
      return s;
    }
    Status Allgather(const float* send, size_t count, float* recv) override {
      const int64_t calls = calls_, bytes = bytes_;
      Status s = AllgatherBytes(send, count * sizeof(float), recv);
      calls_ = calls;  // only byte allgathers are counted
      bytes_ = bytes;
      return s;
    }
    Status AllreduceSum(float* data, size_t count) override {
      Status s = Post(data, count * sizeof(float));
      std::vector<float> sum(count, 0.0f);
      if (s.ok()) {
        for (int r = 0; r < size(); ++r) {
          const float* theirs = static_cast<const float*>(group_.slots_[static_cast<size_t>(r)]);
          for (size_t i = 0; i < count; ++i) sum[i] += theirs[i];
        }
      }
      group_.barrier_.arrive_and_wait();
      if (s.ok() && count > 0) std::memcpy(data, sum.data(), count * sizeof(float));
      return s;
    }
    Status Broadcast(float* data, size_t count, int root) override {
      Status s = Post(data, count * sizeof(float));
      std::vector<float> copy(count);
      if (s.ok() && count > 0) {
        std::memcpy(copy.data(), group_.slots_[static_cast<size_t>(root)], count * sizeof(float));
      }
      group_.barrier_.arrive_and_wait();
      if (s.ok() && count > 0) std::memcpy(data, copy.data(), count * sizeof(float));
      return s;
    }
    Status Barrier() override {
      group_.barrier_.arrive_and_wait();
      return Status::Ok();
    }
    using Collective::AllreduceSum;
    using Collective::Broadcast;

    int64_t calls() const { return calls_; }
    int64_t bytes() const { return bytes_; }

   private:
    // Publishes this rank's buffer and waits for every rank's; fails alike on every rank when
    // the sizes differ.
    Status Post(const void* data, size_t bytes) {
      group_.slots_[static_cast<size_t>(rank_)] = data;
      group_.sizes_[static_cast<size_t>(rank_)] = bytes;
      group_.barrier_.arrive_and_wait();
      for (size_t b : group_.sizes_) {
        if (b != bytes) return Status::InvalidArgument("thread-ranks: buffer sizes differ");
      }
      return Status::Ok();
    }

    ThreadRanks& group_;
    int rank_;
    int64_t calls_ = 0;
    int64_t bytes_ = 0;
  };

  int world_;
  std::barrier<> barrier_;
  std::vector<const void*> slots_;
  std::vector<size_t> sizes_;
  std::vector<std::unique_ptr<Rank>> ranks_;
};

}  // namespace dljob::trainer
