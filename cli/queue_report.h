// How `dljob queue list` and `dljob queue get` print DLQueues (jobs/dlqueue_types.h).
//
// list: one row per GPU product of each queue — its quota and the operator's account of it.
//
//   NAME      GPU PRODUCT             NOMINAL   BORROWING LIMIT   USED   BORROWED   PENDING RUNNING
//   default   (any)                   16        16                8      0          2         3
//   team-a    NVIDIA-A100-SXM4-80GB   32        unlimited         40     8          3         5
//
// A product with use but no quota gets a row with NOMINAL "-". USED and BORROWED are "-" while the
// operator has written no status for the queue, PENDING and RUNNING while it has not counted them.
// wide adds COHORT (the queues that lend each other idle quota; "(default)" for a queue that
// names none) and AGE. get: the queue's name, cohort, age and job counts, its table, then its
// jobs — the DLJobs that name it in spec.scheduling.queue ("default" when unset) — with, for each
// waiting one, its start estimate (start_estimate_view.h) and the message of its Queued condition
// (why it waits):
//
//   NAMESPACE   NAME   PHASE    GPUS   PRIORITY   ESTIMATED START   REASON
//   ml          big    Queued   16     10         ~45m              needs 16 GPUs (A100) in queue …
//
// wide adds the job's GPU PRODUCT (its nvidia.com/gpu.product node selector), WAITING (since the
// Queued condition last changed) and AGE. json and yaml print the API objects, as kubectl does:
// the DLQueue for get, a DLQueueList for list.
//
// Pure functions of their inputs and "now"; thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "cli/output.h"
#include "jobs/dljob_types.h"
#include "jobs/dlqueue_types.h"

namespace dljob {

std::string FormatQueues(const std::vector<DLQueue>& queues, OutputFormat format,
                         std::chrono::system_clock::time_point now);

// The queue a job waits and runs in: spec.scheduling.queue, "default" when unset or empty.
std::string QueueOf(const DLJob& job);
// Why a waiting job waits: the message of its Queued condition while its phase is Queued (or it
// has no phase yet); "" otherwise.
std::string WaitingReason(const DLJob& job);

// The jobs of `queue` among `jobs`, finished ones only when `with_finished`, in the queue's
// order: admitted jobs first (oldest first), then waiting ones by priority (highest first), then
// age (oldest first) — FIFO within a priority.
std::vector<DLJob> JobsOfQueue(const std::vector<DLJob>& jobs, const std::string& queue,
                               bool with_finished);

// `jobs` are JobsOfQueue's answer. For json and yaml only the DLQueue is printed.
std::string FormatQueue(const DLQueue& queue, const std::vector<DLJob>& jobs, OutputFormat format,
                        std::chrono::system_clock::time_point now);

}  // namespace dljob
