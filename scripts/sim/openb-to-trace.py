#!/usr/bin/env python3
"""Converts Alibaba's public GPU-cluster trace "cluster-trace-gpu-v2023" (OpenB) into a dljob-sim
trace: a nodes file and a jobs file (tools/sim/trace.h), to replay a real cluster's workload
through dljob's queue and placement code (docs/benchmarks/real-trace.md).

Where the trace comes from: the GitHub repository alibaba/clusterdata, folder
cluster-trace-gpu-v2023/csv/ (its README.md describes the columns). Download the two files
yourself; this script reads local files only and fetches nothing:

    openb_pod_list_default.csv     name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,
                                   pod_phase,creation_time,deletion_time,scheduled_time
                                   (8,152 pods; times in seconds)
    openb_node_list_gpu_node.csv   sn,cpu_milli,memory_mib,gpu,model   (1,213 GPU nodes)

Usage:

    scripts/sim/openb-to-trace.py --pods openb_pod_list_default.csv \
        --nodes openb_node_list_gpu_node.csv --out-dir T [--elastic-share 0.5] [--seed 1] \
        [--node-every K] [--time-limits synthetic|none]

writes T/nodes.csv and T/jobs.csv (replay with dljob-sim --nodes T/nodes.csv --jobs T/jobs.csv;
there is no queues file: one unlimited "default" queue) and prints a summary of what it kept and
skipped on stdout. Python 3 standard library only. Deterministic for a seed.

Every mapping decision:
  - Jobs are the pods that ask for at least one GPU (num_gpu >= 1); CPU-only pods are dropped
    (dljob schedules GPUs; a trace job asks for GPUs only, not CPU or memory).
  - A fractional GPU (gpu_milli < 1000, a GPU-sharing pod; only num_gpu == 1 pods have one) counts
    as one whole GPU: dljob schedules whole GPUs, so such a pod holds a GPU alone here.
  - submit_time = creation_time (the trace already starts at 0).
  - duration = deletion_time - scheduled_time: how long the pod held its GPUs. Pods never
    scheduled (empty scheduled_time: the "Pending" pods, deleted before they ran) and pods with a
    non-positive duration are skipped and counted. Failed pods are kept: they held GPUs until
    they were deleted. Pods still running when the trace was cut have deletion_time equal to the
    trace's end, so their durations are cut there (counted as "ran to the trace's end").
  - num_gpu = the pod's num_gpu (1-8). A pod is one job of one worker (gpus_per_worker = num_gpu):
    a pod runs on one node, as in the trace.
  - GPU model: from gpu_spec when it names exactly one model (a node model of the node list);
    empty (any model) otherwise. A spec naming several models ("V100M16|V100M32") is left empty
    too, because a dljob-sim job names at most one model; both are counted. (In
    openb_pod_list_default.csv every gpu_spec is empty.) Nodes keep their model
    (nvidia.com/gpu.product), so jobs that name one are placed on it.
  - queue "default", priority 0 for every job: the trace's qos (LS, BE, Burstable, Guaranteed)
    is a Kubernetes resource class, not a scheduling priority, and the trace has no queues.
  - Elastic jobs (--elastic-share F, default 0): the trace has none, so F of the multi-GPU jobs
    (num_gpu >= 2), drawn from a random stream of their own (seeded; a job is elastic when its
    draw is below F, so the jobs chosen at a smaller F are among those chosen at a larger one, and
    nothing else in the trace depends on F), are made elastic from a quarter of their GPUs (at
    least 1) up to all of them. An elastic job must be able to shrink by whole workers, so it is
    split into workers of max(1, num_gpu / 4) GPUs (8 GPUs: 4 workers of 2; 4: 4 of 1; 2: 2 of 1)
    and min_gpu is one worker. Its workers may land on different nodes, unlike the one pod it
    was; the same file replayed with dljob-sim --rigid runs it at num_gpu with the same workers,
    so elastic and rigid replays of one file compare like with like.
  - Time limits (--time-limits, default synthetic): the trace has none. A dljob-sim job with no
    limit is never expected to end until it runs, so start-time estimates behind it are unknown.
    "synthetic" gives each job the synthetic trace's (tools/sim/trace_gen.h): its duration times
    U(1.2, 3) plus 10 minutes, rounded up to 10 minutes (users overestimate), drawn from a seeded
    stream of its own; an elastic job's limit is scaled by num_gpu / min_gpu (rounded up to 10
    minutes) so a run on its minimum throughout fits it. No job reaches its limit on its full
    GPUs. "none" leaves the column empty.
  - Nodes: every GPU node of the node list (sn, gpu, model, cpu_milli, memory_mib), or with
    --node-every K only every K-th in the list's order (its 0th, K-th, 2K-th ...), a smaller
    cluster with the same mix of node sizes and models: the trace's own cluster of 6,212 GPUs is
    never more than about 1% allocated by these pods, so nothing would wait on it.
"""

