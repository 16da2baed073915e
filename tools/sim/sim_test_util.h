// The tiny trace the simulator's tests compute by hand: 2 nodes of 4 A100s and 4 jobs.
//
//   j1  t=0  100 s  4 GPUs            time limit 100
//   j2  t=1  100 s  8 GPUs (2 × 4)    time limit 200: needs both nodes; first in line at t=1
//   j3  t=2   50 s  2 GPUs            time limit 60: ends by t=62, before j2's reservation (100)
//   j4  t=3  300 s  4 GPUs            time limit 400: would hold a node past t=100
//
// fifo (strict order): j1 0–100, j2 100–200, j3 200–250, j4 200–500.
//   JCT 100, 199, 248, 497 (avg 261); wait 0, 99, 198, 197 (avg 123.5); makespan 500.
// dljob (backfill): j3 backfills 2–52 on the free node; j1 0–100, j2 100–200, j4 200–500.
//   JCT 100, 199, 50, 497 (avg 211.5); wait 0, 99, 0, 197 (avg 74); makespan 500.
// Both hold 2,500 GPU-seconds over 500 s of 8 GPUs: allocation 0.625.
#pragma once

#include <string>

namespace dljob::scheduler::sim::testing {

inline const std::string kTinyNodes =
    "name,num_gpu,gpu_model,cpu_milli,memory_mib\n"
    "n1,4,A100,32000,256000\n"
    "n2,4,A100,32000,256000\n";
inline const std::string kTinyJobs =
    "name,submit_time,duration,num_gpu,gpus_per_worker,queue,priority,gpu_model,time_limit\n"
    "j1,0,100,4,4,,,,100\n"
    "j2,1,100,8,4,,,,200\n"
    "j3,2,50,2,2,,,,60\n"
    "j4,3,300,4,4,,,,400\n";

}  // namespace dljob::scheduler::sim::testing
