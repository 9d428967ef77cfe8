#!/usr/bin/env python3
"""check_results.py - judges real gpubench-worker runs on a GPU.

Used by gpu_check.sh (ctest, label gpu: loose tolerances, small runs) and
h200_check.sh (the targets of issue 3 on the lent H200).  Reads the JSON
that `gpubench-worker run NAME PARAMS --json` and `--serve` print; prints
one PASS / MISS line per check and exits 1 if any check missed.

  check_results.py results MODE STRIDE.json [STRIDE2.json] PATTERN.json
                   [CONFLICT.json] TRANSPOSE.json [TRANSPOSE2.json] [--write OUT.json]
      MODE is "ctest" or "h200".  Files are recognised by their benchmark.
  check_results.py serve OUTPUT RC      the protocol session of gpu_check.sh
  check_results.py fault OUTPUT RC      the sticky-error session
"""
import json
import sys

# Tolerances: (ctest, h200).  The h200 values are issue 3's targets.
RATIO_TOL = {"ctest": 0.15, "h200": 0.03}
BASELINE_MIN = {"ctest": 0.50, "h200": 0.90}
CEILING_MIN_GBPS = {"ctest": 0.0, "h200": 4200.0}
TILE33_MIN = {"ctest": 0.0, "h200": 0.80}
REPEAT_TOL = 0.02

results = []


def check(name, ok, detail):
    results.append({"check": name, "pass": bool(ok), "detail": detail})
    print("%-5s %-44s %s" % ("PASS" if ok else "MISS", name, detail))


def load(path):
    with open(path) as f:
        return json.load(f)


def rows(run):
    return run["result"]["rows"]


def check_smem_stride(run, mode, tag):
    tol = RATIO_TOL[mode]
    worst = max(rows(run), key=lambda r: abs(r["ratio_to_predicted"] - 1))
    detail = ", ".join("%d:%.3f/%d" % (r["stride"], r["ratio"], r["predicted_degree"])
                       for r in rows(run))
    check("%s ratios within %.0f%% of gcd(s,32)" % (tag, 100 * tol),
          abs(worst["ratio_to_predicted"] - 1) <= tol, detail)
    check("%s every lane a distinct word" % tag,
          all(r["distinct_words"] for r in rows(run)), "distinct_words on every row")
    peak = run["result"]["summary"]["peak"]
    # The conservative share: against the peak at the maximum SM clock.
    frac = peak["baseline_fraction_of_peak_at_max_clock"]
    check("%s stride-1 >= %.0f%% of SMs x 128 B x clock" % (tag, 100 * BASELINE_MIN[mode]),
          frac >= BASELINE_MIN[mode] and peak["baseline_fraction_of_peak"] <= 1.0,
          "%.1f%%: %.0f of %.0f GB/s (%d SMs x 128 B x %.0f MHz max); %.1f B/clk/SM in "
          "SM cycles (%.1f%%)"
          % (100 * frac, peak["baseline_gbps"], peak["peak_gbps_at_max_clock"],
             peak["sm_count"], peak["max_sm_clock_mhz"],
             peak["baseline_bytes_per_clock_per_sm"], 100 * peak["baseline_fraction_of_peak"]))
    meta = run["meta"]
    check("%s clock did not drop" % tag, meta.get("clock_dropped") is not True,
          "clock_dropped=%s" % meta.get("clock_dropped"))


def check_pattern(run, mode, tag):
    row = rows(run)[0]
    tol = RATIO_TOL[mode]
    check("%s ratio within %.0f%% of prediction" % (tag, 100 * tol),
          abs(row["ratio_to_predicted"] - 1) <= tol,
          "predicted %d (broadcast lanes %d), ratio %.3f"
          % (row["predicted_degree"], row["broadcast_lanes"], row["ratio"]))


def check_transpose(run, mode, tag):
    by = {r["variant"]: r for r in rows(run)}
    s = run["result"]["summary"]
    ceiling = s["ceiling"]["gbps"]
    check("%s every output verified" % tag, all(r["verified"] for r in rows(run)),
          ", ".join(by))
    over = [v for v, r in by.items() if r["share_of_ceiling"] > 1.0]
    check("%s no share over 100%%" % tag, not over and not s["ceiling_suspect"],
          "over: %s" % (over or "none"))
    check("%s copy ceiling >= %.0f GB/s" % (tag, CEILING_MIN_GBPS[mode]),
          ceiling >= CEILING_MIN_GBPS[mode],
          "%.1f GB/s (%s; memcpy %.1f, copy kernel %.1f)"
          % (ceiling, s["ceiling"]["source"], s["ceiling"]["memcpy_gbps"],
             s["ceiling"]["copy_kernel_gbps"]))
    if "tile33" in by and "tile32" in by:
        t33, t32 = by["tile33"]["share_of_ceiling"], by["tile32"]["share_of_ceiling"]
        check("%s tile33 >= %.0f%% of ceiling" % (tag, 100 * TILE33_MIN[mode]),
              t33 >= TILE33_MIN[mode], "tile33 %.1f%%" % (100 * t33))
        check("%s tile32 clearly below tile33" % tag, t32 < t33 - 0.05,
              "tile32 %.1f%%, tile33 %.1f%%" % (100 * t32, 100 * t33))
    if "tile32_swizzle" in by:
        check("%s swizzle conflict-free like tile33" % tag,
              by["tile32_swizzle"]["share_of_ceiling"] > by.get("tile32", {"share_of_ceiling": 0})["share_of_ceiling"],
              "tile32_swizzle %.1f%%" % (100 * by["tile32_swizzle"]["share_of_ceiling"]))


