"""Reads daemon_check.sh's JSON and prints what the daemon measured and
whether each check held: every run on every GPU done, ratios against
gcd(stride, 32), the transpose shares, the faulting and hanging kernels
failing with their reasons and the next run succeeding."""
import json
import math
import sys


def runs_of(x):
    return x["runs"] if isinstance(x, dict) and "runs" in x else [x]


def main(path):
    d = json.load(open(path))
    checks = []

    def check(name, ok, detail=""):
        checks.append(ok)
        print("%s %s %s" % ("PASS" if ok else "FAIL", name, detail))

    print("GPUs:", [(g["index"], g["name"], g["uuid"]) for g in d["devices_before"]["devices"]])
    for run in runs_of(d["stride_all"]):
        meta = run.get("meta") or {}
        dev = run["device"]
        check("smem_stride done on GPU %s" % dev["index"], run["status"] == "done", run.get("error") or "")
        if run["status"] != "done":
            continue
        print("  %s %s driver %s CUDA %s, SM clock %s -> %s MHz, clock_dropped %s" % (
            dev["name"], dev["uuid"], meta.get("driver", {}).get("nvidia_version"),
            meta.get("cuda", {}).get("runtime_version"),
            meta.get("state_before", {}).get("sm_clock_mhz"),
            meta.get("state_after", {}).get("sm_clock_mhz"), meta.get("clock_dropped")))
        worst = 0
        counters = meta.get("counters", {})
        print("  counters: available %s%s" % (counters.get("available"),
              "" if counters.get("available") else " (%s)" % counters.get("reason")))
        for row in run["results"]["rows"]:
            want = math.gcd(row["stride"], 32)
            err = abs(row["ratio"] - want) / want
            worst = max(worst, err)
            print("  stride %4d  predicted %2d  median %.4f ms  ratio %.3f  conflicts %s (prediction implies %s)" % (
                row["stride"], row["predicted_degree"], row["median_ms"], row["ratio"],
                row.get("bank_conflicts"), row.get("expected_bank_conflicts")))
        if counters.get("available"):
            check("  counters agree with the prediction on every stride on GPU %s" % dev["index"],
                  all(r.get("counters_agree") for r in run["results"]["rows"]))
        check("  every ratio within 3%% of gcd(stride,32) on GPU %s" % dev["index"], worst <= 0.03,
              "(worst %.2f%%)" % (100 * worst))
    for run in runs_of(d["transpose_all"]):
        dev = run["device"]
        check("transpose done on GPU %s" % dev["index"], run["status"] == "done", run.get("error") or "")
        if run["status"] != "done":
            continue
        s = run["results"]["summary"]
        print("  ceiling %s" % json.dumps({k: v for k, v in s.items() if "ceiling" in k})[:300])
        for row in run["results"]["rows"]:
            print("  %-16s %.4f ms  %7.1f GB/s  share %.3f  verified %s" % (
                row["variant"], row["median_ms"], row["gbps"], row["share_of_ceiling"], row["verified"]))
        shares = {r["variant"]: r["share_of_ceiling"] for r in run["results"]["rows"]}
        check("  no share over 100%% on GPU %s" % dev["index"], max(shares.values()) <= 1.0)
        check("  tile33 >= 80%% of the ceiling on GPU %s" % dev["index"], shares.get("tile33", 0) >= 0.8)
        check("  all verified on GPU %s" % dev["index"], all(r["verified"] for r in run["results"]["rows"]))
    p = d["pattern"]
    check("smem_pattern tx*2%32 done, degree 1", p["status"] == "done" and
          p["results"]["rows"][0]["predicted_degree"] == 1,
          "ratio %.3f" % p["results"]["rows"][0].get("ratio", float("nan")) if p["status"] == "done" else "")
    f = d["fault"]
    check("test_fault failed with cuda_error", f["status"] == "failed" and f["error"]["code"] == "cuda_error",
          json.dumps(f.get("error")))
    check("the run after the fault succeeded", d["after_fault"]["status"] == "done")
    h = d["hang"]
    check("test_hang failed with timeout", h["status"] == "failed" and h["error"]["code"] == "timeout",
          json.dumps(h.get("error")))
    check("the run after the hang succeeded", d["after_hang"]["status"] == "done")
    for g in d["devices_after"]["devices"]:
        print("GPU %s worker: %s" % (g["index"], json.dumps(g["worker"])))
    # The sweep's params make one comparison: one series a GPU.  (The short
    # runs after the fault and the hang have other params, so they are a
    # comparison of their own and must not be merged into it.)
    sweep = runs_of(d["stride_all"])[0]["params"]
    cards = [s["card"]["uuid"] for s in d["compare_stride"]["series"] if s["params"] == sweep]
    check("compare: the sweep has one series per GPU",
          sorted(cards) == sorted(g["uuid"] for g in d["devices_before"]["devices"]),
          "(%d series in all)" % len(d["compare_stride"]["series"]))
    print("%d passed, %d failed" % (sum(checks), len(checks) - sum(checks)))
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
