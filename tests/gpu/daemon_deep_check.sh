#!/usr/bin/env bash
# daemon_deep_check.sh BUILD_DIR - the deep suite (health_deep: the health
# members, then known_answer, memtest, soak) through gpubenchd on every GPU, as a
# lab's weekly canary runs it:
#   curl -H 'Content-Type: application/json' -d '{"benchmark":"health_deep","device":"all"}' .../runs
# then every run of the batch to its end, the suite's wall time, each run's
# status, validity and failed checks, the card's coverage and
# `gpubench check`.  Run from the repository root on the lent machine; LIBS
# is a folder of shared libraries for gpubenchd, the worker and the client.
# Writes at most 6 files to $OUT; it changes no setting of the card.
set -u
build=${1:-build}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
port=${PORT:-18558}
name=deep
timeout=600
. "$(dirname "$0")/daemon_suite.sh"
run_suite health_deep weekly 900
python3 - "$out/deep_runs.ndjson" <<'PY' | tee -a "$log"
import json, sys
from datetime import datetime
t = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
for r in sorted((json.loads(l) for l in open(sys.argv[1]) if l.strip()), key=lambda r: r["started_at"] or ""):
    took = t(r["finished_at"]) - t(r["started_at"]) if r.get("started_at") and r.get("finished_at") else float("nan")
    v = r.get("validity") or {}
    failed = [c["row"] for c in (r.get("checks") or []) if not c.get("pass")]
    print("%-15s %-6s %5.1f s valid=%s reasons=%s failed_checks=%s" % (r["benchmark"], r["status"], took,
          v.get("valid"), [x.get("code") for x in v.get("reasons", [])], failed))
    s = (r.get("results") or {}).get("summary") or {}
    if r["benchmark"] == "known_answer":
        print("   mismatches", s.get("mismatches"), "sms", s.get("sms_covered"), "/", s.get("sm_count"))
    if r["benchmark"] == "memtest":
        print("   errors", s.get("errors"), "share_of_memory", s.get("share_of_memory"), "memcpy GB/s", s.get("memcpy_gbps"),
              [(x["label"], round(x.get("value") or 0), x.get("share_of_memcpy")) for x in r["results"]["rows"]])
    if r["benchmark"] == "soak":
        print("   sustained", s.get("sustained_share"), "max temp", s.get("max_temperature_c"), "slowdown at",
              s.get("first_slowdown_s"), s.get("first_slowdown_reason"), "power_capped", s.get("power_capped"))
PY
curl -s "$base/coverage" >"$out/coverage.json"
LD_LIBRARY_PATH=${LIBS:-} "$build/bin/gpubench" --url "$base" check 2>&1 | tee -a "$log"
say "check exit: ${PIPESTATUS[0]}"
kill -TERM "$pid"
wait "$pid"
say "daemon exit: $?"
