#!/usr/bin/env python3
"""The run-to-run and within-run spread of one healthy H200's smem_stride
rows (data/h200_alternating_smem_runs.ndjson: nine runs of 5 and 20
samples, alternated on an idle card), in log time per iteration: the
numbers tests/unit/test_shift.c's simulated_history models a healthy card
by (GB_HISTORY_MIN_RUNS in common/shift.h).

run sd: the standard deviation of the runs' medians; within: the robust
sd (1.4826 MAD) of the samples about their own run's median."""
import json
import math
import os
import statistics as st
import sys


def spreads(path):
    rows = {}
    for line in open(path):
        run = json.loads(line)
        for row in run["results"]["rows"]:
            logs = [math.log(v / row["iterations_per_sample"]) for v in row["samples"]]
            med = st.median(logs)
            rows.setdefault(row["stride"], []).append((med, [v - med for v in logs]))
    out = {}
    for stride, runs in sorted(rows.items()):
        medians = [m for m, _ in runs]
        devs = [abs(d) for _, ds in runs for d in ds]
        out[stride] = (st.stdev(medians), 1.4826 * st.median(devs), len(runs))
    return out


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "data", "h200_alternating_smem_runs.ndjson")
    for stride, (run_sd, within, n) in spreads(path).items():
        print(f"stride {stride:2}: {n} runs, run-to-run sd {100 * run_sd:.2f}%, "
              f"within-run robust sd {100 * within:.2f}%")