def medians(run):
    key = "stride" if run["result"]["rows"] and "stride" in run["result"]["rows"][0] else "variant"
    out = {str(r[key]): r["median_ms"] for r in rows(run)}
    s = run["result"]["summary"]
    if "memcpy" in s:
        out["memcpy"] = s["memcpy"]["median_ms"]
    if "baseline" in s:
        out["baseline"] = s["baseline"]["median_ms"]
    return out


def check_repeat(a, b, tag):
    ma, mb = medians(a), medians(b)
    diffs = {k: abs(mb[k] / ma[k] - 1) for k in ma if k in mb}
    worst = max(diffs, key=diffs.get)
    check("%s two runs agree within 2%%" % tag, diffs[worst] <= REPEAT_TOL,
          "largest difference %.2f%% (%s)" % (100 * diffs[worst], worst))


def cmd_results(args):
    write = None
    if "--write" in args:
        i = args.index("--write")
        write = args[i + 1]
        args = args[:i] + args[i + 2:]
    mode, paths = args[0], args[1:]
    runs = {}
    for p in paths:
        run = load(p)
        rs = run["result"]["rows"]
        if rs and "stride" in rs[0]:
            kind = "smem_stride"
        elif rs and rs[0].get("variant") == "pattern":
            kind = "smem_pattern"
        else:
            kind = "transpose"
        runs.setdefault(kind, []).append((p, run))
    for p, run in runs.get("smem_stride", []):
        check_smem_stride(run, mode, "smem_stride[%s]" % p.split("/")[-1])
    for p, run in runs.get("smem_pattern", []):
        check_pattern(run, mode, "smem_pattern[%s]" % p.split("/")[-1])
    for p, run in runs.get("transpose", []):
        check_transpose(run, mode, "transpose[%s]" % p.split("/")[-1])
    for kind in ("smem_stride", "transpose"):
        if len(runs.get(kind, [])) >= 2:
            check_repeat(runs[kind][0][1], runs[kind][1][1], kind)
    if write:
        with open(write, "w") as f:
            json.dump({"mode": mode, "checks": results}, f, indent=1)


def lines(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def cmd_serve(args):
    out, rc = lines(args[0]), int(args[1])
    check("serve: ready first", out and out[0].get("event") == "ready"
          and "uuid" in out[0].get("device", {}), str(out[0] if out else None)[:120])
    by_id = {}
    for l in out[1:]:
        by_id.setdefault(l.get("id"), []).append(l)
    a, b, c = by_id.get("a", []), by_id.get("b", []), by_id.get("c", [])
    check("serve: unknown benchmark answered",
          len(a) == 1 and a[0]["event"] == "error" and a[0]["code"] == "unknown_benchmark",
          str(a)[:160])
    check("serve: bad params answered with field",
          len(b) == 1 and b[0]["code"] == "invalid_params" and b[0].get("field") == "params.stides",
          str(b)[:160])
    progress = [l for l in c if l["event"] == "progress"]
    final = [l for l in c if l["event"] in ("result", "error")]
    check("serve: progress then one result",
          len(final) == 1 and final[0]["event"] == "result" and c[-1] is final[0]
          and progress and progress[-1]["done"] == progress[-1]["total"],
          "%d progress lines, final %s" % (len(progress), final[0]["event"] if final else None))
    check("serve: exit 0 at end of input", rc == 0, "rc=%d" % rc)


def cmd_fault(args):
    out, rc = lines(args[0]), int(args[1])
    f = [l for l in out if l.get("id") == "f"]
    g = [l for l in out if l.get("id") == "g"]
    check("fault: cuda_error names the error",
          len(f) == 1 and f[0]["code"] == "cuda_error"
          and "cudaErrorIllegalAddress" in f[0]["message"], str(f)[:200])
    check("fault: worker exits non-zero, next job not taken", rc != 0 and not g, "rc=%d" % rc)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"results": cmd_results, "serve": cmd_serve, "fault": cmd_fault}[cmd](args)
    return 0 if all(r["pass"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