import argparse
import csv
import math
import os
import random
import sys
from collections import Counter

POD_COLUMNS = ["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos",
               "pod_phase", "creation_time", "deletion_time", "scheduled_time"]
NODE_COLUMNS = ["sn", "cpu_milli", "memory_mib", "gpu", "model"]


def fail(message):
    print("openb-to-trace: error: " + message, file=sys.stderr)
    sys.exit(1)


def read_csv(path, columns):
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in columns if c not in (reader.fieldnames or [])]
            if missing:
                fail("%s: header lacks %s" % (path, ", ".join(missing)))
            return list(reader)
    except OSError as e:
        fail("%s: %s" % (path, e.strerror))


def to_int(path, row, column, line):
    try:
        return int(row[column])
    except (TypeError, ValueError):
        fail("%s:%d: %s: not an integer: %r" % (path, line, column, row[column]))


def round_up(seconds, step=600):
    return (seconds + step - 1) // step * step


def main():
    ap = argparse.ArgumentParser(
        description="Converts Alibaba's cluster-trace-gpu-v2023 (OpenB) CSVs into dljob-sim's "
                    "nodes.csv and jobs.csv (see this file's header for every mapping).")
    ap.add_argument("--pods", required=True, help="openb_pod_list_default.csv (or another pod list)")
    ap.add_argument("--nodes", required=True, help="openb_node_list_gpu_node.csv")
    ap.add_argument("--out-dir", required=True, help="where to write nodes.csv and jobs.csv")
    ap.add_argument("--elastic-share", type=float, default=0.0,
                    help="share of the multi-GPU jobs made elastic, from a quarter of their GPUs "
                         "up to all (default 0)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the elastic and time-limit draws")
    ap.add_argument("--node-every", type=int, default=1,
                    help="keep every K-th GPU node of the node list (default 1: all)")
    ap.add_argument("--time-limits", choices=["synthetic", "none"], default="synthetic",
                    help="synthetic: duration x U(1.2, 3) + 10 min, rounded up to 10 min "
                         "(default); none: no limits")
    a = ap.parse_args()
    if not 0.0 <= a.elastic_share <= 1.0:
        fail("--elastic-share must be in [0, 1], got %g" % a.elastic_share)
    if a.node_every < 1:
        fail("--node-every must be at least 1, got %d" % a.node_every)

    # Nodes.
    node_rows = read_csv(a.nodes, NODE_COLUMNS)
    nodes = []
    for i, row in enumerate(node_rows):
        line = i + 2
        gpus = to_int(a.nodes, row, "gpu", line)
        if gpus < 1:
            continue  # the GPU node list has none, but a full node list would
        nodes.append({"name": row["sn"], "num_gpu": gpus, "gpu_model": row["model"].strip(),
                      "cpu_milli": to_int(a.nodes, row, "cpu_milli", line),
                      "memory_mib": to_int(a.nodes, row, "memory_mib", line)})
    all_gpu_nodes = len(nodes)
    all_gpus = sum(n["num_gpu"] for n in nodes)
    nodes = [n for i, n in enumerate(nodes) if i % a.node_every == 0]
    if not nodes:
        fail("%s: no GPU nodes left" % a.nodes)
    models = {n["gpu_model"] for n in nodes if n["gpu_model"]}

    # Pods.
    pod_rows = read_csv(a.pods, POD_COLUMNS)
    elastic_draw = random.Random(a.seed * 1000003 + 1)  # one stream per purpose
    limit_draw = random.Random(a.seed * 1000003 + 2)
    count = Counter()
    jobs = []
    for i, row in enumerate(pod_rows):
        line = i + 2
        count["pods"] += 1
        gpus = to_int(a.pods, row, "num_gpu", line)
        if gpus < 1:
            count["cpu_only"] += 1
            continue
        count["gpu_pods"] += 1
        if row["scheduled_time"].strip() == "":
            count["never_scheduled"] += 1
            continue
        created = to_int(a.pods, row, "creation_time", line)
        scheduled = to_int(a.pods, row, "scheduled_time", line)
        deleted = to_int(a.pods, row, "deletion_time", line)
        duration = deleted - scheduled
        if duration <= 0:
            count["non_positive"] += 1
            continue
        if created < 0:
            fail("%s:%d: creation_time is negative" % (a.pods, line))
        if to_int(a.pods, row, "gpu_milli", line) < 1000:
            count["fractional"] += 1
        spec = row["gpu_spec"].strip()
        model = ""
        if spec and spec.lower() != "nan":
            names = [s for s in spec.split("|") if s]
            if len(names) == 1:
                model = names[0]
                count["one_model"] += 1
            else:
                count["several_models"] += 1
        count["phase_" + row["pod_phase"]] += 1
        job = {"name": row["name"], "submit_time": created, "duration": duration,
               "num_gpu": gpus, "gpus_per_worker": gpus, "gpu_model": model, "time_limit": "",
               "min_gpu": "", "max_gpu": "", "deleted": deleted}
        if gpus >= 2:
            count["multi_gpu"] += 1
            if elastic_draw.random() < a.elastic_share:
                per_worker = max(1, gpus // 4)
                job["gpus_per_worker"] = per_worker
                job["min_gpu"] = per_worker
                job["max_gpu"] = gpus
                count["elastic"] += 1
        if a.time_limits == "synthetic":
            limit = round_up(int(math.ceil(duration * limit_draw.uniform(1.2, 3.0))) + 600)
            if job["min_gpu"] != "":
                limit = round_up((limit * gpus + job["min_gpu"] - 1) // job["min_gpu"])
            job["time_limit"] = limit
        jobs.append(job)
    if not jobs:
        fail("%s: no pod kept" % a.pods)
    jobs.sort(key=lambda j: (j["submit_time"], j["name"]))
    trace_end = max(j["deleted"] for j in jobs)
    censored = [j for j in jobs if j["deleted"] == trace_end]
    unknown_models = sorted({j["gpu_model"] for j in jobs if j["gpu_model"]} - models)

    # Files.
    os.makedirs(a.out_dir, exist_ok=True)
    with open(os.path.join(a.out_dir, "nodes.csv"), "w", newline="") as f:
        f.write("name,num_gpu,gpu_model,cpu_milli,memory_mib\n")
        for n in nodes:
            f.write("%s,%d,%s,%d,%d\n" % (n["name"], n["num_gpu"], n["gpu_model"], n["cpu_milli"],
                                          n["memory_mib"]))
    elastic = count["elastic"] > 0
    with open(os.path.join(a.out_dir, "jobs.csv"), "w", newline="") as f:
        f.write("name,submit_time,duration,num_gpu,gpus_per_worker,queue,priority,gpu_model,"
                "time_limit" + (",min_gpu,max_gpu" if elastic else "") + "\n")
        for j in jobs:
            f.write("%s,%d,%d,%d,%d,default,0,%s,%s" % (j["name"], j["submit_time"], j["duration"],
                                                        j["num_gpu"], j["gpus_per_worker"],
                                                        j["gpu_model"], j["time_limit"]))
            f.write(",%s,%s\n" % (j["min_gpu"], j["max_gpu"]) if elastic else "\n")

    # Summary.
    durations = sorted(j["duration"] for j in jobs)
    gpus_by_size = Counter(j["num_gpu"] for j in jobs)
    node_gpus = sum(n["num_gpu"] for n in nodes)
    first = jobs[0]["submit_time"]
    last = jobs[-1]["submit_time"]
    gpu_seconds = sum(j["num_gpu"] * j["duration"] for j in jobs)
    print("read %d pods from %s: %d ask for no GPU (dropped), %d for at least one"
          % (count["pods"], a.pods, count["cpu_only"], count["gpu_pods"]))
    print("skipped %d GPU pods never scheduled and %d with a non-positive duration"
          % (count["never_scheduled"], count["non_positive"]))
    print("kept %d jobs (phases: %s): %d fractional-GPU pods counted as 1 GPU; by GPUs %s; "
          "%d multi-GPU, %d of them elastic (--elastic-share %g, seed %d)"
          % (len(jobs), ", ".join("%s %d" % (k[6:], v) for k, v in sorted(count.items())
                                  if k.startswith("phase_")),
             count["fractional"], ", ".join("%d: %d" % kv for kv in sorted(gpus_by_size.items())),
             count["multi_gpu"], count["elastic"], a.elastic_share, a.seed))
    print("GPU model: %d jobs name one, %d name several (left any), the rest any%s"
          % (count["one_model"], count["several_models"],
             "; not on any node kept: " + ", ".join(unknown_models) if unknown_models else ""))
    print("%d jobs ran to the trace's end (deleted at %d s), their durations cut there"
          % (len(censored), trace_end))
    print("durations: median %d s, p90 %d s, max %d s; %d GPU-hours in all"
          % (durations[len(durations) // 2], durations[int(len(durations) * 0.9)], durations[-1],
             gpu_seconds // 3600))
    print("submissions from %d s to %d s (%.1f days); time limits: %s"
          % (first, last, (last - first) / 86400.0, a.time_limits))
    print("wrote %d nodes (%d GPUs; --node-every %d of %d GPU nodes with %d GPUs; models %s) and "
          "%d jobs to %s: nodes.csv, jobs.csv"
          % (len(nodes), node_gpus, a.node_every, all_gpu_nodes, all_gpus,
             ", ".join("%s %d" % kv for kv in sorted(Counter(n["gpu_model"] for n in nodes).items())),
             len(jobs), a.out_dir))


if __name__ == "__main__":
    main()
