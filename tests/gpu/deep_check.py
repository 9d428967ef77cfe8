"""deep_check.py KNOWN_ANSWER.json MEMTEST.json SOAK.json - asserts on
issue 32's deep checks as the worker printed them (`run NAME PARAMS
--json`), for tests/gpu/deep_check.sh; also runs on the H200's files in
examples/h200_deep_worker/.  Prints one line a check, PASS or FAIL with
the reason; exits 1 when a check failed.

The bounds, and why (docs/DEEP_CHECKS.md, kernels/README.md):
- known_answer: every kind available on a card with cuBLAS, 0 mismatches
  (a good card computes exactly the host's answer), every SM covered by
  every kind that records %smid (the grid is sized to fill every SM), a
  16-hex-digit result_hash and results checked;
- memtest: 0 errors, the region at least the share of free memory asked
  (rounded up to 2 MiB, so never below it), every pattern at >= 0.70 of
  the memcpy ceiling of the same run (the issue's aim; 1.02-1.04 on the
  H200), no ECC or row-remap counter rising;
- soak: the three windows for each load run, a one-second series as long
  as the run, every sustained_share >= 0.90 (a card that loses a tenth of
  its rate while the load is held is fading), no thermal or hardware
  slowdown, and the highest temperature below NVML's slowdown threshold."""
import json
import re
import sys

failed = []


def check(ok, what):
    print(("PASS: " if ok else "FAIL: ") + what)
    if not ok:
        failed.append(what)


def load(path):
    with open(path) as f:
        d = json.load(f)
    return d.get("result", d)


def known_answer(r):
    s = r["summary"]
    check(s["mismatches"] == 0, "known_answer: %s mismatches" % s["mismatches"])
    check(s["sms_covered"] == s["sm_count"],
          "known_answer: %s of %s SMs covered" % (s["sms_covered"], s["sm_count"]))
    for row in r["rows"]:
        k = row["kind"]
        check(row["available"], "known_answer %s available (%s)" % (k, row.get("reason")))
        if not row["available"]:
            continue
        check(row["verified"] and row["mismatches"] == 0 and not row["first_mismatches"],
              "known_answer %s: %s mismatches %s" % (k, row["mismatches"],
                                                     row["first_mismatches"][:2]))
        check(row["checked"] > 0 and row["launches"] > 0,
              "known_answer %s: %s results checked in %s launches" % (k, row["checked"],
                                                                     row["launches"]))
        check(re.fullmatch(r"[0-9a-f]{16}", row["result_hash"]) is not None,
              "known_answer %s: result_hash %s" % (k, row["result_hash"]))
        if k != "cublas_bf16":
            check(row["sms_covered"] == row["sm_count"],
                  "known_answer %s: %s of %s SMs" % (k, row["sms_covered"], row["sm_count"]))


def memtest(r, fraction):
    s = r["summary"]
    check(s["errors"] == 0, "memtest: %s errors" % s["errors"])
    check(s["share_of_free"] >= fraction,
          "memtest: %.6f of free memory tested (asked %.2f)" % (s["share_of_free"], fraction))
    check(s["ecc_increase"] is False, "memtest: ECC counters %s -> %s" % (s["ecc_before"],
                                                                          s["ecc_after"]))
    for row in r["rows"]:
        if row["pattern"] == "memcpy":
            continue
        check(row["verified"] and row["errors"] == 0,
              "memtest %s: %s errors %s" % (row["pattern"], row["errors"],
                                            row["first_errors"][:2]))
        check(row["share_of_memcpy"] >= 0.70,
              "memtest %s: %.0f GB/s = %.3f of memcpy (%.0f)" % (
                  row["pattern"], row["value"], row["share_of_memcpy"], s["memcpy_gbps"]))


def soak(r):
    s = r["summary"]
    loads = sorted(s["sustained_share"])
    labels = sorted(row["label"] for row in r["rows"])
    want = sorted("%s %s" % (l, w) for l in loads for w in ("first_10s", "last_30s", "worst_10s"))
    check(loads and labels == want, "soak: rows %s" % labels)
    check(len(s["series"]) == s["seconds"],
          "soak: %d seconds in the series of a %s s run" % (len(s["series"]), s["seconds"]))
    for load, share in s["sustained_share"].items():
        check(share is not None and share >= 0.90, "soak %s: sustained_share %s" % (load, share))
    check(s["first_slowdown_s"] is None,
          "soak: first slowdown %s s (%s)" % (s["first_slowdown_s"], s["first_slowdown_reason"]))
    if s["slowdown_temperature_c"] is not None:
        check(s["max_temperature_c"] < s["slowdown_temperature_c"],
              "soak: %s C at most, slowdown at %s C" % (s["max_temperature_c"],
                                                       s["slowdown_temperature_c"]))


def main(argv):
    if len(argv) != 4:
        print(__doc__)
        return 2
    known_answer(load(argv[1]))
    memtest(load(argv[2]), 0.9)
    soak(load(argv[3]))
    print("%d check(s) failed" % len(failed) if failed else "every check passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
